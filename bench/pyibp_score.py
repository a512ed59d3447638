#!/usr/bin/env python3
"""Scores binary feature matrices Z under the linear-Gaussian IBP, independently of both
madbayes and PyIBP: the log joint log p(X | Z, σ_X, σ_A) + log P([Z] | α) that madbayes'
`log_joint` and PyIBP's `logLike()` both report.

    python3 bench/pyibp_score.py --x X.csv --alpha A --sigma-x S --sigma-a S FILE...
    python3 bench/pyibp_score.py --x X.csv --own-hyper DRAWS.jsonl

FILE is a Z as CSV (N rows of 0/1) or a JSON-lines file of Z's (madbayes' draws.jsonl or
bench/pyibp_driver.py's zs.jsonl: each line's `z` is one string of K characters 0/1 per row).
Prints one JSON object per Z: the file, its line (0 for a CSV), `sweep` and the `log_joint`
the file reports where it has them, K (non-empty columns) and the score.

The likelihood is Griffiths & Ghahramani's (2011) Eq. (26) with A integrated out, computed
from the K × K matrix G = ZᵀZ + (σ_X²/σ_A²) I by a Cholesky factor L (never an N × N
matrix):

    log p(X | Z) = −ND/2 log 2π − (N − K) D log σ_X − K D log σ_A − D Σ log L_kk
                   − (‖X‖² − ‖L⁻¹ ZᵀX‖²) / (2σ_X²);

the prior is their Eq. (15), the probability of Z's left-ordered class:

    log P([Z]) = K log α − Σ_h log K_h! − α H_N + Σ_k [log (N − m_k)! + log (m_k − 1)! − log N!],

K_h the number of identical columns with history h, m_k the column sums, H_N the N-th
harmonic number. Empty columns are dropped first (they are not features).
"""
import argparse
import json
import math
import sys
from collections import Counter

import numpy as np


def log_joint(x, z, alpha, sigma_x, sigma_a):
    z = np.asarray(z, dtype=float)
    n, d = x.shape
    if z.size == 0:
        z = np.zeros((n, 0))
    z = z[:, z.sum(axis=0) > 0]
    k = z.shape[1]
    sx2 = sigma_x * sigma_x
    lik = -0.5 * n * d * math.log(2.0 * math.pi)
    lik -= (n - k) * d * math.log(sigma_x) + k * d * math.log(sigma_a)
    resid = float((x * x).sum())
    if k > 0:
        g = z.T @ z + (sx2 / (sigma_a * sigma_a)) * np.eye(k)
        chol = np.linalg.cholesky(g)
        lik -= d * float(np.log(np.diag(chol)).sum())
        b = np.linalg.solve(chol, z.T @ x)
        resid -= float((b * b).sum())
    lik -= resid / (2.0 * sx2)
    harmonic = sum(1.0 / i for i in range(1, n + 1))
    prior = k * math.log(alpha) - alpha * harmonic
    histories = Counter(tuple(col) for col in (z.T > 0.5).astype(np.int8).tolist())
    prior -= sum(math.lgamma(c + 1) for c in histories.values())
    for m in z.sum(axis=0):
        m = int(round(m))
        prior += math.lgamma(n - m + 1) + math.lgamma(m) - math.lgamma(n + 1)
    return lik + prior, k


def z_from_strings(rows):
    if not rows or len(rows[0]) == 0:
        return np.zeros((len(rows), 0))
    return np.array([[c == "1" for c in r] for r in rows], dtype=float)


def read_zs(path):
    """(line, record or None, Z) for each Z in the file."""
    if path.endswith(".jsonl"):
        with open(path) as f:
            for i, line in enumerate(f, 1):
                if line.strip():
                    rec = json.loads(line)
                    yield i, rec, z_from_strings(rec["z"])
    else:
        with open(path) as f:
            rows = [r.strip() for r in f if r.strip()]
        z = np.array([[float(v) for v in r.split(",")] for r in rows]) if rows and rows[0] else None
        yield 0, None, z if z is not None else np.zeros((len(rows), 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--x", required=True)
    ap.add_argument("--alpha", type=float)
    ap.add_argument("--sigma-x", type=float)
    ap.add_argument("--sigma-a", type=float)
    ap.add_argument("--own-hyper", action="store_true",
                    help="score each JSON line at its own alpha, sigma_x, sigma_a")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    x = np.loadtxt(a.x, delimiter=",", ndmin=2)
    for path in a.files:
        for line, rec, z in read_zs(path):
            if a.own_hyper and rec is not None:
                hyper = (rec["alpha"], rec["sigma_x"], rec["sigma_a"])
            else:
                hyper = (a.alpha, a.sigma_x, a.sigma_a)
            if None in hyper:
                sys.exit("pyibp_score: give --alpha, --sigma-x and --sigma-a (or --own-hyper)")
            score, k = log_joint(x, z, *hyper)
            out = {"file": path, "line": line, "k": k, "score": score}
            if rec is not None:
                out["sweep"] = rec.get("sweep")
                out["reported"] = rec.get("log_joint")
            json.dump(out, sys.stdout)
            sys.stdout.write("\n")


if __name__ == "__main__":
    main()
