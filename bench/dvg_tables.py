"""Markdown tables from the JSON lines `bash bench/run_ibp.sh dvg` appends to bench/out/dvg.log.

Only the last run is used (the part after the last `## dvg: start`).
Usage: python3 bench/dvg_tables.py [bench/out/dvg.log]
"""

import json
import os
import sys


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "out", "dvg.log")
    lines = open(path).read().splitlines()
    starts = [i for i, l in enumerate(lines) if l.startswith("## dvg: start")]
    chunk = lines[starts[-1]:] if starts else lines
    for l in chunk:
        if l.startswith("## "):
            print(f"`{l[3:]}`  ")
    rows = [json.loads(l) for l in chunk if l.startswith("{")]
    truth = {(r["data"], r["n"]): r for r in rows if r["cmd"] == "dvg-truth"}
    runs = [r for r in rows if r["cmd"] == "dvg"]
    print()
    print("| data | N | start | sampler | ms / iteration | effective N (K) | effective N (log-lik) "
          "| ESS / s (log-lik) | test L2 / entry | test log-lik / entry | burn-in | K (final 5) "
          "| training log-lik, 2nd half, by chain |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in runs:
        chains = ", ".join(f"{v:.0f}" for v in r["train_loglik_second_half_by_chain"])
        print(f"| {r['data']} | {r['n']} | {r['start']} | {r['sampler']} "
              f"| {1e3 * r['iteration_s']:.3g} | {r['eff_n_k']:.4f} | {r['eff_n_loglik']:.4f} "
              f"| {r['ess_per_s_loglik']:.3g} | {r['test_l2']:.3f} | {r['test_loglik']:.3f} "
              f"| {r['burn_in']:.0f} | {r['k_final5']:.1f} | {chains} |")
    print()
    print("| data | N | true K | σ_X | σ_A | training log-lik | test L2 / entry | test log-lik / entry |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for (data, n), t in sorted(truth.items()):
        print(f"| {data} | {n} | {t['k_true']} | {t['sigma_x']:.3f} | {t['sigma_a']:.3f} "
              f"| {t['train_loglik']:.0f} | {t['test_l2']:.3f} | {t['test_loglik']:.3f} |")


if __name__ == "__main__":
    main()
