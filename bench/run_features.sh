#!/usr/bin/env bash
# Feature-family benchmarks of madbayes; results are appended to bench/out/<section>.log.
#
#   bash bench/setup.sh                    # once: bench/.venv (numpy, Pillow for the photos)
#   bash bench/run_features.sh [section]   # section: sweep | restarts | defaults | tabletop | alternate | authors | family | all
#
# `sweep`: one BP-means sweep against one X Aᵀ GEMM of the same shape (MEIBP synthetic data,
# N = 100 000, D = 1 000, K = 50), on 1 and 2 threads, two rounds (with BEFORE set, that
# build and this one alternate in each round).
# `restarts`: the tabletop photos reduced to 100 × 100 (bench/tabletop_pca.py), the paper's
# numbers of restarts, on 1 and 2 threads: time per run and parallel efficiency.
# `defaults`: the measurements behind the defaults (docs/defaults.md): the paper's algorithms
# (plain) against the defaults on the tabletop photos (P = 20), the dice pictures (K-features,
# K = 1..4), generated noisy block images (N = 100 and 1000) and Gaussian blobs (DP-means):
# best objective, runs at the best, CPU time per run. About 15 min of CPU on this machine.
# `tabletop`: issue 14's BP-means target on the tabletop photos (P = 20, one thread): the
# defaults with 300 and with 1000 restarts (the issue's count; restarts that reach a state
# another restart reached share its refinement round, so the cost per restart falls as they
# grow) and the paper's algorithm (--plain) with 3000, five times each, alternating; CPU time
# per restart and the restarts at 261.2804. Set BEFORE=path/to/an/older
# bench_features to time it in the same rounds (alternating with this build); `sweep` takes
# BEFORE too.
# `authors`: the tabletop target beside its peer, the authors' BP-means in Octave
# (github.com/tbroderick/bp-means, GPLv3, kept outside this repository: AUTHORS_CODE=path to
# its code/ folder; Debian's octave-cli and octave-statistics): bench/tabletop_pca.py's
# matrix (the authors' preprocessing), 1 000 restarts of their code, then madbayes' defaults
# (1 000 restarts) and `--plain` (3 000) on that matrix and on its own (`--data tabletop`),
# three rounds, one thread each.
# `alternate`: the tabletop defaults (1 000 restarts) and `--plain` (3 000) of BEFORE and this
# build in ROUNDS (default 21) rounds, the two back to back in each round and in turn first;
# then the median and the smallest CPU time per restart of each build, and the median of the
# rounds' ratios (this build ÷ BEFORE): differences of a few percent, which the five rounds
# of `tabletop` do not resolve on a noisy host, where the host's speed drifts by more than
# that between rounds but little within one (docs/speed.md §2, 2026-12-04).
# `family`: the other feature algorithms' defaults on small data, as docs/speed.md §2 lists
# them: collapsed BP-means on the tabletop (1 000 restarts, one thread), BP-means on 1 000
# generated noisy block images (P = 300, 40 restarts, one thread), K-features on the dice
# (K = 4, 200 restarts, two threads) and stepwise K-features on the tabletop (P = 20, 50
# restarts, two threads); three alternating rounds with BEFORE, and each build's objectives
# written to bench/out/family-*.objs for a comparison of bits.
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
    # A sweep is timed as the difference of two fits (8 sweeps and 1). Each fit's seeding
    # forms its residuals as a copy of X (800 MB here); the allocator hands that memory back
    # to the system 10 ms after it is freed, and the kernel's faulting it in again took
    # 40–800 ms per copy from fit to fit, which the difference took for sweep time
    # (docs/speed.md §3). Purging off, each fit reuses the memory of the one before.
    for round in 1 2; do
        for t in 1 2; do
            for b in ${BEFORE:-} "$bin"; do
                echo "round $round, threads $t: $b"
                MIMALLOC_PURGE_DELAY=-1 "$b" sweep-vs-gemm --n 100000 --d 1000 --k 50 --prob 0.4 --sigma 1 \
                    --penalty 5000 --iters 8 --threads "$t" --reps 3
            done
        done
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

