#!/usr/bin/env bash
# Feature-family benchmarks of madbayes; results are appended to bench/out/<section>.log.
#
#   bash bench/setup.sh                    # once: bench/.venv (numpy, Pillow for the photos)
#   bash bench/run_features.sh [section]   # section: sweep | restarts | all
#
# `sweep`: one BP-means sweep against one X Aᵀ GEMM of the same shape (MEIBP synthetic data,
# N = 100 000, D = 1 000, K = 50), on 1 and 2 threads.
# `restarts`: the tabletop photos reduced to 100 × 100 (bench/tabletop_pca.py), the paper's
# numbers of restarts, on 1 and 2 threads: time per run and parallel efficiency.
# Every section prints `uptime` before and after itself: on this 2-core machine, timings
# taken at a load above ~1.5 are not trustworthy.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/bench/out"
mkdir -p "$out"
section="${1:-all}"

cargo build --release --example bench_features
bin="$root/target/release/examples/bench_features"

stamp() { echo "## $1 — $(date -u +%FT%TZ) — uptime:$(uptime | sed 's/.*load average/ load average/')"; }

run_sweep() {
    stamp "sweep: start"
    for t in 1 2; do
        "$bin" sweep-vs-gemm --n 100000 --d 1000 --k 50 --prob 0.4 --sigma 1 --penalty 5000 \
            --iters 8 --threads "$t" --reps 3
    done
    stamp "sweep: end"
}

run_restarts() {
    local x="$out/tabletop_pca100.npy"
    local images="$root/../shared/data/tabletop/images"
    if [ ! -f "$x" ]; then
        if [ ! -d "$images" ]; then
            echo "restarts: skipped ($images not found)"
            return
        fi
        "$root/bench/.venv/bin/python" "$root/bench/tabletop_pca.py" --images "$images" --out "$x"
    fi
    stamp "restarts: start"
    # P = 12 on this scaling gives the paper's BP-means K = 6 (see docs/results.md).
    "$bin" restarts --x "$x" --algo bp-means --penalty 12 --restarts 1000 --threads 1,2
    "$bin" restarts --x "$x" --algo bp-means --penalty 12 --restarts 1000 --threads 1,2 --refine true
    "$bin" restarts --x "$x" --algo collapsed-bp-means --penalty 12 --restarts 1000 --threads 1,2
    "$bin" restarts --x "$x" --algo stepwise-k-features --penalty 12 --restarts 300 --threads 1,2
    stamp "restarts: end"
}

case "$section" in
    sweep) run_sweep 2>&1 | tee -a "$out/sweep.log" ;;
    restarts) run_restarts 2>&1 | tee -a "$out/restarts.log" ;;
    all)
        run_sweep 2>&1 | tee -a "$out/sweep.log"
        run_restarts 2>&1 | tee -a "$out/restarts.log"
        ;;
    *) echo "unknown section $section (sweep | restarts | all)" >&2; exit 2 ;;
esac
