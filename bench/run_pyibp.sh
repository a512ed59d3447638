#!/usr/bin/env bash
# madbayes' IBP samplers beside PyIBP (issue 11, item 4), written up in docs/ibp.md ("Beside
# PyIBP") and summarised in docs/results.md.
#
#   PYIBP_DIR=/tmp/pyibp-src bash bench/run_pyibp.sh [N] [SWEEPS] [SEEDS]
#   (defaults: N 1000, SWEEPS 300, SEEDS 1; SEEDS comma-separated)
#
# PYIBP_DIR is a folder holding PyIBP.py (davidandrzej/PyIBP on GitHub; it is not on PyPI),
# kept outside the repository; PYIBP_PYTHON a Python with numpy and scipy (matplotlib for
# the plot), default bench/.venv/bin/python (`bash bench/setup.sh`, then
# `bench/.venv/bin/pip install scipy matplotlib`). bench/pyibp_driver.py patches PyIBP for
# current NumPy at run time.
#
# Per seed: block images (`madbayes gen blocks --n N --sigma-x 0.5 --seed SEED`, p = 0.5),
# centred (column means subtracted) once into x.csv that both sides read; the setting of the
# issue: α = 1, σ_X = 0.5, σ_A = 1. PyIBP runs one chain of SWEEPS sweeps from its own prior
# draw (seed SEED), hyperparameters fixed. madbayes runs each sampler (ibp-gibbs,
# ibp-semicollapsed, ibp-accelerated), one chain on one thread, in three forms:
#   plain     `--plain` at α, σ_X, σ_A fixed as above (D-V&G's sampler: empty start, no
#             split–merge, no block update);
#   moves     the defaults' moves (10 split–merge attempts per sweep, 3-feature block update)
#             at α, σ_X, σ_A fixed as above — the same target distribution as PyIBP's;
#   defaults  `madbayes fit` as it comes (α, σ_X, σ_A resampled from their default starts).
# Each madbayes form is run to every sweep count of the schedule 1, 3, 10, 30, 100, 300, 1000
# up to SWEEPS (a chain with the same seed is the same chain, so each run is the prefix of the
# longest), so that its Z at those sweeps exists as a file. Every Z — PyIBP's snapshots, each
# madbayes run's final Z, the true Z — is then scored at α = 1, σ_X = 0.5, σ_A = 1 by
# bench/pyibp_score.py, which shares no code with either side; bench/pyibp_compare.py prints
# the tables and draws bench/out/pyibp_nN/log_joint_vs_seconds.png. Times are sampling time
# only (PyIBP: sampleZ; madbayes: trace.csv `seconds`), on one core; `uptime` is printed
# before and after.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
n="${1:-1000}"
sweeps="${2:-300}"
seeds="${3:-1}"
py="${PYIBP_PYTHON:-$root/bench/.venv/bin/python}"
if [ -z "${PYIBP_DIR:-}" ] || [ ! -f "$PYIBP_DIR/PyIBP.py" ]; then
    echo "run_pyibp.sh: set PYIBP_DIR to a folder holding PyIBP.py (davidandrzej/PyIBP)" >&2
    exit 2
fi
if ! "$py" -c "import numpy, scipy" 2>/dev/null; then
    echo "run_pyibp.sh: $py lacks numpy or scipy; set PYIBP_PYTHON to a Python that has them" >&2
    exit 2
fi
cargo build --release --bin madbayes
mb="$root/target/release/madbayes"
out="$root/bench/out/pyibp_n$n"
mkdir -p "$out"
hyper=(--alpha 1 --sigma-x 0.5 --sigma-a 1)
schedule=()
for t in 1 3 10 30 100 300 1000; do
    if [ "$t" -lt "$sweeps" ]; then schedule+=("$t"); fi
done
schedule+=("$sweeps")
save_at="$(IFS=,; echo "${schedule[*]}")"

stamp() { echo "## $1 — $(date -u +%FT%TZ) — uptime:$(uptime | sed 's/.*load average/ load average/')"; }

for seed in ${seeds//,/ }; do
    d="$out/seed$seed"
    mkdir -p "$d"
    "$mb" gen blocks --n "$n" --sigma-x 0.5 --seed "$seed" --out "$d/gen" >/dev/null
    "$py" -c "import numpy as np, sys
x = np.loadtxt(sys.argv[1], delimiter=',', ndmin=2)
np.savetxt(sys.argv[2], x - x.mean(axis=0), delimiter=',', fmt='%.17g')" "$d/gen/x.csv" "$d/x.csv"
    # A finished PyIBP chain of this length on the same x.csv is kept (it is the slow side).
    if [ -f "$d/pyibp/z.csv" ] && [ "$(tail -n 1 "$d/pyibp/trace.csv" | cut -d, -f1)" = "$sweeps" ]; then
        echo "seed $seed: keeping the PyIBP chain in $d/pyibp"
    else
        stamp "seed $seed: PyIBP, $sweeps sweeps"
        "$py" bench/pyibp_driver.py --pyibp "$PYIBP_DIR" --x "$d/x.csv" "${hyper[@]}" \
            --sweeps "$sweeps" --seed "$seed" --save-at "$save_at" --out "$d/pyibp"
    fi
    stamp "seed $seed: madbayes"
    for algo in ibp-gibbs ibp-semicollapsed ibp-accelerated; do
        for form in plain moves defaults; do
            case "$form" in
                plain) args=(--plain "${hyper[@]}") ;;
                moves) args=("${hyper[@]}") ;;
                defaults) args=() ;;
            esac
            for t in "${schedule[@]}"; do
                "$mb" fit "$d/x.csv" --algo "$algo" --iterations "$t" --chains 1 --threads 1 \
                    --draws 1 --seed "$seed" --quiet --out "$d/madbayes/$algo-$form/$t" \
                    ${args[@]+"${args[@]}"} 2>>"$d/madbayes.stderr"
            done
        done
    done
    stamp "seed $seed: done"
done
"$py" bench/pyibp_compare.py --out "$out" --seeds "$seeds" --sweeps "$sweeps"