run_defaults() {
    stamp "defaults: start"
    local q="$bin quality"
    # BP-means on the tabletop photos prepared as the authors do, the issue's P = 20.
    for cfg in "plain --plain true" "plain-residual --plain true --seeding residual" \
        "defaults" "defaults-residual --seeding residual"; do
        set -- $cfg
        local label=$1
        shift
        $q --data tabletop --algo bp-means --penalty 20 --restarts 1000 --target 261.2805 \
            --label "$label" "$@"
    done
    $q --data tabletop --algo collapsed-bp-means --penalty 20 --restarts 300 --plain true --label plain
    $q --data tabletop --algo collapsed-bp-means --penalty 20 --restarts 300 --label defaults
    $q --data tabletop --algo stepwise-k-features --penalty 20 --restarts 300 --plain true --label plain
    $q --data tabletop --algo stepwise-k-features --penalty 20 --restarts 100 --label defaults
    # K-features on the dice pictures.
    for k in 1 2 3 4; do
        $q --data dice --algo k-features --k "$k" --restarts 1000 --plain true --label plain
        $q --data dice --algo k-features --k "$k" --restarts 1000 --plain true --seeding residual \
            --label plain-residual
        $q --data dice --algo k-features --k "$k" --restarts 1000 --label defaults
    done
    # BP-means on noisy block images: the issue's P = 30 (N = 100) and 300 (N = 1000), and
    # P = 4 sigma^2 N, where the four shapes are the optimum.
    for g in 0 1 2; do
        for p in 30 100; do
            $q --data blocks --n 100 --sigma 0.5 --gen-seed "$g" --algo bp-means --penalty "$p" \
                --restarts 1000 --plain true --label plain
            $q --data blocks --n 100 --sigma 0.5 --gen-seed "$g" --algo bp-means --penalty "$p" \
                --restarts 1000 --label defaults
            $q --data blocks --n 100 --sigma 0.5 --gen-seed "$g" --algo stepwise-k-features \
                --penalty "$p" --restarts 300 --plain true --label plain
            $q --data blocks --n 100 --sigma 0.5 --gen-seed "$g" --algo collapsed-bp-means \
                --penalty "$p" --restarts 300 --plain true --label plain
            $q --data blocks --n 100 --sigma 0.5 --gen-seed "$g" --algo collapsed-bp-means \
                --penalty "$p" --restarts 300 --label defaults
        done
    done
    for p in 300 1000; do
        $q --data blocks --n 1000 --sigma 0.5 --gen-seed 0 --algo bp-means --penalty "$p" \
            --restarts 100 --plain true --label plain
        $q --data blocks --n 1000 --sigma 0.5 --gen-seed 0 --algo bp-means --penalty "$p" \
            --restarts 100 --label defaults
        $q --data blocks --n 1000 --sigma 0.5 --gen-seed 0 --algo stepwise-k-features \
            --penalty "$p" --restarts 100 --plain true --label plain
    done
    # DP-means on the demo's blobs (P = 50) and on 10^5 points in 10 dimensions (P = 10^4).
    for r in false true; do
        $bin quality-dp --algo dp-means --penalty 50 --restarts 1000 --refine "$r" \
            --label "refine=$r"
        $bin quality-dp --algo collapsed-dp-means --penalty 50 --restarts 1000 --refine "$r" \
            --label "refine=$r"
        $bin quality-dp --algo dp-means --penalty 10000 --restarts 10 --refine "$r" \
            --n 100000 --d 10 --k 20 --sd 1 --label "refine=$r"
    done
    stamp "defaults: end"
}

run_tabletop() {
    stamp "tabletop: start"
    local q=(quality --data tabletop --algo bp-means --penalty 20 --threads 1 --target 261.2805)
    for round in 1 2 3 4 5; do
        for b in ${BEFORE:-} "$bin"; do
            "$b" "${q[@]}" --restarts 300 --label "defaults round $round $b"
            "$b" "${q[@]}" --restarts 1000 --label "defaults-1000 round $round $b"
            "$b" "${q[@]}" --restarts 3000 --plain true --label "plain round $round $b"
        done
    done
    stamp "tabletop: end"
}

