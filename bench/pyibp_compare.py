#!/usr/bin/env python3
"""Reads what bench/run_pyibp.sh wrote under OUT and prints the comparison of madbayes' IBP
samplers with PyIBP: every Z scored by bench/pyibp_score.py at α = 1, σ_X = 0.5, σ_A = 1.

    python3 bench/pyibp_compare.py --out bench/out/pyibp_n1000 --seeds 1,2 --sweeps 300

Per seed it prints (Markdown) the true Z's score (and with a column of ones added, since the
data are centred and the offset −m̄A is then a feature of every row), how far PyIBP's own
logLike() and madbayes' log_joint are from the scorer (largest absolute difference), and one
row per chain: the scored log joint at each sweep of the schedule, the final K, the sampling
seconds and milliseconds per sweep, and the seconds the chain took to first reach PyIBP's
final log joint (from the scored schedule points, and for the fixed-hyperparameter forms from
their own trace, which the scorer confirms) — "—" if it never did. Draws OUT/log_joint_vs_
seconds.png (first seed) when matplotlib is there.
"""
import argparse
import csv
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyibp_score import log_joint  # noqa: E402

HYPER = (1.0, 0.5, 1.0)
ALGOS = ("ibp-gibbs", "ibp-semicollapsed", "ibp-accelerated")
FORMS = ("plain", "moves", "defaults")


def load_z(path):
    with open(path) as f:
        rows = [r.strip() for r in f if r.strip()]
    if not rows or not rows[0]:
        return np.zeros((len(rows), 0))
    return np.array([[float(v) for v in r.split(",")] for r in rows])


def read_trace(path):
    with open(path) as f:
        return [(int(r["iteration"]), float(r["seconds"]), int(r["k"]), float(r["log_joint"]))
                for r in csv.DictReader(f)]


def first_reach(points, target):
    """Seconds of the first (sweep, seconds, log joint) point at or above target."""
    for _, s, lj in points:
        if lj >= target:
            return s
    return None


