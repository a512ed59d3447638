"""DP-means: madbayes vs pdc-dp-means (Dinari & Freifeld 2022), side by side in one run.

Data: numpy blobs as in `compare_lloyd.py` (100 centres uniform in [-10, 10]^D, standard
deviation `--std`), written once as raw f64 and read by both sides. pdc-dp-means:
`DPMeans(n_clusters=1, n_init=R, delta=λ², max_iter=300)` (its `delta` is compared with the
squared distance, so it is λ²; it seeds every run by k-means++ with one centre); madbayes:
`bench_clustering dp` with R restarts (its defaults, and `--plain true`, the paper's algorithm), and side
`auto`: its defaults without `--restarts` (the library's number of runs for the data's size).
Both objectives are recomputed here the same way: Σ_n ‖x_n − μ_{z_n}‖² + λ²·K for pdc from its
labels and centres; madbayes reports its own (the same formula). Wall and CPU time per fit.

Run with a Python that has pdc-dp-means (it pins scikit-learn 1.2), outside the repository's
tests:  OMP_NUM_THREADS=2 python bench/compare_dp_pdc.py --binary target/release/examples/bench_clustering
"""

import argparse
import json
import os
import subprocess
import time

import numpy as np
from pdc_dp_means import DPMeans


def blobs(n, d, k, std, seed):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-10.0, 10.0, size=(k, d))
    labels = rng.integers(0, k, size=n)
    return centers[labels] + std * rng.standard_normal((n, d))


def data_file(out, n, d, k, std, seed):
    path = os.path.join(out, f"blobs_n{n}_d{d}_k{k}_std{std}_seed{seed}.f64")
    if not os.path.exists(path):
        np.ascontiguousarray(blobs(n, d, k, std, seed), dtype="<f8").tofile(path)
    return path, np.fromfile(path, dtype="<f8").reshape(n, d)


def pdc_fit(x, penalty, restarts, seed):
    c = time.process_time()
    t = time.perf_counter()
    m = DPMeans(n_clusters=1, n_init=restarts, delta=penalty, max_iter=300, random_state=seed)
    m.fit(x)
    wall = time.perf_counter() - t
    cpu = time.process_time() - c
    centers = m.cluster_centers_
    sse = float(((x - centers[m.labels_]) ** 2).sum())
    k = centers.shape[0]
    return {"side": "pdc", "wall_s": wall, "cpu_s": cpu, "k": int(k),
            "objective": sse + penalty * k, "n_iter": int(m.n_iter_)}


def madbayes_fit(binary, path, n, d, penalty, restarts, threads, plain):
    """`restarts` None: the library's number of runs for data of this size."""
    cmd = [binary, "dp", "--x", path, "--n", str(n), "--d", str(d), "--penalty", str(penalty),
           "--threads", str(threads), "--plain", str(plain).lower()]
    if restarts is not None:
        cmd += ["--restarts", str(restarts)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    r["side"] = "madbayes plain" if plain else "madbayes"
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", default="bench/out")
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--std", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--penalties", default="150,1000")
    ap.add_argument("--restarts", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sides", default="madbayes,plain,pdc",
                    help="any of madbayes (defaults, --restarts R), auto (defaults, the "
                         "library's restarts for the data's size), plain, pdc, before "
                         "(defaults of --before), before-auto (auto of --before), "
                         "before-plain (--plain of --before)")
    ap.add_argument("--before", help="an older bench_clustering, for a before/after row")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    path, x = data_file(a.out, a.n, a.d, a.k, a.std, a.seed)
    for p in (float(v) for v in a.penalties.split(",")):
        for side in a.sides.split(","):
            load = os.getloadavg()[0]
            if side == "pdc":
                r = pdc_fit(x, p, a.restarts, a.seed)
            elif side in ("before", "before-plain"):
                plain = side == "before-plain"
                r = madbayes_fit(a.before, path, a.n, a.d, p, a.restarts, a.threads, plain)
                r["side"] = "madbayes before" + (" plain" if plain else "")
            elif side == "before-auto":
                r = madbayes_fit(a.before, path, a.n, a.d, p, None, a.threads, False)
                r["side"] = "madbayes before auto"
            elif side == "auto":
                r = madbayes_fit(a.binary, path, a.n, a.d, p, None, a.threads, False)
                r["side"] = "madbayes auto"
            else:
                r = madbayes_fit(a.binary, path, a.n, a.d, p, a.restarts, a.threads,
                                 side == "plain")
            r.update({"penalty": p, "load_before": load, "load_after": os.getloadavg()[0]})
            print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
