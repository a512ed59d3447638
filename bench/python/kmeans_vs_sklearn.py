"""madbayes.KMeans against sklearn.cluster.KMeans: the same data and the same initial
centres, Lloyd iterations until the labels stop changing (or max_iter); time per iteration.

    .venv-test/bin/python bench/python/kmeans_vs_sklearn.py [--n 100000 --d 50 --k 50 --reps 5]
    .venv-test/bin/python bench/python/kmeans_vs_sklearn.py --whole 10 [...]
    .venv-test/bin/python bench/python/kmeans_vs_sklearn.py --restart-rate 100 [...]

With `--whole R` a whole fit is timed instead: greedy k-means++ seeding and Lloyd to
convergence, R restarts on each side (scikit-learn `n_init=R, tol=0`; madbayes `n_init=R`),
random states 0 … reps − 1; the output gives the median seconds, the median and best
inertia, and how many fits reached the best inertia of both sides (different random streams:
distributions, not run-by-run pairs).

With `--restart-rate R` the seedings' quality is compared instead: how many of R restarts end
at the best inertia of both sides (madbayes: the `run_objectives_` of one fit with
`n_init=R`, random state 0; scikit-learn: R fits with `n_init=1`, random states 0 … R − 1).

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
    ap.add_argument("--whole", type=int, default=0, help="time whole fits of this many restarts")
    ap.add_argument("--restart-rate", type=int, default=0,
                    help="count the restarts, of this many a side, that end at the best")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 3, (a.k, a.d))
    X = centres[rng.integers(0, a.k, a.n)] + rng.standard_normal((a.n, a.d))
    init = X[rng.choice(a.n, a.k, replace=False)].copy()
    if a.whole:
        whole_fits(a, X)
        return
    if a.restart_rate:
        restart_rates(a, X)
        return
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


def whole_fits(a, X):
    rows = {"madbayes": [], "sklearn": []}
    for seed in range(a.reps):
        t = time.perf_counter()
        m = madbayes.KMeans(n_clusters=a.k, n_init=a.whole, max_iter=a.max_iter,
                            random_state=seed).fit(X)
        rows["madbayes"].append((time.perf_counter() - t, m.inertia_))
        t = time.perf_counter()
        s = SkKMeans(n_clusters=a.k, n_init=a.whole, max_iter=a.max_iter, tol=0.0,
                     algorithm="lloyd", random_state=seed).fit(X)
        rows["sklearn"].append((time.perf_counter() - t, s.inertia_))
    out = {"n": a.n, "d": a.d, "k": a.k, "restarts": a.whole, "cpus": os.cpu_count(),
           "sklearn": sklearn.__version__, "load": os.getloadavg()}
    best = min(x[1] for r in rows.values() for x in r)
    for side, r in rows.items():
        out[side] = {
            "seconds_median": float(np.median([x[0] for x in r])),
            "inertia_median": float(np.median([x[1] for x in r])),
            "inertia_best": float(min(x[1] for x in r)),
            "fits_at_the_best_of_both": sum(x[1] <= best * (1 + 1e-12) for x in r),
        }
    out["ratio_madbayes_over_sklearn"] = (
        out["madbayes"]["seconds_median"] / out["sklearn"]["seconds_median"]
    )
    print(json.dumps(out, indent=1))


def restart_rates(a, X):
    m = madbayes.KMeans(n_clusters=a.k, n_init=a.restart_rate, max_iter=a.max_iter,
                        random_state=0).fit(X)
    mb = np.array(m.run_objectives_, dtype=float)
    sk = np.array([
        SkKMeans(n_clusters=a.k, n_init=1, max_iter=a.max_iter, tol=0.0, algorithm="lloyd",
                 random_state=seed).fit(X).inertia_
        for seed in range(a.restart_rate)
    ])
    best = min(mb.min(), sk.min())
    out = {"n": a.n, "d": a.d, "k": a.k, "restarts": a.restart_rate, "best": float(best)}
    for side, v in (("madbayes", mb), ("sklearn", sk)):
        out[side] = {
            "at_the_best": int((v <= best * (1 + 1e-12)).sum()),
            "inertia_median": float(np.median(v)),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
