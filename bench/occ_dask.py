"""OCC DP-means on Dask (madbayes.dask.DPMeans): seconds per iteration at 1 and 2 worker
processes, and dask_ml.cluster.KMeans per Lloyd iteration at the same K on the same
LocalCluster and data.

Data (the kind bench/run_occ.sh uses): N rows x D from a mixture of 100 Gaussians, centres
uniform in [-10, 10]^D, unit noise, P = 100; generated on the workers chunk by chunk (each
chunk from its own seed, so the data do not depend on the number of workers) and persisted
before any timing.

    python bench/occ_dask.py --kmeans            # 2e6 x 16, 1 and 2 workers, 10 iterations
    python bench/occ_dask.py --n 200000 --workers 2
    OPENBLAS_NUM_THREADS=1 python bench/occ_dask.py --profile-step 109   # one chunk's pieces

Prints one JSON line per measurement. Needs madbayes (pip install ./python), dask,
distributed and, for --kmeans, dask-ml.
"""

import argparse
import json
import os
import platform
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster, wait

import madbayes.dask


def mixture_chunk(block_info=None, *, d, k, box, seed):
    info = block_info[None]
    rows = info["chunk-shape"][0]
    index = info["chunk-location"][0]
    centres = np.random.default_rng(seed).uniform(-box, box, (k, d))
    rng = np.random.default_rng([seed, index])
    return centres[rng.integers(0, k, rows)] + rng.standard_normal((rows, d))


def data(n, d, k, box, chunk_rows, seed):
    chunks = ((chunk_rows,) * (n // chunk_rows) + ((n % chunk_rows,) if n % chunk_rows else ()),)
    return da.map_blocks(
        mixture_chunk,
        chunks=(chunks[0], (d,)),
        dtype=np.float64,
        d=d,
        k=k,
        box=box,
        seed=seed,
    )


def load():
    return os.getloadavg()


def profile_step(rows, d, k, penalty, seed):
    """One chunk's pieces of an iteration in this process (one thread), minimum of 3: the
    OCC worker step, the nearest centre by GEMM (madbayes' predict, scikit-learn's argmin),
    the statistics and the objective."""
    from sklearn.metrics import pairwise_distances_argmin_min

    from madbayes import _core

    rng = np.random.default_rng(seed)
    C = rng.uniform(-10, 10, (k, d))
    X = C[rng.integers(0, k, rows)] + rng.standard_normal((rows, d))
    zeros = np.zeros(rows, dtype=np.int64)
    for name, f in [
        ("occ_dp_propose", lambda: _core.occ_dp_propose(X, C, penalty, None)),
        ("madbayes_nearest_means_gemm", lambda: _core.nearest_means(C, X, 1)),
        ("sklearn_pairwise_distances_argmin_min", lambda: pairwise_distances_argmin_min(X, C)),
        ("occ_cluster_stats", lambda: _core.occ_cluster_stats(X, zeros, k)),
        ("occ_dp_sum_of_squares", lambda: _core.occ_dp_sum_of_squares(X, zeros, C)),
    ]:
        times = []
        for _ in range(3):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        print(json.dumps({"what": name, "rows": rows, "d": d, "k": k,
                          "ms_min_of_3": round(1000 * min(times), 1), "load": load()}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--components", type=int, default=100)
    ap.add_argument("--box", type=float, default=10.0, help="centres uniform in [-box, box]^D")
    ap.add_argument("--penalty", type=float, default=100.0)
    ap.add_argument("--chunk-rows", type=int, default=250_000)
    ap.add_argument("--epoch-size", type=int, default=16384)
    ap.add_argument("--max-iter", type=int, default=10)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--kmeans", action="store_true", help="also time dask_ml KMeans")
    ap.add_argument("--kmeans-iter", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--profile-step", type=int, metavar="K",
        help="time one chunk's pieces against K centres in this process, then exit",
    )
    args = ap.parse_args()
    penalty = args.penalty
    if args.profile_step:
        profile_step(args.chunk_rows, args.d, args.profile_step, penalty, args.seed)
        return
    common = {
        "n": args.n,
        "d": args.d,
        "components": args.components,
        "chunk_rows": args.chunk_rows,
        "epoch_size": args.epoch_size,
        "penalty": penalty,
        "cpus": os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
    }
    results = {}
    for w in args.workers:
        with LocalCluster(
            n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            X = data(args.n, args.d, args.components, args.box, args.chunk_rows, args.seed)
            X = client.persist(X)
            wait(X)
            before = load()
            est = madbayes.dask.DPMeans(
                penalty, epoch_size=args.epoch_size, max_iter=args.max_iter
            )
            copies = []

            def count_copies(iteration):
                # Copies of the fit's persisted chunks (keys "_contiguous-...") on the
                # workers after each iteration: one per chunk when no chunk has moved.
                copies.append(
                    sum(
                        isinstance(k, tuple) and str(k[0]).startswith("_contiguous")
                        for keys in client.has_what().values()
                        for k in keys
                    )
                )

            est._iteration_hook = count_copies  # a private hook of madbayes.dask
            est.fit(X)
            after = load()
            it = est.iteration_seconds_

            row = {
                **common,
                "what": "occ-dp-means",
                "workers": w,
                "k": int(est.n_clusters_),
                "n_iter": int(est.n_iter_),
                "converged": bool(est.converged_),
                "objective": float(est.objective_),
                "fit_seconds": round(est.fit_seconds_, 3),
                "seconds_per_iteration": round(float(it.mean()), 3),
                "first_iteration": round(float(it[0]), 3),
                "later_iterations_mean": round(float(it[1:].mean()), 3) if len(it) > 1 else None,
                "proposals_first_iteration": int(est.occ_proposals_[0].sum()),
                "accepted_first_iteration": int(est.occ_accepted_[0].sum()),
                "proposals_after": int(est.occ_proposals_[1:].sum()),
                "chunks": est.n_chunks_,
                "most_chunk_copies_on_workers": max(copies),
                "load_before": [round(v, 2) for v in before],
                "load_after": [round(v, 2) for v in after],
            }
            print(json.dumps(row), flush=True)
            results[w] = est
            if args.kmeans:
                from dask_ml.cluster import KMeans

                km = KMeans(
                    n_clusters=int(est.n_clusters_),
                    init=est.cluster_centers_,
                    max_iter=args.kmeans_iter,
                    tol=0.0,
                    random_state=0,
                )
                before = load()
                t = time.perf_counter()
                km.fit(X)
                seconds = time.perf_counter() - t
                after = load()
                print(
                    json.dumps(
                        {
                            **common,
                            "what": "dask-ml-kmeans",
                            "workers": w,
                            "k": int(est.n_clusters_),
                            "n_iter": int(km.n_iter_),
                            "fit_seconds": round(seconds, 3),
                            "seconds_per_iteration": round(seconds / max(1, km.n_iter_), 3),
                            "inertia": float(km.inertia_),
                            "load_before": [round(v, 2) for v in before],
                            "load_after": [round(v, 2) for v in after],
                        }
                    ),
                    flush=True,
                )
    if len(results) > 1:
        first, *rest = results.values()
        same = all(
            np.array_equal(first.labels_, r.labels_)
            and np.array_equal(first.cluster_centers_, r.cluster_centers_)
            for r in rest
        )
        print(json.dumps({"same_answer_for_every_worker_count": same}))


if __name__ == "__main__":
    main()
