#!/usr/bin/env python3
"""Runs one PyIBP chain (github.com/davidandrzej/PyIBP, checked out and patched outside this
repository; see docs/results.md, "IBP samplers beside PyIBP") on a prepared data matrix and
writes its trace in madbayes' trace.csv layout.

    python3 bench/pyibp_driver.py --pyibp DIR --x X.csv --alpha A --sigma-x S --sigma-a S
        --sweeps N --seed K --out DIR [--init-z Z.csv] [--max-seconds T]

X.csv is used as it is (no centring here: both sides get the same prepared matrix). The chain
starts from a draw of the IBP(α) prior (PyIBP's own start) unless --init-z gives a Z.
Hyperparameters are fixed. Per sweep it records the sampling time only (sampleZ), then the
log joint log p(X | Z) + log P([Z]) computed by PyIBP's own logLike(). Writes
OUT/trace.csv (iteration,seconds,k,log_joint), OUT/z0.csv (the starting Z) and OUT/z.csv
(the final Z).
"""
import argparse
import os
import sys
import time

import numpy as np


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
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    sys.path.insert(0, a.pyibp)
    from PyIBP import PyIBP  # noqa: E402  (outside the repository)

    x = np.loadtxt(a.x, delimiter=",", ndmin=2)
    np.random.seed(a.seed)
    init = None
    if a.init_z:
        init = np.loadtxt(a.init_z, delimiter=",", ndmin=2).astype(float)
        init = init[:, init.sum(axis=0) > 0]
    f = PyIBP(x, a.alpha, a.sigma_x, a.sigma_a, initZV=init)
    os.makedirs(a.out, exist_ok=True)
    np.savetxt(os.path.join(a.out, "z0.csv"), (f.ZV != 0).astype(int), fmt="%d", delimiter=",")
    trace = open(os.path.join(a.out, "trace.csv"), "w")
    trace.write("iteration,seconds,k,log_joint\n")
    trace.write(f"0,0,{f.K},{float(f.logLike())!r}\n")
    seconds = 0.0
    for it in range(1, a.sweeps + 1):
        t = time.perf_counter()
        f.sampleZ()
        seconds += time.perf_counter() - t
        trace.write(f"{it},{seconds!r},{f.K},{float(f.logLike())!r}\n")
        trace.flush()
        if seconds > a.max_seconds:
            break
    trace.close()
    z = (f.ZV != 0).astype(int)
    np.savetxt(os.path.join(a.out, "z.csv"), z, fmt="%d", delimiter=",")


if __name__ == "__main__":
    main()
