"""Python overhead of one `fit` on a 100 x 100 input: the wall time of `est.fit(X)` against
the time spent in the Rust core (`fit_seconds_`, measured inside the call around the
library's fit, without the GIL). Overhead = (wall - core) / core, median of `--reps` fits.

    .venv-test/bin/python bench/python/overhead.py [--reps 200]
"""

import argparse
import json
import time

import numpy as np

import madbayes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    centres = rng.normal(0, 3, (5, 100))
    X = centres[rng.integers(0, 5, 100)] + rng.standard_normal((100, 100))
    ests = [
        madbayes.KMeans(n_clusters=5),
        madbayes.DPMeans(),
        madbayes.DPMeans(plain=True),
        madbayes.CollapsedDPMeans(),
        madbayes.BPMeans(),
        madbayes.BPMeans(plain=True),
        madbayes.KFeatures(n_features=5),
        madbayes.IBPSampler(n_sweeps=100),
        madbayes.MEIBP(max_features=10),
    ]
    out = []
    for est in ests:
        est.fit(X)  # warm up the pool
        walls, cores = [], []
        for _ in range(a.reps):
            t = time.perf_counter()
            est.fit(X)
            walls.append(time.perf_counter() - t)
            cores.append(est.fit_seconds_)
        walls, cores = np.array(walls), np.array(cores)
        over = (walls - cores) / cores
        out.append(
            {
                "estimator": repr(est),
                "wall_ms_median": float(np.median(walls) * 1e3),
                "core_ms_median": float(np.median(cores) * 1e3),
                "python_us_median": float(np.median(walls - cores) * 1e6),
                "overhead_median_pct": float(np.median(over) * 100),
            }
        )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
