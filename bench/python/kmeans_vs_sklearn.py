"""madbayes.KMeans against sklearn.cluster.KMeans: the same data and the same initial
centres, Lloyd iterations until the labels stop changing (or max_iter); time per iteration.

    .venv-test/bin/python bench/python/kmeans_vs_sklearn.py [--n 100000 --d 50 --k 50 --reps 5]

Both sides use every core (scikit-learn's OpenMP threads; madbayes' rayon pool, n_jobs=None)
and run alternately, `--reps` times each; the table gives the median.
"""

import argparse
import json
import os
import time

import numpy as np
import sklearn
from sklearn.cluster import KMeans as SkKMeans

import madbayes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 3, (a.k, a.d))
    X = centres[rng.integers(0, a.k, a.n)] + rng.standard_normal((a.n, a.d))
    init = X[rng.choice(a.n, a.k, replace=False)].copy()
    rows = {"madbayes": [], "sklearn": []}
    for _ in range(a.reps):
        t = time.perf_counter()
        m = madbayes.KMeans(n_clusters=a.k, init=init, max_iter=a.max_iter).fit(X)
        rows["madbayes"].append((time.perf_counter() - t, m.n_iter_, m.inertia_))
        t = time.perf_counter()
        s = SkKMeans(
            n_clusters=a.k, init=init, n_init=1, max_iter=a.max_iter, tol=0.0, algorithm="lloyd"
        ).fit(X)
        rows["sklearn"].append((time.perf_counter() - t, s.n_iter_, s.inertia_))
    out = {"n": a.n, "d": a.d, "k": a.k, "cpus": os.cpu_count(), "sklearn": sklearn.__version__}
    for side, r in rows.items():
        secs = np.array([x[0] for x in r])
        iters = np.array([x[1] for x in r])
        per = secs / iters
        out[side] = {
            "seconds_median": float(np.median(secs)),
            "n_iter": int(iters[0]),
            "per_iteration_median_ms": float(np.median(per) * 1e3),
            "per_iteration_min_ms": float(per.min() * 1e3),
            "inertia": float(r[0][2]),
        }
    out["ratio_madbayes_over_sklearn"] = (
        out["madbayes"]["per_iteration_median_ms"] / out["sklearn"]["per_iteration_median_ms"]
    )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