run_authors() {
    stamp "authors: start"
    : "${AUTHORS_CODE:?set AUTHORS_CODE to the code/ folder of a bp-means checkout}"
    local npy="$out/tabletop_pca100.npy" csv="$out/tabletop_pca100.csv"
    "$root/bench/.venv/bin/python" "$root/bench/tabletop_pca.py" \
        --images "$root/../shared/data/tabletop/images" --out "$npy" --csv "$csv"
    OMP_NUM_THREADS=1 octave-cli --no-gui -q "$root/bench/bp_means_authors.m" "$AUTHORS_CODE" \
        "$csv" 20 1000 1
    local q=(quality --algo bp-means --penalty 20 --threads 1)
    for round in 1 2 3; do
        for data in "$npy" tabletop; do
            "$bin" "${q[@]}" --data "$data" --restarts 1000 --label "defaults round $round"
            "$bin" "${q[@]}" --data "$data" --restarts 3000 --plain true \
                --label "plain round $round"
        done
    done
    stamp "authors: end"
}

run_alternate() {
    stamp "alternate: start"
    : "${BEFORE:?set BEFORE to an older bench_features}"
    local q=(quality --data tabletop --algo bp-means --penalty 20 --threads 1)
    local setting
    for setting in "--restarts 1000" "--restarts 3000 --plain true"; do
        for round in $(seq "${ROUNDS:-21}"); do
            # The two builds run back to back: this one first in odd rounds, BEFORE first in
            # even ones, so that neither always follows the other.
            local order=("$BEFORE" "$bin")
            if [ $((round % 2)) -eq 1 ]; then order=("$bin" "$BEFORE"); fi
            for b in "${order[@]}"; do
                # shellcheck disable=SC2086 # the setting is several words
                "$b" "${q[@]}" $setting --label "alternate round $round $b"
            done
        done | tee /dev/stderr | python3 -c '
import json, statistics, sys
times = {}
for line in sys.stdin:
    if line.startswith("{"):
        run = json.loads(line)
        _, _, rnd, build = run["label"].split(" ", 3)
        times.setdefault(build, {})[int(rnd)] = run["cpu_ms_per_run"]
for build, ms in times.items():
    v = list(ms.values())
    print(f"{build}: median {statistics.median(v):.4f} ms, smallest {min(v):.4f} ms per restart over {len(v)} rounds")
before, after = times.get(sys.argv[1], {}), times.get(sys.argv[2], {})
ratios = [after[r] / before[r] for r in before if r in after]
if ratios:
    faster = sum(1 for x in ratios if x < 1)
    print(f"this build / BEFORE, round by round: median {statistics.median(ratios):.3f}, faster in {faster} of {len(ratios)} rounds")
' "$BEFORE" "$bin" | sed "s|^|$setting: |"
    done
    stamp "alternate: end"
}

run_family() {
    stamp "family: start"
    local q=(quality --restarts)
    for round in 1 2 3; do
        local i=0
        for b in ${BEFORE:-} "$bin"; do
            i=$((i + 1))
            local tag="$out/family-build$i"
            "$b" "${q[@]}" 1000 --data tabletop --algo collapsed-bp-means --penalty 20 \
                --threads 1 --label "collapsed round $round $b" --objs-out "$tag-collapsed.objs"
            "$b" "${q[@]}" 40 --data blocks --n 1000 --sigma 0.5 --gen-seed 0 --algo bp-means \
                --penalty 300 --threads 1 --label "blocks round $round $b" \
                --objs-out "$tag-blocks.objs"
            "$b" "${q[@]}" 200 --data dice --algo k-features --k 4 --threads 2 \
                --label "dice round $round $b" --objs-out "$tag-dice.objs"
            "$b" "${q[@]}" 50 --data tabletop --algo stepwise-k-features --penalty 20 \
                --threads 2 --label "stepwise round $round $b" --objs-out "$tag-stepwise.objs"
        done
    done
    stamp "family: end"
}

case "$section" in
    sweep) run_sweep 2>&1 | tee -a "$out/sweep.log" ;;
    restarts) run_restarts 2>&1 | tee -a "$out/restarts.log" ;;
    defaults) run_defaults 2>&1 | tee -a "$out/defaults.log" ;;
    tabletop) run_tabletop 2>&1 | tee -a "$out/tabletop.log" ;;
    alternate) run_alternate 2>&1 | tee -a "$out/alternate.log" ;;
    authors) run_authors 2>&1 | tee -a "$out/authors.log" ;;
    family) run_family 2>&1 | tee -a "$out/family.log" ;;
    all)
        run_sweep 2>&1 | tee -a "$out/sweep.log"
        run_restarts 2>&1 | tee -a "$out/restarts.log"
        ;;
    *) echo "unknown section $section (sweep | restarts | defaults | tabletop | alternate | authors | family | all)" >&2; exit 2 ;;
esac
