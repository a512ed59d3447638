"""madbayes.DPMeans against pdc_dp_means.DPMeans (PyPI pdc-dp-means 0.0.8) on 200 000 x 50
rows from 100 Gaussian clusters: time to convergence, K found, objective.

pdc-dp-means pins scikit-learn < 1.3 (and so NumPy < 2), so it runs in a venv of its own:

    python3.11 -m venv bench/python/.venv-pdc
    bench/python/.venv-pdc/bin/pip install "numpy<2" "scikit-learn<1.3" pdc-dp-means
    .venv-test/bin/python bench/python/dpmeans_vs_pdc.py [--reps 3]

The two sides run alternately as subprocesses on the same saved data, one run each
(n_init = 1, seed 0; madbayes with plain=True, the paper's DP-means), with the same penalty (pdc's `delta`, compared with squared distances
as madbayes' penalty). Both start from one cluster; both use every core.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--clusters", type=int, default=100)
    ap.add_argument("--penalty", type=float, default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pdc-python", default=str(HERE / ".venv-pdc" / "bin" / "python"))
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    centres = rng.uniform(-10, 10, (a.clusters, a.d))
    y = rng.integers(0, a.clusters, a.n)
    X = centres[y] + rng.standard_normal((a.n, a.d))
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / "dpmeans_200k.npy"
    np.save(path, X)
    # Within a cluster ||x - mean||^2 ~ D (unit noise), between centres ~ 2 D 100/3: a penalty
    # of 4 D lies between them.
    penalty = a.penalty if a.penalty is not None else 4.0 * a.d
    sides = {"madbayes": sys.executable, "pdc": a.pdc_python}
    runs = []
    for _ in range(a.reps):
        for side, py in sides.items():
            r = subprocess.run(
                [py, str(HERE / "dpmeans_side.py"), side, str(path), repr(penalty)],
                check=True,
                capture_output=True,
                text=True,
            )
            runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
            print(json.dumps(runs[-1]), flush=True)
    summary = {
        "n": a.n,
        "d": a.d,
        "clusters": a.clusters,
        "penalty": penalty,
        "cpus": os.cpu_count(),
    }
    for side in sides:
        rs = [r for r in runs if r["side"] == side]
        summary[side] = {
            "seconds_median": float(np.median([r["seconds"] for r in rs])),
            "seconds_all": [round(r["seconds"], 3) for r in rs],
            "k": rs[0]["k"],
            "objective": rs[0]["objective"],
            "n_iter": rs[0]["n_iter"],
        }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
