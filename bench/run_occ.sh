#!/usr/bin/env bash
# OCC benchmarks of madbayes (issue 13); results are appended to bench/out/occ.log.
#
#   bash bench/run_occ.sh [section]   # section: proposals | large | timing | all
#
# Every section prints `uptime` before and after itself (the machine has 2 cores; timings
# taken at a load average above ~1.5 are not trustworthy).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/bench/out"
mkdir -p "$out"
section="${1:-all}"

cargo build --release --example bench_occ
bin="$root/target/release/examples/bench_occ"
stamp() { echo "## $1 — $(date -u +%FT%TZ) — uptime:$(uptime | sed 's/.*load average/ load average/')"; }

# 1. Proposals and rejections against N, P = 8 … 64 simulated workers, b = 64 rows per worker
#    and epoch: DP-means on 100 separated clusters in 16 dimensions (P = 100), BP-means on
#    block images (sd 0.1, P = 4).
run_proposals() {
    stamp "proposals: start"
    for n in 10000 100000 1000000; do
        "$bin" proposals --algo dp --n $n --d 16 --k-true 100 --sd 1 --penalty 100 \
            --blocks 8,16,32,64 --b 64
    done
    for n in 10000 100000 1000000; do
        "$bin" proposals --algo bp --data blocks --n $n --sd 0.1 --penalty 4 \
            --blocks 8,16,32,64 --b 64 --max-iter 20
    done
    stamp "proposals: end"
}

# 1b. The same at N = 10⁷: DP-means (1.3 GB of data, 2.1 GB peak) for 10 iterations,
#     BP-means (2.9 GB of block images, 8.3 GB peak) for 3; the proposals all come in the first.
run_large() {
    stamp "large: start"
    "$bin" proposals --algo dp --n 10000000 --d 16 --k-true 100 --sd 1 --penalty 100 \
        --blocks 8,16,32,64 --b 64 --max-iter 10
    "$bin" proposals --algo bp --data blocks --n 10000000 --sd 0.1 --penalty 4 \
        --blocks 8,16,32,64 --b 64 --max-iter 3
    stamp "large: end"
}

# 2. Seconds per iteration of the in-process runner on 1 and 2 threads, 2·10⁶ × 16 rows from
#    100 clusters, 8 blocks, epochs of 1024 rows per block (first 5 iterations).
run_timing() {
    stamp "timing: start"
    "$bin" timing --algo dp --n 2000000 --d 16 --k-true 100 --sd 1 --penalty 100 \
        --blocks 8 --b 1024 --threads 1,2 --reps 2 --max-iter 5
    stamp "timing: end"
}

case "$section" in
    proposals) run_proposals ;;
    large) run_large ;;
    timing) run_timing ;;
    all) run_proposals; run_large; run_timing ;;
    *) echo "unknown section $section (proposals | large | timing | all)" >&2; exit 2 ;;
esac 2>&1 | tee -a "$out/occ.log"
