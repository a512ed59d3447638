"""Greedy k-means++ seeding alone: madbayes vs scikit-learn, side by side in one run.

Data as in `compare_lloyd.py` (numpy blobs written once as raw f64, read by both sides).
scikit-learn: `sklearn.cluster.kmeans_plusplus` (its greedy rule, 2 + ⌊ln K⌋ candidates,
row norms computed inside); madbayes: `bench_clustering seed` (the same rule, row norms
included in the time). Rounds alternate the two; each round times `reps` seedings per seed.
Both the wall-clock and the CPU time are kept, and the potential Σ_n min_j ‖x_n − c_j‖² of
every seeding (different random streams, so compare their distributions, not seed by seed).
"""

import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np
from sklearn.cluster import kmeans_plusplus
from threadpoolctl import threadpool_limits

from compare_lloyd import data_files


def potential(x, centers):
    xx = np.einsum("ij,ij->i", x, x)
    cc = np.einsum("ij,ij->i", centers, centers)
    best = np.full(x.shape[0], np.inf)
    for s in range(0, x.shape[0], 20000):
        d = xx[s:s + 20000, None] - 2.0 * x[s:s + 20000] @ centers.T + cc[None, :]
        best[s:s + 20000] = np.maximum(d.min(axis=1), 0.0)
    return float(best.sum())


def sklearn_round(x, k, threads, reps, seeds):
    times, cpu, pots = [], [], []
    with threadpool_limits(limits=threads):
        for s in seeds:
            for _ in range(reps):
                c = time.process_time()
                t = time.perf_counter()
                centers, _ = kmeans_plusplus(x, k, random_state=s)
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            pots.append(potential(x, centers))
    return times, cpu, pots


def rust_round(binary, x_path, n, d, k, threads, reps, seeds):
    cmd = [binary, "seed", "--x", x_path, "--n", str(n), "--d", str(d), "--k", str(k),
           "--threads", str(threads), "--reps", str(reps), "--seed", str(seeds[0]),
           "--seeds", str(len(seeds))]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.strip().splitlines()]
    times = [t for r in rows for t in r["times"]]
    cpu = [t for r in rows for t in r["cpu_times"]]
    return times, cpu, [r["potential"] for r in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="200000x50x100")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--std", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print("| N | D | K | threads | sklearn wall min / median | madbayes wall min / median | "
          "ratio (min) | ratio (median) | CPU ratio (min) | potential sk / mb (mean) | "
          "load (1 min) |", flush=True)
    print("|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for size in a.sizes.split(","):
        n, d, k = (int(v) for v in size.split("x"))
        x_path, _, x, _ = data_files(a.out, n, d, k, a.std, a.seed)
        for threads in (int(t) for t in a.threads.split(",")):
            load_before = os.getloadavg()
            sk_t, sk_c, sk_p, mb_t, mb_c, mb_p = [], [], [], [], [], []
            for r in range(a.rounds):
                seeds = list(range(r * a.seeds, (r + 1) * a.seeds))
                t, c, p = sklearn_round(x, k, threads, a.reps, seeds)
                sk_t += t
                sk_c += c
                sk_p += p
                t, c, p = rust_round(a.binary, x_path, n, d, k, threads, a.reps, seeds)
                mb_t += t
                mb_c += c
                mb_p += p
            load_after = os.getloadavg()
            row = {
                "n": n, "d": d, "k": k, "threads": threads,
                "sk_times": sk_t, "mb_times": mb_t, "sk_cpu": sk_c, "mb_cpu": mb_c,
                "sk_potentials": sk_p, "mb_potentials": mb_p,
                "load_before": load_before, "load_after": load_after,
            }
            print(json.dumps(row), flush=True)
            med = statistics.median
            print(f"| {n} | {d} | {k} | {threads} | {min(sk_t):.3f} / {med(sk_t):.3f} s | "
                  f"{min(mb_t):.3f} / {med(mb_t):.3f} s | {min(mb_t) / min(sk_t):.2f} | "
                  f"{med(mb_t) / med(sk_t):.2f} | {min(mb_c) / min(sk_c):.2f} | "
                  f"{statistics.mean(sk_p):.6e} / {statistics.mean(mb_p):.6e} | "
                  f"{load_before[0]:.2f} → {load_after[0]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