def fmt(v, digits=0):
    if v is None:
        return "—"
    return f"{v:,.{digits}f}".replace(",", " ").replace("-", "−")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--sweeps", type=int, required=True)
    a = ap.parse_args()
    plot = {}
    for seed in a.seeds.split(","):
        d = os.path.join(a.out, f"seed{seed}")
        x = np.loadtxt(os.path.join(d, "x.csv"), delimiter=",", ndmin=2)
        zt = load_z(os.path.join(d, "gen", "z.csv"))
        truth, _ = log_joint(x, zt, *HYPER)
        truth1, _ = log_joint(x, np.hstack([zt, np.ones((zt.shape[0], 1))]), *HYPER)
        print(f"\n### seed {seed}: N = {x.shape[0]}, D = {x.shape[1]}\n")
        print(f"true Z: {fmt(truth)}; true Z and a column of ones: {fmt(truth1)}\n")
        # PyIBP: trace (its own logLike) and the snapshots, scored.
        py_trace = read_trace(os.path.join(d, "pyibp", "trace.csv"))
        py_points, worst_py = [], 0.0
        with open(os.path.join(d, "pyibp", "zs.jsonl")) as f:
            for line in f:
                rec = json.loads(line)
                z = np.array([[c == "1" for c in r] for r in rec["z"]], dtype=float) \
                    if rec["k"] > 0 else np.zeros((x.shape[0], 0))
                score, k = log_joint(x, z, *HYPER)
                worst_py = max(worst_py, abs(score - rec["log_joint"]))
                py_points.append((rec["sweep"], rec["seconds"], k, score))
        sweeps_done = py_trace[-1][0]
        py_final = py_points[-1][3]
        py_secs = py_trace[-1][1]
        rows = [("PyIBP", py_points, py_secs / sweeps_done * 1e3,
                 first_reach([(t, s, lj) for t, s, _, lj in py_trace[1:]], py_final))]
        worst_mb = 0.0
        curves = {"PyIBP": [(s, lj) for _, s, _, lj in py_trace[1:]]}
        for algo in ALGOS:
            for form in FORMS:
                base = os.path.join(d, "madbayes", f"{algo}-{form}")
                if not os.path.isdir(base):
                    continue
                points = []
                for t in sorted(int(v) for v in os.listdir(base)):
                    run = os.path.join(base, str(t))
                    z = load_z(os.path.join(run, "z.csv"))
                    score, k = log_joint(x, z, *HYPER)
                    tr = read_trace(os.path.join(run, "trace.csv"))
                    if form != "defaults":
                        summary = json.load(open(os.path.join(run, "summary.json")))
                        worst_mb = max(worst_mb, abs(score - summary["log_joint"]))
                    points.append((t, tr[-1][1], k, score))
                longest = os.path.join(base, str(points[-1][0]), "trace.csv")
                tr = read_trace(longest)
                label = f"{algo} {form}"
                if form == "defaults":
                    reach = first_reach([(t, s, lj) for t, s, _, lj in points], py_final)
                    curves[label] = [(s, lj) for _, s, _, lj in points]
                else:
                    reach = first_reach([(t, s, lj) for t, s, _, lj in tr], py_final)
                    curves[label] = [(s, lj) for _, s, _, lj in tr]
                rows.append((label, points, tr[-1][1] / tr[-1][0] * 1e3, reach))
        print(f"largest |scorer − PyIBP's logLike()| over its snapshots: {worst_py:.2e}; "
              f"|scorer − madbayes' log_joint| over the fixed-hyperparameter runs: "
              f"{worst_mb:.2e}\n")
        # The columns: the sweeps at which the madbayes runs stopped (PyIBP's snapshots
        # include them).
        sweeps = sorted({t for _, points, _, _ in rows[1:] for t, *_ in points}) or \
            [t for t, *_ in py_points if t > 0]
        head = " | ".join(f"{t}" for t in sweeps)
        print(f"| chain | {head} | K | seconds | ms / sweep | s to PyIBP's final "
              f"({fmt(py_final)}) |")
        print("|---|" + "---:|" * (len(sweeps) + 4))
        for label, points, ms, reach in rows:
            by = {t: lj for t, _, _, lj in points}
            cells = " | ".join(fmt(by.get(t)) for t in sweeps)
            print(f"| {label} | {cells} | {points[-1][2]} | {fmt(points[-1][1], 2)} | "
                  f"{fmt(ms, 2)} | {fmt(reach, 3)} |")
        plot.setdefault("first", (seed, x.shape[0], curves, truth1))
    draw(a.out, *plot["first"])


def draw(out, seed, n, curves, truth1):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(no matplotlib: no plot)")
        return
    fig, ax = plt.subplots(figsize=(11, 5.5))
    styles = {"plain": ":", "moves": "-", "defaults": "--"}
    colours = {"ibp-gibbs": "tab:blue", "ibp-semicollapsed": "tab:green",
               "ibp-accelerated": "tab:orange"}
    tops = []
    for label, pts in curves.items():
        pts = [(s, lj) for s, lj in pts if s > 0]
        if not pts:
            continue
        s, lj = zip(*pts)
        tops.append(max(lj))
        if label == "PyIBP":
            ax.plot(s, lj, color="black", lw=2, label="PyIBP")
        else:
            algo, form = label.split()
            ax.plot(s, lj, styles[form], color=colours[algo],
                    marker="o" if form == "defaults" else None, ms=3, label=label)
    ax.axhline(truth1, color="grey", lw=0.8)
    ax.set_xscale("log")
    top = max(tops + [truth1])
    ax.set_ylim(top - 1900, top + 100)
    ax.set_xlabel("sampling seconds (one core)")
    ax.set_ylabel("log joint at α = 1, σ_X = 0.5, σ_A = 1")
    ax.set_title(f"block images, N = {n}, noise 0.5, centred (seed {seed}); grey: true Z + offset")
    ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1.0), loc="upper left")
    fig.tight_layout()
    path = os.path.join(out, "log_joint_vs_seconds.png")
    fig.savefig(path, dpi=110)
    print(f"\nplot: {path}")


if __name__ == "__main__":
    main()
