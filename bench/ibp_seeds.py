"""Several seeds of the IBP comparison with PyIBP in one table (issue 11, item 4).

Reads, for each run folder given (as written by bench/run_ibp_curves.sh: `pyibp/trace.csv`,
PyIBP's chain, and the madbayes curves, `madbayes.csv` unless --madbayes names another file),
and prints one Markdown row per folder and sampler: PyIBP's final log joint, K and CPU ms per
sweep, then for each madbayes form its final log joint less PyIBP's final one and, in
brackets, how many times sooner than PyIBP's whole run it first reached PyIBP's final value
("never" if it did not), and the per-sweep speed ratio. Where the folder has `fit4.csv`
(bench/run_ibp_seeds.sh: `madbayes fit` as it comes, four chains, the written Z scored at the
same fixed setting), a last column gives that Z's log joint less PyIBP's final one (K).

    python bench/ibp_seeds.py [--madbayes madbayes.csv] [--forms defaults,prior] DIR...
"""

import argparse
import csv
from collections import defaultdict
from pathlib import Path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--madbayes", default="madbayes.csv")
    ap.add_argument("--forms", default="defaults,prior,moves,plain")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    forms = args.forms.split(",")
    fit4 = any((Path(d) / "fit4.csv").exists() for d in args.dirs)
    extra = " `madbayes fit`, 4 chains |" if fit4 else ""
    print("| data | PyIBP final (K), ms / sweep | sampler | " + " | ".join(forms) + " |" + extra)
    print("|---|---|---|" + "---|" * (len(forms) + fit4))
    for d in map(Path, args.dirs):
        with open(d / "pyibp" / "trace.csv", newline="") as f:
            py = [r for r in csv.reader(f) if r and r[0].isdigit()]
        final, seconds, k = float(py[-1][3]), float(py[-1][1]), py[-1][2]
        sweeps = int(py[-1][0])
        curves = defaultdict(list)
        with open(d / args.madbayes, newline="") as f:
            for r in csv.reader(f):
                if len(r) == 6 and r[2].isdigit():
                    curves[(r[0], r[1])].append((float(r[3]), float(r[5])))
        fits = {}
        if (d / "fit4.csv").exists():
            with open(d / "fit4.csv", newline="") as f:
                for r in csv.DictReader(f):
                    fits[r["algo"]] = (float(r["log_joint"]), r["k"])
        algos = {"collapsed": "ibp-gibbs", "semi": "ibp-semicollapsed",
                 "accelerated": "ibp-accelerated"}
        for kind in ("collapsed", "semi", "accelerated"):
            cells = []
            for form in forms:
                c = curves.get((kind, form))
                if not c:
                    cells.append("—")
                    continue
                reach = next((s for s, lj in c if lj >= final - 1e-3), None)
                soon = f"{seconds / reach:.0f}×" if reach else "never"
                per_sweep = (seconds / sweeps) / (c[-1][0] / len(c))
                cells.append(f"{c[-1][1] - final:+.0f} [{soon}] {per_sweep:.0f}×/sweep")
            if fit4:
                got = fits.get(algos[kind])
                cells.append(f"{got[0] - final:+.0f} ({got[1]})" if got else "—")
            head = f"{d.name} | {final:.0f} ({k}), {seconds / sweeps * 1000:.1f}"
            print(f"| {head} | {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
