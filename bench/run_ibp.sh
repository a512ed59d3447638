#!/usr/bin/env bash
# Benchmarks of the IBP samplers and the MAD-Bayes methods beside them; results are appended
# to bench/out/<section>.log, written up in docs/history/benchmarks-notebook.md ("IBP
# samplers") and summarised in docs/results.md.
#
#   bash bench/run_ibp.sh [section]   # section: scaling | heldout | dvg | local-search | meibp-large | all
#
# `scaling`: time per sweep of the collapsed, semi-collapsed and accelerated (W = 1) Gibbs
# samplers against N, one thread, hyperparameters fixed: data from the IBP prior as in
# Doshi-Velez & Ghahramani (2009) Table 2 (α = 2, σ_A = 2, σ_X = 0.2, D = 10), and block
# images; the log-log slope of time against N per sampler.
# `heldout`: `madbayes fit --holdout 0.1` (same split, --seed 1) of BP-means, collapsed
# BP-means, stepwise K-features and the four IBP methods on the block images (N = 1000) and
# on the MEIBP synthetic data (N = 500, D = 500, K = 20); a table and
# bench/out/heldout_vs_time_<data>.png.
# `dvg`: Doshi-Velez & Ghahramani's Tables 2 and 4 under their protocol (examples/bench_dvg.rs):
# 5 chains per sampler from prior draws of Z, single entries hidden and imputed, scores at the
# final five samples, effective N between chains; data from the prior (N = 50 … 500, 1000
# iterations) and the block images (500 iterations, σ_A = 0.75σ, σ_X = 0.25σ, α = 2).
# `local-search`: Reed & Ghahramani (2013) Figure 1 — the MEIBP local search (§3.6) against
# brute force over all 2^K rows, K = 2…12, 10 data sets of N = 500, D = 50, σ_X = 1 from the
# nonnegative linear-Gaussian model, 1000K row optimizations each, and random rows beside it;
# then the same on the binary factors of R&G §5.
# `meibp-large`: MEIBP's per-iteration time at R&G's large synthetic size (§5, Figure 3
# right: N = 10^5, D = 10^3, K = 50, p = 0.4, σ_X = 1), `madbayes fit --algo meibp --k 50`,
# 3 iterations, 1 and 2 threads; /usr/bin/time for wall time and peak memory; then
# `bench_ibp meibp-large` on the same data until Z stops changing (600 s at most).
# Every section prints `uptime` before and after itself: on this 2-core machine, timings
# taken at a load above ~1.5 are not trustworthy.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/bench/out"
mkdir -p "$out"
section="${1:-all}"

cargo build --release --example bench_ibp --example bench_dvg --bin madbayes
bin="$root/target/release/examples/bench_ibp"
mb="$root/target/release/madbayes"

stamp() { echo "## $1 — $(date -u +%FT%TZ) — uptime:$(uptime | sed 's/.*load average/ load average/')"; }

run_scaling() {
    stamp "scaling: start"
    "$bin" scaling --data prior --ns 50,100,250,500,1000,2000 --burn 10 --sweeps 20 --seed 1 --max-seconds 45
    "$bin" scaling --data blocks --ns 50,100,250,500,1000,2000 --burn 10 --sweeps 20 --seed 1 --max-seconds 45
    stamp "scaling: end"
}

# fit_all NAME INPUT PENALTY KMAX SWEEPS SIGMA_X SIGMA_A: every method on INPUT with the same
# holdout split; the IBP methods at the given σ_X, σ_A (and their default α: 2, MEIBP 3).
fit_all() {
    local name="$1" input="$2" penalty="$3" kmax="$4" sweeps="$5"
    local sig=(--sigma-x "$6" --sigma-a "$7")
    local dir="$out/heldout_$name"
    mkdir -p "$dir"
    local common=(--holdout 0.1 --seed 1 --threads 1 --quiet)
    "$mb" fit "$input" --algo bp-means --penalty "$penalty" --restarts 20 --out "$dir/bp-means" "${common[@]}"
    "$mb" fit "$input" --algo collapsed-bp-means --penalty "$penalty" --restarts 20 --out "$dir/collapsed-bp-means" "${common[@]}"
    "$mb" fit "$input" --algo stepwise-k-features --penalty "$penalty" --restarts 20 --out "$dir/stepwise-k-features" "${common[@]}"
    "$mb" fit "$input" --algo ibp-gibbs --iterations "$sweeps" "${sig[@]}" --out "$dir/ibp-gibbs" "${common[@]}"
    "$mb" fit "$input" --algo ibp-semicollapsed --iterations "$sweeps" "${sig[@]}" --out "$dir/ibp-semicollapsed" "${common[@]}"
    "$mb" fit "$input" --algo ibp-accelerated --iterations "$sweeps" "${sig[@]}" --out "$dir/ibp-accelerated" "${common[@]}"
    "$mb" fit "$input" --algo meibp --k "$kmax" --iterations "$sweeps" "${sig[@]}" --out "$dir/meibp" "${common[@]}"
    local runs=""
    for m in bp-means collapsed-bp-means stepwise-k-features ibp-gibbs ibp-semicollapsed ibp-accelerated meibp; do
        runs="${runs:+$runs,}$m=$dir/$m"
    done
    "$bin" heldout-report --runs "$runs" --out "$out/heldout_vs_time_$name.png" \
        --title "held-out log-likelihood vs time: $name"
}

