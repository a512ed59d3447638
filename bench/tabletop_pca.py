"""Tabletop photos → the 100 × 100 matrix of the MAD-Bayes experiments, for the benchmarks.

Follows the preprocessing described in ../shared/data/tabletop/README.md: each photo is one
row of 240·320·3 values divided by 255; the rows are scaled by 1/sqrt(N − 1), centred, and
projected on their top 100 right singular vectors. Writes a 2-D float64 .npy (and with --csv the same values as CSV, all 17 digits, which
bench/bp_means_authors.m reads).

    bench/.venv/bin/python bench/tabletop_pca.py --images ../shared/data/tabletop/images \
        --out bench/out/tabletop_pca100.npy
"""

import argparse
import re
from pathlib import Path

import numpy as np
from PIL import Image


def natural_key(path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dims", type=int, default=100)
    ap.add_argument("--csv", help="also write the matrix as CSV here (for the Octave peer)")
    args = ap.parse_args()
    files = sorted(Path(args.images).glob("*.jpg"), key=natural_key)
    x = np.stack([np.asarray(Image.open(f).convert("RGB"), dtype=np.float64).ravel() for f in files])
    x /= 255.0
    x /= np.sqrt(x.shape[0] - 1)
    x -= x.mean(axis=0)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    y = x @ vt[: args.dims].T
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.save(args.out, y)
    if args.csv:
        np.savetxt(args.csv, y, delimiter=",", fmt="%.17g")
    print(f"{len(files)} images → {y.shape}, kept variance {np.sum(s[: args.dims] ** 2) / np.sum(s ** 2):.6f}")


if __name__ == "__main__":
    main()
