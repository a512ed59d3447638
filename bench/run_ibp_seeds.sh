#!/usr/bin/env bash
# The IBP comparison with PyIBP over several data seeds (issue 11, item 4; docs/ibp.md,
# "Beside PyIBP over five data seeds"): for each seed, bench/run_ibp_curves.sh (data, PyIBP's
# chain unless one is kept, madbayes' four forms as curves), then `madbayes fit` as it comes
# (four chains, 1000 sweeps, seed = data seed + 1000) for each sampler, its written Z scored at
# the data set's fixed α, σ_X, σ_A by bench/pyibp_score.py; then one table
# (bench/ibp_seeds.py) on stdout.
#
#   PYIBP_DIR=/tmp/pyibp-src bash bench/run_ibp_seeds.sh [DATA] [SEEDS]
#   (defaults: DATA 100,500, SEEDS 1,3,4,5; DATA as for run_ibp_curves.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
sets="${1:-100,500}"
seeds="${2:-1,3,4,5}"
clock="${CLOCK:-cpu}"
py="${PYIBP_PYTHON:-$root/bench/.venv/bin/python}"
dirs=()
for seed in ${seeds//,/ }; do
    CLOCK="$clock" bash bench/run_ibp_curves.sh "$sets" 1000 "$seed" >/dev/null
    for set in ${sets//,/ }; do
        d="$root/bench/out/ibp_curves/$set-seed$seed-$clock"
        sigma_a=1
        [ "$set" = tabletop ] && sigma_a=0.71
        echo "algo,k,log_joint" >"$d/fit4.csv"
        for algo in ibp-gibbs ibp-semicollapsed ibp-accelerated; do
            "$root/target/release/madbayes" fit "$d/x.csv" --algo "$algo" --seed "$((seed + 1000))" \
                --threads 2 --out "$d/fit4-$algo" >/dev/null
            "$py" bench/pyibp_score.py --x "$d/x.csv" --alpha 1 --sigma-x 0.5 --sigma-a "$sigma_a" \
                "$d/fit4-$algo/z.csv" | "$py" -c "import json, sys
r = json.loads(sys.stdin.readline())
print(f\"$algo,{r['k']},{r['score']}\")" >>"$d/fit4.csv"
        done
        dirs+=("$d")
    done
done
"$py" bench/ibp_seeds.py "${dirs[@]}"