run_heldout() {
    local blocks="$root/../shared/data/block-images/data.csv"
    if [ ! -f "$blocks" ]; then
        "$mb" gen blocks --n 1000 --p 0.3333333333 --sigma-x 0.2 --seed 1 --out "$out/gen_blocks"
        blocks="$out/gen_blocks/x.csv"
    fi
    "$mb" gen meibp --n 500 --d 500 --k 20 --p 0.4 --sigma-x 1 --seed 1 --npy --out "$out/gen_meibp"
    stamp "heldout: start"
    # Penalty rule (σ the true noise level, N the training rows): P = σ² (√N + √D)², the top
    # of the noise's Marchenko–Pastur spectrum, about the most one feature fitted to pure noise
    # can remove from ‖X − ZA‖², so that no noise feature pays for itself, while a true
    # feature held by m rows removes about m‖a‖² ≫ P: blocks 0.04 (√900 + 6)² ≈ 52 → 50;
    # MEIBP 1 · (√450 + √500)² ≈ 1898 → 1900. (P = Dσ² + 6σ²√(2D), the noise energy of one
    # row, was tried first on the blocks: BP-means then kept K = 98.)
    # The IBP methods get the true noise level too (the CLI's defaults, σ_X = 0.25·sd(X),
    # underestimate it on both sets and the chains then open hundreds of features), and
    # σ_A = 1 (the true loadings are 0/1).
    fit_all blocks "$blocks" 50 10 "${BLOCK_SWEEPS:-500}" 0.2 1
    stamp "heldout: blocks done"
    fit_all meibp "$out/gen_meibp/x.npy" 1900 30 "${MEIBP_SWEEPS:-30}" 1 1
    stamp "heldout: end"
}

run_dvg() {
    local dvg="$root/target/release/examples/bench_dvg"
    local images="$root/../shared/data/block-images/data.csv"
    stamp "dvg: start"
    "$dvg" --data prior --ns 50,100,250 --chains 5 --iterations 1000 --seed 1 --threads 2
    stamp "dvg: prior, prior starts done"
    "$dvg" --data prior --ns 50,100,250,500 --chains 5 --iterations 1000 --seed 1 --threads 2 \
        --start bp-means
    stamp "dvg: prior, bp-means starts done"
    if [ -f "$images" ]; then
        # At D-V&G's σ_X = 0.25σ the chains open 100–500 features on the block images; on a
        # quiet machine the three samplers took 12, 6 and 2.6 min (collapsed, semi,
        # accelerated) for 5 × 500 iterations from BP-means starts; prior starts not timed.
        local kinds="${DVG_IMAGE_KINDS:-collapsed,semi,accelerated}"
        "$dvg" --data images --images "$images" --chains 5 --iterations 500 --seed 1 \
            --threads 2 --kinds "$kinds" --start bp-means
        stamp "dvg: images, bp-means starts done"
        "$dvg" --data images --images "$images" --chains 5 --iterations 500 --seed 1 \
            --threads 2 --kinds "$kinds"
    else
        echo "dvg images: skipped ($images not found)"
    fi
    stamp "dvg: end"
}

run_local_search() {
    stamp "local-search: start"
    "$bin" meibp-local-search --ks 2,3,4,5,6,7,8,9,10,11,12 --datasets 10 --per-k 1000 --seed 1
    # The same on R&G's §5 synthetic factors (K binary factors of ceil(D/3) ones, p = 0.4).
    "$bin" meibp-local-search --ks 2,3,4,5,6,7,8,9,10,11,12 --datasets 10 --per-k 1000 --seed 1 \
        --data factors --p 0.4
    stamp "local-search: end"
}

run_meibp_large() {
    local dir="$out/meibp_large"
    mkdir -p "$dir"
    [ -f "$dir/gen/x.npy" ] ||
        "$mb" gen meibp --n 100000 --d 1000 --k 50 --p 0.4 --sigma-x 1 --seed 1 --npy --out "$dir/gen"
    for threads in 1 2; do
        stamp "meibp-large: threads $threads"
        /usr/bin/time -f "wall %e s, max RSS %M kB" "$mb" fit "$dir/gen/x.npy" --algo meibp --k 50 \
            --iterations "${LARGE_ITERATIONS:-3}" --seed 1 --threads "$threads" --quiet --out "$dir/fit_t$threads"
        cat "$dir/fit_t$threads/trace.csv"
    done
    stamp "meibp-large: long run"
    # Until Z stops changing (at most LONG_ITERATIONS), without the CLI's log p(X, Z).
    timeout 600 "$bin" meibp-large --iterations "${LONG_ITERATIONS:-150}" --threads 1 --seed 1 || true
    stamp "meibp-large: end"
}

case "$section" in
    scaling) run_scaling 2>&1 | tee -a "$out/scaling.log" ;;
    heldout) run_heldout 2>&1 | tee -a "$out/heldout.log" ;;
    dvg) run_dvg 2>&1 | tee -a "$out/dvg.log" ;;
    local-search) run_local_search 2>&1 | tee -a "$out/local_search.log" ;;
    meibp-large) run_meibp_large 2>&1 | tee -a "$out/meibp_large.log" ;;
    all)
        run_scaling 2>&1 | tee -a "$out/scaling.log"
        run_heldout 2>&1 | tee -a "$out/heldout.log"
        run_dvg 2>&1 | tee -a "$out/dvg.log"
        run_local_search 2>&1 | tee -a "$out/local_search.log"
        run_meibp_large 2>&1 | tee -a "$out/meibp_large.log"
        ;;
    *) echo "unknown section $section (scaling | heldout | dvg | local-search | meibp-large | all)" >&2; exit 2 ;;
esac
