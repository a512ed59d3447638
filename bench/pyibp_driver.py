#!/usr/bin/env python3
"""Runs one PyIBP chain (davidandrzej/PyIBP on GitHub, PyIBP.py checked out outside this
repository; see docs/ibp.md, "Beside PyIBP") on a prepared data matrix and writes its trace
in madbayes' trace.csv layout.

    python3 bench/pyibp_driver.py --pyibp DIR --x X.csv --alpha A --sigma-x S --sigma-a S
        --sweeps N --seed K --out DIR [--init-z Z.csv] [--max-seconds T] [--save-at 1,2,5,...]
        [--clock wall|cpu]

X.csv is used as it is (no centring here: both sides get the same prepared matrix). The chain
starts from a draw of the IBP(α) prior (PyIBP's own start) unless --init-z gives a Z.
Hyperparameters are fixed. Per sweep it records the sampling time only (sampleZ), then the
log joint log p(X | Z) + log P([Z]) computed by PyIBP's own logLike(). `--clock cpu`
times sampleZ by the thread's CPU time (time.thread_time) instead of wall time
(time.perf_counter, the default): on a loaded machine wall time also counts the spells the
process waits for a core. Writes
OUT/trace.csv (iteration,seconds,k,log_joint), OUT/z0.csv (the starting Z), OUT/z.csv
(the final Z) and OUT/zs.jsonl: one line per sweep listed in --save-at (and the last), with
`sweep`, `seconds`, `k`, `log_joint` and `z` (one string of K characters 0/1 per row, as in
madbayes' draws.jsonl), for an independent scorer.

PyIBP (2009, last touched for Python 3) does not run on NumPy ≥ 1.24 as it is: it uses the
removed aliases `numpy.int` and `numpy.float`, and tests `initZV == None`, which is ambiguous
for an array. Both are worked around here at run time, without editing its file: the aliases
are put back as the builtins they stood for, and a given Z is installed after construction
(the constructor then draws a prior Z that is discarded). BLAS is held to one thread (set
before NumPy loads) so that its times are one core's, like madbayes' `--threads 1`.
"""
import argparse
import json
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402


def patch_numpy():
    """The aliases PyIBP needs, removed from NumPy 1.24: they were the builtins."""
    for name, value in (("int", int), ("float", float)):
        if name not in np.__dict__:
            setattr(np, name, value)


def z_strings(z):
    return ["".join("1" if v else "0" for v in row) for row in (z != 0)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pyibp", required=True)
    ap.add_argument("--x", required=True)
    ap.add_argument("--alpha", type=float, required=True)
    ap.add_argument("--sigma-x", type=float, required=True)
    ap.add_argument("--sigma-a", type=float, required=True)
    ap.add_argument("--sweeps", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init-z")
    ap.add_argument("--max-seconds", type=float, default=float("inf"))
    ap.add_argument("--save-at", default="")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    patch_numpy()
    sys.path.insert(0, a.pyibp)
    from PyIBP import PyIBP  # noqa: E402  (outside the repository)

    x = np.loadtxt(a.x, delimiter=",", ndmin=2)
    np.random.seed(a.seed)
    f = PyIBP(x, a.alpha, a.sigma_x, a.sigma_a)
    if a.init_z:
        init = np.loadtxt(a.init_z, delimiter=",", ndmin=2).astype(float)
        init = init[:, init.sum(axis=0) > 0]
        f.ZV = init
        f.K = init.shape[1]
        f.m = (init != 0).astype(int).sum(axis=0)
    save_at = {int(s) for s in a.save_at.split(",") if s}
    os.makedirs(a.out, exist_ok=True)
    np.savetxt(os.path.join(a.out, "z0.csv"), (f.ZV != 0).astype(int), fmt="%d", delimiter=",")
    trace = open(os.path.join(a.out, "trace.csv"), "w")
    snaps = open(os.path.join(a.out, "zs.jsonl"), "w")

    def snapshot(it, seconds, lj):
        line = {"sweep": it, "seconds": seconds, "k": int(f.K), "log_joint": lj,
                "z": z_strings(f.ZV)}
        snaps.write(json.dumps(line) + "\n")
        snaps.flush()

    lj = float(f.logLike())
    trace.write("iteration,seconds,k,log_joint\n")
    trace.write(f"0,0,{f.K},{lj!r}\n")
    if 0 in save_at:
        snapshot(0, 0.0, lj)
    clock = time.thread_time if a.clock == "cpu" else time.perf_counter
    seconds = 0.0
    it = 0
    for it in range(1, a.sweeps + 1):
        t = clock()
        f.sampleZ()
        seconds += clock() - t
        lj = float(f.logLike())
        trace.write(f"{it},{seconds!r},{f.K},{lj!r}\n")
        trace.flush()
        last = it == a.sweeps or seconds > a.max_seconds
        if it in save_at or last:
            snapshot(it, seconds, lj)
        if last:
            break
    trace.close()
    snaps.close()
    z = (f.ZV != 0).astype(int)
    np.savetxt(os.path.join(a.out, "z.csv"), z, fmt="%d", delimiter=",")


if __name__ == "__main__":
    main()
