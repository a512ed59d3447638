#!/usr/bin/env bash
# Log joint against sampling seconds, PyIBP beside each madbayes IBP sampler (issue 11,
# item 4), as curves: docs/img/ibp_logjoint_vs_seconds.png, the data behind it in
# docs/ibp_logjoint_vs_seconds.csv (seed 1; other seeds write bench/out/ibp_curves/), and the tables of docs/results.md ("IBP samplers and
# MEIBP", "Log joint against seconds") on stdout.
#
#   PYIBP_DIR=/tmp/pyibp-src bash bench/run_ibp_curves.sh [DATA] [SWEEPS] [SEED]
#   (defaults: DATA 100,1000, SWEEPS 1000, SEED 1; CLOCK=cpu|wall, default cpu)
#
# PYIBP_DIR and PYIBP_PYTHON as for bench/run_pyibp.sh (a Python with numpy, scipy, Pillow
# and matplotlib). DATA is a comma-separated list of data sets:
#   N         block images (`madbayes gen blocks --n N --sigma-x 0.5 --seed SEED`), centred
#             once into x.csv that both sides read; α = 1, σ_X = 0.5, σ_A = 1;
#   tabletop  the tabletop photos as the MAD-Bayes experiments prepare them (PCA 100,
#             bench/tabletop_pca.py, from ../shared/data/tabletop); α = 1, σ_X = 0.5,
#             σ_A = 0.71.
# PyIBP runs SWEEPS sweeps from its own prior draw (seed SEED), hyperparameters fixed; its
# trace has the sampling time (sampleZ) and logLike() after every sweep. madbayes runs
# examples/bench_ibp_curves.rs: each sampler (collapsed, semi-collapsed, accelerated), one
# chain of SWEEPS sweeps on one thread (seed SEED + 1000: `gen blocks` draws the data from the
# stream a chain of seed SEED would use), in four forms — defaults (as it comes:
# α, σ_X, σ_A resampled), plain (D-V&G's sampler at the fixed α, σ's: PyIBP's target),
# moves (the defaults' moves at the fixed α, σ's) and prior (moves, started from a prior draw
# as PyIBP is) — every sweep's Z scored at the data set's
# fixed α, σ_X, σ_A (the quantity of PyIBP's logLike()); times are sampling time only on
# both sides, by the thread's CPU time with CLOCK=cpu (a loaded machine hardly moves it) or
# by wall time with CLOCK=wall. A finished PyIBP chain of the same length, clock and data is
# kept (it is the slow side). `uptime` is printed before and after each side.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
sets="${1:-100,1000}"
sweeps="${2:-1000}"
seed="${3:-1}"
clock="${CLOCK:-cpu}"
py="${PYIBP_PYTHON:-$root/bench/.venv/bin/python}"
if [ -z "${PYIBP_DIR:-}" ] || [ ! -f "$PYIBP_DIR/PyIBP.py" ]; then
    echo "run_ibp_curves.sh: set PYIBP_DIR to a folder holding PyIBP.py (davidandrzej/PyIBP)" >&2
    exit 2
fi
if ! "$py" -c "import numpy, scipy, matplotlib, PIL" 2>/dev/null; then
    echo "run_ibp_curves.sh: $py lacks numpy, scipy, matplotlib or Pillow; set PYIBP_PYTHON to a Python that has them" >&2
    exit 2
fi
cargo build --release --bin madbayes --example bench_ibp_curves
mb="$root/target/release/madbayes"
curves="$root/target/release/examples/bench_ibp_curves"
out="$root/bench/out/ibp_curves"
mkdir -p "$out"
stamp() { echo "## $1 — $(date -u +%FT%TZ) — uptime:$(uptime | sed 's/.*load average/ load average/')" >&2; }
runs=()
for set in ${sets//,/ }; do
    d="$out/$set-seed$seed-$clock"
    mkdir -p "$d"
    if [ "$set" = tabletop ]; then
        images="$root/../shared/data/tabletop/images"
        if [ ! -d "$images" ]; then
            echo "run_ibp_curves.sh: $images is missing; tabletop needs ../shared/data beside the checkout" >&2
            exit 2
        fi
        "$py" bench/tabletop_pca.py --images "$images" --out "$d/x.npy"
        "$py" -c "import numpy as np, sys
np.savetxt(sys.argv[2], np.load(sys.argv[1]), delimiter=',', fmt='%.17g')" "$d/x.npy" "$d/x.csv"
        sigma_a=0.71
        echo "tabletop photos, PCA 100|1|0.5|$sigma_a" >"$d/setting.txt"
    else
        "$mb" gen blocks --n "$set" --sigma-x 0.5 --seed "$seed" --out "$d/gen" >/dev/null
        "$py" -c "import numpy as np, sys
x = np.loadtxt(sys.argv[1], delimiter=',', ndmin=2)
np.savetxt(sys.argv[2], x - x.mean(axis=0), delimiter=',', fmt='%.17g')" "$d/gen/x.csv" "$d/x.csv"
        sigma_a=1
        echo "block images, N = $set, noise 0.5, centred|1|0.5|$sigma_a" >"$d/setting.txt"
    fi
    if [ -f "$d/pyibp/trace.csv" ] && [ "$(tail -n 1 "$d/pyibp/trace.csv" | cut -d, -f1)" = "$sweeps" ] \
        && cmp -s "$d/x.csv" "$d/pyibp.x.csv"; then
        echo "$set: keeping the PyIBP chain in $d/pyibp" >&2
    else
        stamp "$set: PyIBP, $sweeps sweeps"
        "$py" bench/pyibp_driver.py --pyibp "$PYIBP_DIR" --x "$d/x.csv" --alpha 1 --sigma-x 0.5 \
            --sigma-a "$sigma_a" --sweeps "$sweeps" --seed "$seed" --save-at "$sweeps" \
            --clock "$clock" --out "$d/pyibp"
        cp "$d/x.csv" "$d/pyibp.x.csv"
    fi
    stamp "$set: madbayes"
    "$curves" --x "$d/x.csv" --alpha 1 --sigma-x 0.5 --sigma-a "$sigma_a" --sweeps "$sweeps" \
        --seed "$((seed + 1000))" --forms defaults,plain,moves,prior --clock "$clock" \
        --out "$d/madbayes.csv"
    stamp "$set: done"
    runs+=("$set=$d")
done
# The documented plot and data are seed 1's; other seeds go beside their runs.
if [ "$seed" = 1 ]; then
    csv=docs/ibp_logjoint_vs_seconds.csv png=docs/img/ibp_logjoint_vs_seconds.png
else
    csv="$out/curves-seed$seed-$clock.csv" png="$out/curves-seed$seed-$clock.png"
fi
"$py" bench/ibp_curves.py --clock "$clock" --out-csv "$csv" --out-png "$png" "${runs[@]}"
