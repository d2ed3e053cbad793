"""Thread scaling of benchmarks/lda_record.py: several of its records (one per thread
count, the same corpus, K and checkpoints) in one summary and one figure.

For every thread count and tool: seconds to that run's target held-out log-likelihood,
the ratio to WarpLDA's in the same run, training tokens per second, and the speed-up of
the tokens per second over the tool's own one-thread run (where there is one).  The
figure has two panels: seconds to the target and tokens per second against threads.

    python benchmarks/lda_record_scaling.py benchmarks/results/lda_record_X_device_*threads.json \\
        --out benchmarks/results/lda_record_X_device_threads.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """One row per (threads, tool) from lda_record records of a single K."""
    Ks = {K for r in records for K in r["results"]}
    if len(Ks) != 1:
        raise SystemExit(f"the records must hold one K, got {sorted(Ks)}")
    K = Ks.pop()
    rows: dict[str, dict[str, Any]] = {}
    for rec in sorted(records, key=lambda r: r["threads"]):
        entry = rec["results"][K]
        for tool, r in entry["tools"].items():
            if "tokens_per_second" not in r:
                continue
            rows.setdefault(tool, {})[str(rec["threads"])] = {
                "seconds_to_target": entry["seconds_to_target"].get(tool),
                "ratio_to_warplda": entry["ratio_to_warplda"].get(tool),
                "tokens_per_second": r["tokens_per_second"],
                "final_heldout_ll": r["heldout_ll"][-1],
                "peak_rss_mib": r.get("peak_rss_mib"),
                "shards": r.get("shards"),
            }
    for by_threads in rows.values():
        one = by_threads.get("1")
        for row in by_threads.values():
            row["tokens_speedup_over_1_thread"] = (
                row["tokens_per_second"] / one["tokens_per_second"] if one else None)
    first = records[0]
    return {"benchmark": "lda_record_scaling", "corpus": first["corpus"], "K": int(K),
            "checkpoints": first["checkpoints"], "protocol": first["protocol"],
            "machine": first["machine"], "threads": sorted(r["threads"] for r in records),
            "targets": {str(r["threads"]): r["results"][K].get("target_heldout_ll")
                        for r in records},
            "tools": rows}


def plot(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for tool, by_threads in summary["tools"].items():
        ts = sorted(by_threads, key=int)
        x = [int(t) for t in ts]
        a.plot(x, [by_threads[t]["seconds_to_target"] for t in ts], marker="o", label=tool)
        b.plot(x, [by_threads[t]["tokens_per_second"] / 1e6 for t in ts], marker="o",
               label=tool)
    for ax, label in ((a, "seconds to the target held-out LL"),
                      (b, "training tokens per second (millions)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("threads")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    fig.suptitle(f"{summary['corpus']}, K = {summary['K']}, "
                 f"{summary['machine'].get('processor', '')}, "
                 f"{summary['machine'].get('cpu_count')} cores")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    summary = summarise([json.loads(p.read_text()) for p in args.records])
    summary["records"] = [p.name for p in args.records]
    args.out.write_text(json.dumps(summary, indent=1))
    plot(summary, args.out.with_suffix(".png"))
    for tool, by_threads in summary["tools"].items():
        print(tool, "  ".join(
            f"{t}: {r['seconds_to_target']:.2f} s ({r['tokens_per_second'] / 1e6:.1f} M/s)"
            if r["seconds_to_target"] is not None else f"{t}: -"
            for t, r in sorted(by_threads.items(), key=lambda kv: int(kv[0]))))
    return summary


if __name__ == "__main__":
    main()
