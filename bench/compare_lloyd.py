"""Lloyd time per iteration: madbayes vs scikit-learn, side by side in one run.

For each size (N, D, K) the data (Gaussian blobs, fixed seed) and the initial centers (K
distinct random rows) are generated once by numpy and written as raw little-endian f64
(`.tofile()`); scikit-learn reads them back with `np.fromfile`, the Rust example
(`bench_clustering lloyd`) reads the same files. Each (size, threads) cell alternates
scikit-learn and madbayes rounds; time per iteration = best fit time / iterations run.

scikit-learn runs its `algorithm="lloyd"` (the peer of the issue) and, with `--elkan`, also
its `algorithm="elkan"` (bounds like madbayes' own); `--before BINARY` adds a round of an
older build of the example, for a before/after ratio in the same sitting.
"""

import argparse
import json
import os
import subprocess
import time

import numpy as np
import sklearn
import threadpoolctl
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits


def blobs(n, d, k, std, seed):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-10.0, 10.0, size=(k, d))
    labels = rng.integers(0, k, size=n)
    return centers[labels] + std * rng.standard_normal((n, d))


def data_files(out, n, d, k, std, seed):
    x_path = os.path.join(out, f"blobs_n{n}_d{d}_k{k}_std{std}_seed{seed}.f64")
    init_path = os.path.join(out, f"init_n{n}_d{d}_k{k}_std{std}_seed{seed}.f64")
    if not (os.path.exists(x_path) and os.path.exists(init_path)):
        x = np.ascontiguousarray(blobs(n, d, k, std, seed), dtype="<f8")
        rows = np.random.default_rng(seed + 1).choice(n, size=k, replace=False)
        x.tofile(x_path)
        np.ascontiguousarray(x[rows], dtype="<f8").tofile(init_path)
    x = np.fromfile(x_path, dtype="<f8").reshape(n, d)
    init = np.fromfile(init_path, dtype="<f8").reshape(k, d)
    return x_path, init_path, x, init


def sklearn_round(x, init, max_iter, threads, reps, algorithm="lloyd"):
    times, cpu, fit = [], [], None
    with threadpool_limits(limits=threads):
        for _ in range(reps):
            km = KMeans(n_clusters=init.shape[0], init=init, n_init=1, algorithm=algorithm,
                        tol=0.0, max_iter=max_iter)
            c = time.process_time()
            t = time.perf_counter()
            km.fit(x)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            fit = km
    return times, cpu, fit


def rust_round(binary, x_path, init_path, n, d, k, max_iter, threads, reps):
    cmd = [binary, "lloyd", "--x", x_path, "--init", init_path, "--n", str(n), "--d", str(d),
           "--k", str(k), "--max-iter", str(max_iter), "--threads", str(threads),
           "--reps", str(reps)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="20000x50x100,200000x50x100")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--max-iter", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--std", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--elkan", action="store_true", help="also time scikit-learn's elkan")
    ap.add_argument("--before", help="an older build of bench_clustering, timed alongside")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    info = {
        "sklearn": sklearn.__version__,
        "numpy": np.__version__,
        "threadpoolctl": threadpoolctl.__version__,
        "threadpool_info": threadpoolctl.threadpool_info(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
    }
    print(json.dumps({"versions": info}), flush=True)
    print("| N | D | K | threads | iters (sk / mb) | sklearn s/iter | madbayes s/iter | "
          "ratio mb/sk | CPU ratio mb/sk | rel. diff objective | elkan s/iter (mb/elkan) | "
          "before s/iter (before/mb) | load (1, 5 min) |", flush=True)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for size in a.sizes.split(","):
        n, d, k = (int(v) for v in size.split("x"))
        x_path, init_path, x, init = data_files(a.out, n, d, k, a.std, a.seed)
        for threads in (int(t) for t in a.threads.split(",")):
            load_before = os.getloadavg()
            sk_times, mb_times, sk_cpu, mb_cpu, sk_fit, mb = [], [], [], [], None, None
            el_times, el_fit, old_times, old = [], None, [], None
            for _ in range(a.rounds):
                t, c, sk_fit = sklearn_round(x, init, a.max_iter, threads, a.reps)
                sk_times += t
                sk_cpu += c
                mb = rust_round(a.binary, x_path, init_path, n, d, k, a.max_iter, threads, a.reps)
                mb_times += mb["times"]
                mb_cpu += mb["cpu_times"]
                if a.elkan:
                    t, _, el_fit = sklearn_round(x, init, a.max_iter, threads, a.reps, "elkan")
                    el_times += t
                if a.before:
                    old = rust_round(a.before, x_path, init_path, n, d, k, a.max_iter, threads,
                                     a.reps)
                    old_times += old["times"]
            load_after = os.getloadavg()
            sk_it = min(sk_times) / sk_fit.n_iter_
            mb_it = min(mb_times) / mb["n_iter"]
            sk_cpu_it = min(sk_cpu) / sk_fit.n_iter_
            mb_cpu_it = min(mb_cpu) / mb["n_iter"]
            rel = abs(mb["objective"] - sk_fit.inertia_) / sk_fit.inertia_
            row = {
                "n": n, "d": d, "k": k, "threads": threads,
                "sk_n_iter": int(sk_fit.n_iter_), "mb_n_iter": mb["n_iter"],
                "sk_per_iter_s": sk_it, "mb_per_iter_s": mb_it, "ratio": mb_it / sk_it,
                "sk_inertia": float(sk_fit.inertia_), "mb_objective": mb["objective"],
                "sk_cpu_per_iter_s": sk_cpu_it, "mb_cpu_per_iter_s": mb_cpu_it,
                "cpu_ratio": mb_cpu_it / sk_cpu_it,
                "rel_diff": rel, "sk_times": sk_times, "mb_times": mb_times,
                "sk_cpu_times": sk_cpu, "mb_cpu_times": mb_cpu,
                "load_before": load_before, "load_after": load_after,
            }
            el_cell, old_cell = "—", "—"
            if el_fit is not None:
                el_it = min(el_times) / el_fit.n_iter_
                row.update(el_n_iter=int(el_fit.n_iter_), el_per_iter_s=el_it,
                           el_inertia=float(el_fit.inertia_), el_times=el_times)
                el_cell = f"{el_it * 1e3:.2f} ms ({mb_it / el_it:.2f})"
            if old is not None:
                old_it = min(old_times) / old["n_iter"]
                row.update(before_n_iter=old["n_iter"], before_per_iter_s=old_it,
                           before_objective=old["objective"], before_times=old_times)
                old_cell = f"{old_it * 1e3:.2f} ms ({old_it / mb_it:.2f})"
            print(json.dumps(row), flush=True)
            print(f"| {n} | {d} | {k} | {threads} | {sk_fit.n_iter_} / {mb['n_iter']} | "
                  f"{sk_it * 1e3:.2f} ms | {mb_it * 1e3:.2f} ms | {mb_it / sk_it:.2f} | "
                  f"{mb_cpu_it / sk_cpu_it:.2f} | {rel:.1e} | {el_cell} | {old_cell} | "
                  f"{load_before[0]:.2f}, {load_before[1]:.2f} → {load_after[0]:.2f}, "
                  f"{load_after[1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
