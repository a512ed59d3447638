#!/usr/bin/env bash
# Clustering benchmarks of madbayes; results are appended to bench/out/<section>.log.
#
#   bash bench/setup.sh                      # once: bench/.venv with scikit-learn
#   bash bench/run_clustering.sh [section]   # section: lloyd | seed | dp | scaling | memory | all
#
# Every section prints `uptime` before and after itself: re-run when the load average is
# above ~1.5 (the machine has 2 cores), the timings are not trustworthy then.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/bench/out"
mkdir -p "$out"
section="${1:-all}"

cargo build --release --example bench_clustering
bin="$root/target/release/examples/bench_clustering"

stamp() { echo "## $1 — $(date -u +%FT%TZ) — uptime:$(uptime | sed 's/.*load average/ load average/')"; }

# 1. Lloyd per iteration, madbayes vs scikit-learn's lloyd and elkan (same data, init,
#    iterations, threads). BEFORE=path/to/an/older/bench_clustering adds that build's rounds.
run_lloyd() {
    stamp "lloyd: start"
    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 "$root/bench/.venv/bin/python" \
        "$root/bench/compare_lloyd.py" --binary "$bin" --out "$out" \
        --sizes 20000x50x100,200000x50x100 --threads 1,2 --max-iter 20 --reps 3 --rounds 2 \
        --elkan ${BEFORE:+--before "$BEFORE"}
    stamp "lloyd: end"
}

# 1b. Greedy k-means++ seeding alone, madbayes vs scikit-learn's kmeans_plusplus (same data,
#     same rule, 2 + ⌊ln K⌋ candidates; different random streams, so potentials are compared
#     as distributions over seeds).
run_seed() {
    stamp "seed: start"
    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 "$root/bench/.venv/bin/python" \
        "$root/bench/compare_seeding.py" --binary "$bin" --out "$out" \
        --sizes 200000x50x100 --threads 1,2 --reps 1 --rounds 3 --seeds 2
    stamp "seed: end"
}

# 2. DP-means vs K-means at the K DP-means finds: separated blobs (100 true centers, DP-means
#    converges in 2 sweeps), then overlapping blobs (more sweeps, closer to steady state).
run_dp() {
    stamp "dp-vs-km: start"
    for t in 1 2; do
        "$bin" dp-vs-km --n 200000 --d 50 --k-true 100 --std 1 --penalty 1000 \
            --threads "$t" --reps 3 --max-iter 20
    done
    for t in 1 2; do
        "$bin" dp-vs-km --n 200000 --d 50 --k-true 100 --std 3 --penalty 2500 \
            --threads "$t" --reps 3 --max-iter 20
    done
    stamp "dp-vs-km: end"
}

# 3. Scaling in N (one thread, the same generator and penalty).
run_scaling() {
    stamp "scaling: start"
    for n in 25000 50000 100000 200000 400000; do
        "$bin" dp-vs-km --n "$n" --d 50 --k-true 100 --std 1 --penalty 1000 \
            --threads 1 --reps 3 --max-iter 20
    done
    stamp "scaling: end"
}

# 4. Peak RSS with N = 1e6, D = 100, K = 1000 (data generated inside the example).
run_memory() {
    stamp "memory: start"
    "$bin" memory --algo kmeans --n 1000000 --d 100 --k 1000 --std 1 --max-iter 3 --threads 2
    "$bin" memory --algo dpmeans --n 1000000 --d 100 --k 1000 --std 1 --penalty 2000 \
        --max-iter 2 --threads 2
    stamp "memory: end"
}

case "$section" in
    lloyd) run_lloyd 2>&1 | tee -a "$out/lloyd.log" ;;
    seed) run_seed 2>&1 | tee -a "$out/seed.log" ;;
    dp) run_dp 2>&1 | tee -a "$out/dp.log" ;;
    scaling) run_scaling 2>&1 | tee -a "$out/scaling.log" ;;
    memory) run_memory 2>&1 | tee -a "$out/memory.log" ;;
    all)
        run_lloyd 2>&1 | tee -a "$out/lloyd.log"
        run_seed 2>&1 | tee -a "$out/seed.log"
        run_dp 2>&1 | tee -a "$out/dp.log"
        run_scaling 2>&1 | tee -a "$out/scaling.log"
        run_memory 2>&1 | tee -a "$out/memory.log"
        ;;
    *) echo "unknown section $section (lloyd | seed | dp | scaling | memory | all)" >&2; exit 2 ;;
esac
