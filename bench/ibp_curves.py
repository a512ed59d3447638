#!/usr/bin/env python3
"""Log joint against sampling seconds, PyIBP beside madbayes' IBP samplers (the last step of
bench/run_ibp_curves.sh).

    python3 bench/ibp_curves.py --out-csv CSV --out-png PNG [--clock cpu|wall] NAME=DIR ...

DIR holds PyIBP's trace (pyibp/trace.csv: iteration,seconds,k,log_joint, logLike() after
every sweep), madbayes' curves (madbayes.csv: kind,form,sweep,seconds,k,log_joint, every
sweep's Z scored at PyIBP's fixed α, σ_X, σ_A) and setting.txt (`title|α|σ_X|σ_A`) for one
data set called NAME (block images of N rows: N; `tabletop`). Writes all the curves into one
CSV (data,program,kind,form,sweep,seconds,k,log_joint), draws one panel per data set (log
joint against seconds, log-scaled time), and prints a Markdown table per data set: each
curve's final log joint, its sampling seconds, the first time it reaches PyIBP's final log
joint, and whether that is within 1/100 of PyIBP's time (the issue's target).
"""
import argparse
import csv
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KINDS = ["collapsed", "semi", "accelerated"]
NAMES = {"collapsed": "collapsed", "semi": "semi-collapsed", "accelerated": "accelerated"}
COLOURS = {"collapsed": "tab:blue", "semi": "tab:green", "accelerated": "tab:red"}
STYLES = {"defaults": "-", "moves": ":", "prior": "-.", "plain": "--"}
FORMS = ["defaults", "moves", "prior", "plain"]


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def first_reach(curve, level):
    """Seconds of the first sweep whose log joint is at least `level` less 0.001 nats (None
    if never): madbayes' curves are written to 4 decimals, so the same state PyIBP ends in
    must count as reaching it."""
    for s, lj in curve:
        if lj >= level - 1e-3:
            return s
    return None


def fmt_nats(v):
    return f"{v:,.0f}".replace(",", " ").replace("-", "−")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-csv", required=True)
    ap.add_argument("--out-png", required=True)
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    ap.add_argument("runs", nargs="+", help="NAME=DIR")
    a = ap.parse_args()
    runs = [tuple(r.split("=", 1)) for r in a.runs]
    rows = []
    cols = min(2, len(runs))
    nrows = (len(runs) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6.5 * cols, 4.8 * nrows), squeeze=False)
    for ax in axes.flat[len(runs):]:
        ax.set_visible(False)
    for (n, d), ax in zip(runs, axes.flat):
        with open(f"{d}/setting.txt") as f:
            title, alpha, sigma_x, sigma_a = f.read().strip().split("|")
        py = [(float(r["seconds"]), float(r["log_joint"]), int(r["k"]), int(r["iteration"]))
              for r in read(f"{d}/pyibp/trace.csv")]
        for s, lj, k, it in py:
            rows.append([n, "PyIBP", "", "", it, s, k, lj])
        py = [p for p in py if p[3] > 0]  # sweep 0 is the prior draw, at 0 s
        mb = {}
        for r in read(f"{d}/madbayes.csv"):
            key = (r["kind"], r["form"])
            mb.setdefault(key, []).append(
                (float(r["seconds"]), float(r["log_joint"]), int(r["k"]), int(r["sweep"])))
            rows.append([n, "madbayes", r["kind"], r["form"], int(r["sweep"]),
                         float(r["seconds"]), int(r["k"]), float(r["log_joint"])])
        py_final, py_time, py_k = py[-1][1], py[-1][0], py[-1][2]
        ax.plot([p[0] for p in py], [p[1] for p in py], color="black", lw=2,
                label="PyIBP")
        ax.text(py[-1][0], py_final, f" K = {py_k}", fontsize=7, va="bottom", ha="right")
        print(f"\n{title}: PyIBP ends at {fmt_nats(py_final)} (K = {py_k}) after "
              f"{py[-1][3]} sweeps, {py_time:.1f} s; target: that log joint by "
              f"{py_time / 100:.3g} s\n")
        print("| madbayes sampler | form | final log joint (K) | s, all sweeps | s to PyIBP's "
              "final | PyIBP's s / that | ≥ PyIBP in 1/100 of its time |")
        print("|---|---|---:|---:|---:|---:|---|")
        for kind in KINDS:
            for form in FORMS:
                c = mb.get((kind, form))
                if not c:
                    continue
                ax.plot([p[0] for p in c], [p[1] for p in c], color=COLOURS[kind],
                        ls=STYLES[form], lw=1.3, label=f"{NAMES[kind]}, {form}")
                t = first_reach([(p[0], p[1]) for p in c], py_final)
                met = t is not None and t <= py_time / 100
                ratio = "—" if t is None else f"{py_time / t:,.0f}×".replace(",", " ")
                print(f"| {NAMES[kind]} | {form} | {fmt_nats(c[-1][1])} ({c[-1][2]}) | "
                      f"{c[-1][0]:.3g} | {'never' if t is None else f'{t:.3g}'} | {ratio} | "
                      f"{'yes' if met else 'no'} |")
        # Per sweep: each chain's sampling time over its sweeps, and PyIBP's per sweep over it.
        py_sweep = py_time / py[-1][3]
        print(f"\nPer sweep ({title}): PyIBP {1000 * py_sweep:.3g} ms; madbayes ms (PyIBP's / "
              "madbayes'):\n")
        print("| madbayes sampler | " + " | ".join(FORMS) + " |")
        print("|---|" + "---:|" * len(FORMS))
        for kind in KINDS:
            cells = []
            for form in FORMS:
                c = mb.get((kind, form))
                if not c:
                    cells.append("—")
                    continue
                per = c[-1][0] / c[-1][3]
                cells.append(f"{1000 * per:.3g} ({py_sweep / per:,.0f}×)".replace(",", " "))
            print(f"| {NAMES[kind]} | " + " | ".join(cells) + " |")
        # The y-range: from a little below PyIBP's start of the interesting part to the top.
        finals = [c[-1][1] for c in mb.values()] + [py_final]
        top = max(max(p[1] for p in c) for c in mb.values())
        top = max(top, max(p[1] for p in py))
        low = min(finals) - 0.5 * (top - min(finals)) - 10
        ax.set_ylim(low, top + 0.05 * (top - low))
        ax.set_xscale("log")
        ax.axvline(py_time / 100, color="grey", lw=0.8, ls="-.")
        ax.text(py_time / 100, low, " 1/100 of PyIBP's time", color="grey", fontsize=7,
                va="bottom", rotation=90)
        ax.axhline(py_final, color="black", lw=0.6, ls=":")
        clock = "CPU seconds" if a.clock == "cpu" else "seconds"
        ax.set_xlabel(f"sampling {clock} (one thread)")
        ax.set_ylabel(f"log p(X, Z) at α = {alpha}, σ_X = {sigma_x}, σ_A = {sigma_a}")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    # One legend for all panels, below them (the curves are the same in every panel).
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.09 / nrows, 1, 1))
    fig.savefig(a.out_png, dpi=110)
    with open(a.out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["data", "program", "kind", "form", "sweep", "seconds", "k", "log_joint"])
        for r in rows:
            w.writerow(r[:5] + [f"{r[5]:.6g}", r[6], f"{r[7]:.4f}"])
    if any(math.isnan(r[7]) for r in rows):
        raise SystemExit("a log joint is NaN")


if __name__ == "__main__":
    main()
