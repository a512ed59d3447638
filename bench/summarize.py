"""Markdown tables from the JSON lines that `run_clustering.sh` appends to bench/out/*.log.

Only the last run of each section is used (the part after the last `## <section>: start`).
Usage: python3 bench/summarize.py [bench/out]
"""

import json
import os
import sys


def last_run(path, section):
    if not os.path.exists(path):
        return [], ""
    lines = open(path).read().splitlines()
    starts = [i for i, l in enumerate(lines) if l.startswith(f"## {section}: start")]
    if not starts:
        return [], ""
    chunk = lines[starts[-1]:]
    rows = [json.loads(l) for l in chunk if l.startswith("{")]
    stamps = [l for l in chunk if l.startswith("## ")]
    return rows, "\n".join(f"`{s[3:]}`  " for s in stamps)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "out")

    rows, stamps = last_run(os.path.join(out, "lloyd.log"), "lloyd")
    print("### Lloyd: madbayes vs scikit-learn\n")
    print(stamps + "\n")
    print("| N | D | K | threads | iterations (sk / mb) | sklearn wall / iter | "
          "madbayes wall / iter | **wall mb ÷ sk** | sklearn CPU / iter | madbayes CPU / iter | "
          "CPU mb ÷ sk | objective rel. diff | load 1 min (before → after) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in (r for r in rows if "ratio" in r):
        print(f"| {r['n']} | {r['d']} | {r['k']} | {r['threads']} | {r['sk_n_iter']} / "
              f"{r['mb_n_iter']} | {r['sk_per_iter_s'] * 1e3:.1f} ms | "
              f"{r['mb_per_iter_s'] * 1e3:.1f} ms | **{r['ratio']:.2f}** | "
              f"{r['sk_cpu_per_iter_s'] * 1e3:.1f} ms | {r['mb_cpu_per_iter_s'] * 1e3:.1f} ms | "
              f"{r['cpu_ratio']:.2f} | {r['rel_diff']:.1e} | "
              f"{r['load_before'][0]:.2f} → {r['load_after'][0]:.2f} |")

    for name, section in (("dp", "dp-vs-km"), ("scaling", "scaling")):
        rows, stamps = last_run(os.path.join(out, f"{name}.log"), section)
        print(f"\n### {section}\n")
        print(stamps + "\n")
        print("| N | threads | P | K | DP sweeps | DP wall / iter | KM iters | KM wall / iter | "
              "**wall DP ÷ KM** | DP CPU / iter | KM CPU / iter | CPU DP ÷ KM | "
              "DP wall / iter / N | KM wall / iter / N | DP CPU / iter / N | KM CPU / iter / N |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['n']} | {r['threads']} | {r['penalty']:g} | {r['k']} | {r['dp_n_iter']} | "
                  f"{r['dp_per_iter_s'] * 1e3:.1f} ms | {r['km_n_iter']} | "
                  f"{r['km_per_iter_s'] * 1e3:.1f} ms | **{r['ratio_dp_over_km']:.2f}** | "
                  f"{r['dp_cpu_per_iter_s'] * 1e3:.1f} ms | {r['km_cpu_per_iter_s'] * 1e3:.1f} ms | "
                  f"{r['cpu_ratio_dp_over_km']:.2f} | "
                  f"{r['dp_per_iter_per_row_ns']:.0f} ns | {r['km_per_iter_per_row_ns']:.0f} ns | "
                  f"{r['dp_cpu_per_iter_per_row_ns']:.0f} ns | "
                  f"{r['km_cpu_per_iter_per_row_ns']:.0f} ns |")

    rows, stamps = last_run(os.path.join(out, "memory.log"), "memory")
    print("\n### Peak memory\n")
    print(stamps + "\n")
    print("| algorithm | N | D | K | iterations | fit time | data (f64) | VmHWM after data | "
          "VmHWM at end | peak ÷ data |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['algo']} | {r['n']} | {r['d']} | {r['k_found']} | {r['n_iter']} | "
              f"{r['fit_s']:.1f} s | {r['data_mb']:.0f} MB | {r['hwm_after_data_mb']:.0f} MB | "
              f"{r['peak_rss_mb']:.0f} MB | **{r['peak_over_data']:.3f}** |")


if __name__ == "__main__":
    main()
