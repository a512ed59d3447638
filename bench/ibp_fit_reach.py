"""PyIBP's final log joint against `madbayes fit` as a user runs it (issue 11, item 4).

For each data set that bench/run_ibp_curves.sh prepared (a folder holding x.csv, setting.txt
and PyIBP's chain in pyibp/trace.csv), this runs `madbayes fit` with PyIBP's fixed α, σ_X,
σ_A and otherwise the defaults (four chains on two threads, the given σ_X tempered over the
first quarter of the sweeps, then fixed; the answer is the chain of highest final log
joint), for each IBP sampler, and prints one Markdown row per run:

- PyIBP's final log joint and its sampling time for its whole chain;
- the final (K, log joint) of each of the four chains;
- the first sweep after the tempering at which the answered chain is at or above PyIBP's
  final value, and that chain's own sampling seconds then (before the tempering ends the
  chain's log joint is at another σ_X, so those sweeps are not compared);
- the whole fit's wall time (reading, four chains, diagnostics, writing) and what fraction
  of PyIBP's time it is.

    python bench/ibp_fit_reach.py --madbayes target/release/madbayes \\
        --data bench/out/ibp_curves/100-seed1-cpu,bench/out/ibp_curves/500-seed1-cpu \\
        [--iterations 1000] [--seed 1001]
"""

import argparse
import csv
import json
import os
import subprocess
import tempfile
import time

SAMPLERS = ["ibp-gibbs", "ibp-semicollapsed", "ibp-accelerated"]


def pyibp_final(folder):
    rows = list(csv.DictReader(open(os.path.join(folder, "pyibp", "trace.csv"))))
    last = rows[-1]
    return float(last["log_joint"]), float(last["seconds"]), int(last["iteration"])


def setting(folder):
    name, alpha, sigma_x, sigma_a = open(os.path.join(folder, "setting.txt")).read().strip().split("|")
    return name, alpha, sigma_x, sigma_a


def fit(binary, folder, algo, alpha, sigma_x, sigma_a, iterations, seed):
    out = tempfile.mkdtemp(prefix="ibp_fit_reach_")
    cmd = [binary, "fit", os.path.join(folder, "x.csv"), "--algo", algo, "--alpha", alpha,
           "--sigma-x", sigma_x, "--sigma-a", sigma_a, "--iterations", str(iterations),
           "--seed", str(seed), "--out", out]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    summary = json.load(open(os.path.join(out, "summary.json")))
    trace = list(csv.DictReader(open(os.path.join(out, "trace.csv"))))
    return summary, trace, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--madbayes", required=True)
    ap.add_argument("--data", required=True, help="comma-separated folders")
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1001)
    args = ap.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}, {time.strftime('%H:%M:%S', time.gmtime())} UTC")
    print("| data | sampler | PyIBP final (s) | chains' final K: log joint | "
          "reached after tempering (chain s, × sooner) | fit wall (÷ PyIBP's time) |")
    print("|---|---|---|---|---|---|")
    for folder in args.data.split(","):
        name, alpha, sigma_x, sigma_a = setting(folder)
        target, py_seconds, _ = pyibp_final(folder)
        for algo in SAMPLERS:
            summary, trace, wall = fit(args.madbayes, folder, algo, alpha, sigma_x, sigma_a,
                                       args.iterations, args.seed)
            chains = " ".join(f"{c['final']['k']}: {c['final']['log_joint']:.1f}"
                              for c in summary["chains"])
            tempered = args.iterations // 4
            first = next((r for r in trace if int(r["iteration"]) > tempered
                          and float(r["log_joint"]) >= target), None)
            if first is None:
                reach = "not reached"
            else:
                s = float(first["seconds"])
                reach = f"sweep {first['iteration']}, {s:.3f} s ({py_seconds / s:.0f}×)"
            print(f"| {name} | {algo} | {target:.1f} ({py_seconds:.1f} s) | {chains} | {reach} "
                  f"| {wall:.2f} s (1/{py_seconds / wall:.0f}) |", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}, {time.strftime('%H:%M:%S', time.gmtime())} UTC")


if __name__ == "__main__":
    main()
