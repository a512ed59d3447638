"""One side of bench/python/dpmeans_vs_pdc.py: fits DP-means on a saved .npy and prints a
JSON line (seconds, K, objective, iterations). Run by the driver in each side's venv."""

import json
import sys
import time

import numpy as np


def main():
    side, path, penalty = sys.argv[1], sys.argv[2], float(sys.argv[3])
    X = np.load(path)
    if side == "madbayes":
        import madbayes

        # plain=True: the paper's DP-means, the algorithm pdc-dp-means implements (the
        # library's default adds a refinement that pdc-dp-means has no counterpart of).
        est = madbayes.DPMeans(penalty=penalty, n_init=1, plain=True, random_state=0)
    else:
        from pdc_dp_means import DPMeans

        est = DPMeans(n_clusters=1, n_init=1, delta=penalty, random_state=0)
    t = time.perf_counter()
    est.fit(X)
    seconds = time.perf_counter() - t
    labels = np.asarray(est.labels_)
    centres = np.asarray(est.cluster_centers_)
    used = np.unique(labels)
    # The DP-means objective of the returned labels, each cluster at its mean (so both sides
    # are scored by the same formula).
    ss = 0.0
    for k in used:
        rows = X[labels == k]
        ss += float(((rows - rows.mean(axis=0)) ** 2).sum())
    print(
        json.dumps(
            {
                "side": side,
                "seconds": seconds,
                "k": int(len(used)),
                "k_centres": int(centres.shape[0]),
                "objective": ss + (len(used) - 1) * penalty,
                "n_iter": int(est.n_iter_),
            }
        )
    )


if __name__ == "__main__":
    main()
