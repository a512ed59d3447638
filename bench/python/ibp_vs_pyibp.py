"""madbayes.IBPSampler against PyIBP (D. Andrzejewski's accelerated Gibbs sampler in NumPy)
on block images: time per sweep, K and log p(X, Z) at the end.

PyIBP is not on PyPI and fails on NumPy >= 1.24 (`np.int`, `np.float`, `== None` on arrays).
Fetch its PyIBP.py (github davidandrzej/PyIBP) into a folder outside this repository,
replace `NP.int`/`NP.float` by `int`/`float` and `== None`/`!= None` on initZV and missing by
`is None`/`is not None`, then

    .venv-test/bin/python bench/python/ibp_vs_pyibp.py --pyibp /tmp/pyibp [--sweeps 50 --reps 2]

Data: the four 6 x 6 shapes of Griffiths & Ghahramani, each row holding each with probability
1/2, noise sigma_X = 0.5, N = 100 (their setting), centred as PyIBP's example does. Both
samplers run one plain chain (madbayes: plain=True, n_chains=1, one thread) with alpha = 1,
sigma_X = 0.5, sigma_A = 1 fixed, from a draw of the IBP prior, alternately, `--reps` chains
each; per sweep = the chain's sampling time / sweeps.
"""

import argparse
import json
import sys
import time

import numpy as np

import madbayes


def blocks(n, sigma_x, seed):
    shapes = np.zeros((4, 6, 6))
    shapes[0, 0:3, 0:3] = 1
    shapes[1, 0:3, 3:6] = [[1, 1, 1], [1, 0, 1], [1, 1, 1]]
    shapes[2, 3:6, 0:3] = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    shapes[3, 3:6, 3:6] = [[0, 1, 0], [1, 1, 1], [0, 1, 0]]
    rng = np.random.default_rng(seed)
    z = (rng.random((n, 4)) < 0.5).astype(float)
    return z @ shapes.reshape(4, 36) + sigma_x * rng.standard_normal((n, 36))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pyibp", required=True, help="folder holding the patched PyIBP.py")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--sweeps", type=int, default=50)
    ap.add_argument("--reps", type=int, default=2)
    a = ap.parse_args()
    sys.path.insert(0, a.pyibp)
    from PyIBP import PyIBP

    X = blocks(a.n, 0.5, 1)
    X = X - X.mean(axis=0)
    runs = []
    for rep in range(a.reps):
        # One plain chain (no split-merge or block moves, hyperparameters fixed at the
        # values given), PyIBP's sampler.
        est = madbayes.IBPSampler(
            method="accelerated",
            n_chains=1,
            plain=True,
            alpha=1.0,
            sigma_x=0.5,
            sigma_a=1.0,
            n_sweeps=a.sweeps,
            init="prior",
            random_state=rep,
            n_jobs=1,
        ).fit(X)
        runs.append(
            {
                "side": "madbayes",
                "per_sweep_ms": est.seconds_trace_[-1] / a.sweeps * 1e3,
                "k": int(est.n_features_),
                "log_joint": float(est.log_joint_trace_[-1]),
            }
        )
        np.random.seed(rep)
        f = PyIBP(X, 1.0, 0.5, 1.0)
        t = time.perf_counter()
        for _ in range(a.sweeps):
            f.fullSample()
        sec = time.perf_counter() - t
        runs.append(
            {
                "side": "PyIBP",
                "per_sweep_ms": sec / a.sweeps * 1e3,
                "k": int(f.K),
                # PyIBP's own log P(X, Z) (its logLike), at the same fixed hyperparameters
                "log_joint": float(f.logLike()),
            }
        )
        print(json.dumps(runs[-2]), json.dumps(runs[-1]), flush=True)
    summary = {"n": a.n, "d": 36, "sweeps": a.sweeps}
    for side in ("madbayes", "PyIBP"):
        rs = [r for r in runs if r["side"] == side]
        summary[side] = {
            "per_sweep_ms_median": float(np.median([r["per_sweep_ms"] for r in rs])),
            "per_sweep_ms_all": [round(r["per_sweep_ms"], 3) for r in rs],
            "k_all": [r["k"] for r in rs],
        }
    summary["ratio_madbayes_over_pyibp"] = (
        summary["madbayes"]["per_sweep_ms_median"] / summary["PyIBP"]["per_sweep_ms_median"]
    )
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
