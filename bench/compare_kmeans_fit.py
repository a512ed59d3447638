"""A whole K-means fit, seeding and Lloyd to convergence: madbayes vs scikit-learn, side by side.

The same numpy blobs as compare_lloyd.py (written once as .npy). For each seed, scikit-learn's
`KMeans(init="k-means++", n_init=1, algorithm="lloyd", tol=0)` (tol = 0: iterate until no label
changes, as madbayes does) and `madbayes fit --algo kmeans --restarts 1 --seed S`, whose
summary.json gives the fit's wall time without I/O (`seconds`). The two draw from different
random streams, so their seedings and iteration counts differ seed by seed: the table compares
the medians over the seeds, and the objectives as a check that both reach fits of the same
quality. Prints one JSON line per (threads, side) and a Markdown row per thread count.

    OMP_NUM_THREADS=2 bench/.venv/bin/python bench/compare_kmeans_fit.py \
        --madbayes target/release/madbayes --out bench/out --threads 1,2 --seeds 5
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from compare_lloyd import blobs


def sklearn_fit(x, k, seed, threads):
    with threadpool_limits(limits=threads):
        km = KMeans(n_clusters=k, init="k-means++", n_init=1, algorithm="lloyd", tol=0.0,
                    max_iter=300, random_state=seed)
        c = time.process_time()
        t = time.perf_counter()
        km.fit(x)
        return time.perf_counter() - t, time.process_time() - c, km.n_iter_, float(km.inertia_)


def madbayes_fit(binary, npy, k, seed, threads):
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([binary, "fit", npy, "--algo", "kmeans", "--k", str(k), "--restarts", "1",
                        "--seed", str(seed), "--threads", str(threads), "--out", out],
                       check=True, capture_output=True, text=True)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
    return s["seconds"], s["iterations"], s["objective"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--madbayes", required=True, help="the madbayes command-line binary")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--std", type=float, default=4.0)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    npy = os.path.join(args.out, f"blobs_n{args.n}_d{args.d}_k{args.k}_std{args.std}_seed42.npy")
    if not os.path.exists(npy):
        np.save(npy, np.ascontiguousarray(blobs(args.n, args.d, args.k, args.std, 42)))
    x = np.load(npy)
    print("| N | D | K | threads | scikit-learn fit, median (iterations) | madbayes fit, median (iterations) "
          "| ratio of medians | mean objective sk / mb | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for threads in [int(t) for t in args.threads.split(",")]:
        load0 = os.getloadavg()[0]
        sk, mb = [], []
        for seed in range(args.seeds):
            sk.append(sklearn_fit(x, args.k, seed, threads))
            mb.append(madbayes_fit(args.madbayes, npy, args.k, seed, threads))
        load1 = os.getloadavg()[0]
        print(json.dumps({"threads": threads, "side": "sklearn", "runs": sk}))
        print(json.dumps({"threads": threads, "side": "madbayes", "runs": mb}))
        sk_t = float(np.median([r[0] for r in sk]))
        mb_t = float(np.median([r[0] for r in mb]))
        sk_it = [r[2] for r in sk]
        mb_it = [r[1] for r in mb]
        print(f"| {args.n} | {args.d} | {args.k} | {threads} | {sk_t:.3f} s ({min(sk_it)}–{max(sk_it)}) "
              f"| {mb_t:.3f} s ({min(mb_it)}–{max(mb_it)}) | {mb_t / sk_t:.2f} "
              f"| {np.mean([r[3] for r in sk]):.6e} / {np.mean([r[2] for r in mb]):.6e} "
              f"| {load0:.2f} → {load1:.2f} |")


if __name__ == "__main__":
    main()
