#!/usr/bin/env bash
# Log joint against sampling seconds, PyIBP beside each madbayes IBP sampler (issue 11,
# item 4), as curves: docs/img/ibp_logjoint_vs_seconds.png, the data behind it in
# docs/ibp_logjoint_vs_seconds.csv, and the table of docs/results.md ("IBP samplers and
# MEIBP", "Log joint against seconds") on stdout.
#
#   PYIBP_DIR=/tmp/pyibp-src bash bench/run_ibp_curves.sh [NS] [SWEEPS] [SEED]
#   (defaults: NS 100,1000, SWEEPS 1000, SEED 1)
#
# PYIBP_DIR and PYIBP_PYTHON as for bench/run_pyibp.sh (a Python with numpy, scipy and
# matplotlib). Per N: block images (`madbayes gen blocks --n N --sigma-x 0.5 --seed SEED`),
# centred once into x.csv that both sides read; α = 1, σ_X = 0.5, σ_A = 1. PyIBP runs SWEEPS
# sweeps from its own prior draw (seed SEED), hyperparameters fixed; its trace has the
# sampling time (sampleZ) and logLike() after every sweep. madbayes runs
# examples/bench_ibp_curves.rs: each sampler (collapsed, semi-collapsed, accelerated), one
# chain of SWEEPS sweeps on one thread (seed SEED), in three forms — defaults (as it comes:
# α, σ_X, σ_A resampled), plain (D-V&G's sampler at the fixed α, σ's: PyIBP's target) and
# moves (the defaults' moves at the fixed α, σ's) — every sweep's Z scored at α = 1,
# σ_X = 0.5, σ_A = 1 (the quantity of PyIBP's logLike()); times are sampling time only on
# both sides. A finished PyIBP chain of the same length on the same x.csv is kept (it is the
# slow side). `uptime` is printed before and after each side.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
ns="${1:-100,1000}"
sweeps="${2:-1000}"
seed="${3:-1}"
py="${PYIBP_PYTHON:-$root/bench/.venv/bin/python}"
if [ -z "${PYIBP_DIR:-}" ] || [ ! -f "$PYIBP_DIR/PyIBP.py" ]; then
    echo "run_ibp_curves.sh: set PYIBP_DIR to a folder holding PyIBP.py (davidandrzej/PyIBP)" >&2
    exit 2
fi
if ! "$py" -c "import numpy, scipy, matplotlib" 2>/dev/null; then
    echo "run_ibp_curves.sh: $py lacks numpy, scipy or matplotlib; set PYIBP_PYTHON to a Python that has them" >&2
    exit 2
fi
cargo build --release --bin madbayes --example bench_ibp_curves
mb="$root/target/release/madbayes"
curves="$root/target/release/examples/bench_ibp_curves"
out="$root/bench/out/ibp_curves"
mkdir -p "$out"
stamp() { echo "## $1 — $(date -u +%FT%TZ) — uptime:$(uptime | sed 's/.*load average/ load average/')" >&2; }
runs=()
for n in ${ns//,/ }; do
    d="$out/n$n-seed$seed"
    mkdir -p "$d"
    "$mb" gen blocks --n "$n" --sigma-x 0.5 --seed "$seed" --out "$d/gen" >/dev/null
    "$py" -c "import numpy as np, sys
x = np.loadtxt(sys.argv[1], delimiter=',', ndmin=2)
np.savetxt(sys.argv[2], x - x.mean(axis=0), delimiter=',', fmt='%.17g')" "$d/gen/x.csv" "$d/x.csv"
    if [ -f "$d/pyibp/trace.csv" ] && [ "$(tail -n 1 "$d/pyibp/trace.csv" | cut -d, -f1)" = "$sweeps" ] \
        && cmp -s "$d/x.csv" "$d/pyibp.x.csv"; then
        echo "N = $n: keeping the PyIBP chain in $d/pyibp" >&2
    else
        stamp "N = $n: PyIBP, $sweeps sweeps"
        "$py" bench/pyibp_driver.py --pyibp "$PYIBP_DIR" --x "$d/x.csv" --alpha 1 --sigma-x 0.5 \
            --sigma-a 1 --sweeps "$sweeps" --seed "$seed" --save-at "$sweeps" --out "$d/pyibp"
        cp "$d/x.csv" "$d/pyibp.x.csv"
    fi
    stamp "N = $n: madbayes"
    "$curves" --x "$d/x.csv" --alpha 1 --sigma-x 0.5 --sigma-a 1 --sweeps "$sweeps" \
        --seed "$seed" --forms defaults,plain,moves --out "$d/madbayes.csv"
    stamp "N = $n: done"
    runs+=("$n=$d")
done
"$py" bench/ibp_curves.py --out-csv docs/ibp_logjoint_vs_seconds.csv \
    --out-png docs/img/ibp_logjoint_vs_seconds.png "${runs[@]}"
