"""Write benchmarks/results/results.md and time_vs_rows.png from results.json.

    python benchmarks/report.py [benchmarks/results/results.json]

Needs matplotlib for the plot (benchmarks/.venvs/report has it; it is not a
package dependency). Without matplotlib only the Markdown is written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LABEL = {
    "rankmetrics": "polars_rankmetrics",
    "floor": "floor (bare Polars)",
}
METRICS = ("map@10", "ndcg@10", "mrr@10")
TARGETS_DOC = """\
Targets (from the issue; they are set for 10M and 100M rows, the small set only shows the
trend: there fixed costs dominate), checked at every size that ran:

- **vs peers**: `evaluate` (eager, from Polars frames in memory) at least 3x faster than the
  fastest peer end to end, also when that peer gets recommendations already cut to the top k.
- **vs floor**: within 2x of the join floor (the core issue's script `floor.py` asks 1.5x).
- **memory**: peak memory no more than 2x the size of the input frames. Shown two ways: the
  RSS that evaluating adds on top of the resident inputs (Δ RSS, the target's reading here),
  and the whole process's peak (inputs and interpreter included).
- **pandas**: from pandas frames within 1.3x of the Polars time.
- **ranks from scores / graded NDCG**: within 1.5x of the rank-given binary case.
"""


def _mib(b) -> str:
    return "" if b is None or b < 0 else f"{b / 2**20:,.0f}"


def _s(x) -> str:
    if x is None:
        return ""
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _name(r: dict) -> str:
    return f"{LABEL.get(r['impl'], r['impl'])} · {r['variant']}"


def _find(rows: list[dict], impl: str, variant: str) -> dict | None:
    for r in rows:
        if r["impl"] == impl and r["variant"] == variant and r.get("status") == "ok":
            return r
    return None


def size_table(size: dict) -> list[str]:
    rows = size["rows"]
    floor = _find(rows, "floor", "join")
    ours = _find(rows, "rankmetrics", "eager")
    in_bytes = ours["input_bytes"] if ours else (floor or {}).get("input_bytes")
    out = [
        "| implementation · variant | median s | min s | n | phases (median s) | peak RSS MiB "
        "| Δ RSS MiB | Δ RSS / input | × join floor | × ours (eager) | agrees with ours | load |",
        "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|---|--:|",
    ]
    for r in rows:
        if r.get("status") != "ok":
            out.append(
                f"| {_name(r)} | **{r['status']}** | | | {r.get('error', '')[:120]} "
                f"| {_mib(r.get('process_maxrss'))} | | | | | | |"
            )
            continue
        med = r["median_s"]
        phases = ", ".join(f"{k} {_s(v)}" for k, v in r.get("phases", {}).items())
        ag = r.get("agreement")
        if r["impl"] == "floor" or ag is None:
            agrees = ""
        else:
            bad = [a["metric"] for a in ag if not a["agrees"]]
            agrees = "yes" if not bad else "NO: " + ", ".join(bad)
        ratio_in = (r["extra_rss"] / in_bytes) if in_bytes and r.get("extra_rss", -1) >= 0 else None
        x_in = "" if ratio_in is None else f"{ratio_in:.2f}"
        x_floor = "" if not floor else f"{med / floor['median_s']:.1f}"
        x_ours = "" if not ours else f"{med / ours['median_s']:.2f}"
        out.append(
            f"| {_name(r)} | {_s(med)} | {_s(r['min_s'])} | {len(r['times'])} | {phases} "
            f"| {_mib(r['peak_rss'])} | {_mib(r['extra_rss'])} | {x_in} | {x_floor} | {x_ours} "
            f"| {agrees} | {r.get('loadavg_1m', float('nan')):.1f} |"
        )
    out.append("")
    out.append(
        f"Input frames (Polars, in memory): {_mib(in_bytes)} MiB. "
        "Δ RSS: peak RSS while evaluating minus RSS just before. "
        "× ours > 1 means slower than this package's eager `evaluate`. load: the "
        "machine's 1-minute load average when the run ended (2 cores: above 2 means "
        "other work competed for the CPU)."
    )
    return out


def targets(size: dict) -> list[str]:
    rows = size["rows"]
    ours = _find(rows, "rankmetrics", "eager")
    if ours is None:
        return ["(this package's eager run did not complete: no targets checked)"]
    t = ours["median_s"]
    lines = ["| target | measured | verdict |", "|---|---|---|"]

    def add(name: str, measured: str, ok: bool | None) -> None:
        verdict = "n/a" if ok is None else ("PASS" if ok else "**MISS**")
        lines.append(f"| {name} | {measured} | {verdict} |")

    for kind, label in (("full", "full lists"), ("topk", "lists cut to top 10")):
        peers = [
            r
            for r in rows
            if r["impl"] not in ("rankmetrics", "floor", "reference")
            and (r["variant"] == kind or (kind == "full" and r["variant"].endswith("-full")))
            and r.get("status") == "ok"
        ]
        failed = [
            r
            for r in rows
            if r["impl"] not in ("rankmetrics", "floor", "reference")
            and r["variant"] == kind
            and r.get("status") != "ok"
        ]
        if peers:
            best = min(peers, key=lambda r: r["median_s"])
            sp = best["median_s"] / t
            add(
                f"≥ 3x faster than the fastest peer ({label})",
                f"{sp:.2f}x vs {_name(best)} ({_s(best['median_s'])} s vs {_s(t)} s)"
                + (f"; {len(failed)} peer(s) failed" if failed else ""),
                sp >= 3,
            )
    floor = _find(rows, "floor", "join")
    if floor:
        f = t / floor["median_s"]
        add("≤ 2x the join floor", f"{f:.2f}x ({_s(t)} s vs {_s(floor['median_s'])} s)", f <= 2)
        add("≤ 1.5x the join floor (floor.py)", f"{f:.2f}x", f <= 1.5)
    if ours.get("input_bytes"):
        ib = ours["input_bytes"]
        add(
            "Δ RSS ≤ 2x input frames",
            f"{ours['extra_rss'] / ib:.2f}x "
            f"({_mib(ours['extra_rss'])} of {_mib(ib)} MiB); whole-process peak "
            f"{ours['peak_rss'] / ib:.2f}x",
            ours["extra_rss"] <= 2 * ib,
        )
    for variant, limit, name in (
        ("pandas", 1.3, "from pandas ≤ 1.3x Polars"),
        ("eager-score", 1.5, "ranks from scores ≤ 1.5x (lists come in rank order)"),
        ("eager-score-shuffled", 1.5, "ranks from scores ≤ 1.5x (rows shuffled)"),
        ("eager-graded", 1.5, "graded NDCG ≤ 1.5x"),
    ):
        r = _find(rows, "rankmetrics", variant)
        if r is None:
            failed = next(
                (x for x in rows if x["impl"] == "rankmetrics" and x["variant"] == variant), None
            )
            add(
                name,
                "did not run: " + (failed or {}).get("error", "?")[:100] if failed else "not run",
                None,
            )
        else:
            f = r["median_s"] / t
            add(name, f"{f:.2f}x ({_s(r['median_s'])} s)", f <= limit)
    fs, es = _find(rows, "floor", "join-str"), _find(rows, "rankmetrics", "eager-str")
    if fs and es:
        f = es["median_s"] / fs["median_s"]
        add(
            "string ids: ≤ 2x the join floor on the same string ids",
            f"{f:.2f}x ({_s(es['median_s'])} s vs {_s(fs['median_s'])} s)",
            f <= 2,
        )
    for variant in ("lazy", "streaming"):
        r = _find(rows, "rankmetrics", variant)
        if r:
            lines.append(f"| ({variant}: {r['median_s'] / t:.2f}x eager, no target) | | |")
    return lines


def agreement_section(ag: dict) -> list[str]:
    out = [
        f'Data: `{ag["data"]}`. Tolerance 1e-6. "ours" is this package evaluated with the '
        'peer\'s conventions; "our default" is what this package returns by default.',
        "",
    ]
    pvr = ag.get("package_vs_reference")
    if pvr:
        bad = [k for k, v in pvr.items() if not v["agrees"]]
        out.append(
            "This package vs the independent bare-Polars reference (benchmarks/impls/"
            "reference.py), every convention: "
            + ("all agree." if not bad else "**differ** on " + ", ".join(bad))
        )
        out.append("")
    out += [
        "| peer | metric | peer's convention | peer | ours (same convention) | agrees "
        "| our default |",
        "|---|---|---|--:|--:|---|--:|",
    ]
    for peer, e in ag["peers"].items():
        if e.get("status") != "ok":
            out.append(f"| {peer} | | | **{e.get('status')}** {str(e.get('error'))[:100]} | | | |")
            continue
        for row in e.get("rows", []):
            dflt = "" if row["ours_default"] is None else f"{row['ours_default']:.6f}"
            out.append(
                f"| {peer} | {row['metric']} | `{row['convention']}` | {row['peer']:.6f} "
                f"| {row['ours']:.6f} | {'yes' if row['agrees'] else '**NO**'} | {dflt} |"
            )
        for m, why in e.get("missing", {}).items():
            out.append(f"| {peer} | {m} | | n/a: {why} | | | |")
    return out


def plot(data: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    series: dict[str, list[tuple[int, float | None, str]]] = {}
    for size in data["sizes"].values():
        n = size["size"]["rows"]
        for r in size["rows"]:
            if r["variant"] in (
                "pandas-full",
                "eager-score",
                "eager-score-shuffled",
                "join-str",
                "eager-str",
            ):
                continue
            series.setdefault(_name(r), []).append(
                (n, r.get("median_s") if r.get("status") == "ok" else None, r.get("status"))
            )
    fig, ax = plt.subplots(figsize=(10, 7))
    ymax = max((t for s in series.values() for _, t, _ in s if t), default=1.0)
    cmap = plt.get_cmap("tab20")
    impls = sorted({k.split(" · ")[0] for k in series})
    ours_variants = sorted(k for k in series if k.startswith("polars_rankmetrics"))
    failed: dict[tuple[int, str], list[str]] = {}
    for key, pts in sorted(series.items()):
        pts.sort()
        impl, variant = key.split(" · ")
        ok = [(n, t) for n, t, _ in pts if t]
        if impl == "polars_rankmetrics":
            color = cmap(2 * ours_variants.index(key) % 20)
            style, lw = "-", (3.0 if variant == "eager" else 1.5)
        elif impl.startswith("floor"):
            color, style, lw = "black", ("-" if variant == "join" else "-."), 1.5
        else:
            color = cmap((2 * impls.index(impl) + 1) % 20)
            style, lw = ("--" if variant == "full" else ":"), 1.3
        if ok:
            ax.plot(*zip(*ok, strict=True), style, marker="o", ms=4, lw=lw, color=color, label=key)
        for n, t, status in pts:
            if t is None:
                ax.plot([n], [ymax * 2], "x", ms=9, color=color)
                failed.setdefault((n, status), []).append(key)
    if failed:
        text = "\n".join(
            f"x at {n:,} rows, {status}: " + ", ".join(sorted(keys))
            for (n, status), keys in sorted(failed.items())
        )
        ax.text(
            0.99,
            0.01,
            text,
            transform=ax.transAxes,
            fontsize=6.5,
            ha="right",
            va="bottom",
            bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "0.7"},
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("recommendation rows")
    ax.set_ylabel("median wall time, s (map@10 + ndcg@10 + mrr@10)")
    m = data.get("machine", {})
    ax.set_title(
        f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('ram_gib', '?')} GiB", fontsize=9
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6.5, loc="upper left", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else HERE / "results" / "results.json"
    data = json.loads(path.read_text())
    out_dir = path.parent
    m = data.get("machine", {})
    lines = [
        "# Benchmark results",
        "",
        "Generated by `benchmarks/run.py` (see benchmarks/README.md); task: map@10 + ndcg@10 + "
        "mrr@10, one mean per metric over the truth users, from frames already in memory.",
        "",
        f"Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('ram_gib', '?')} GiB "
        f"RAM, {m.get('platform', '?')}, Python {m.get('python', '?')}, Polars "
        f"{m.get('polars', '?')} ({m.get('polars_threads', '?')} threads); package at commit "
        f"{m.get('commit', '?')}. Rows of one size can come from different runs (a re-run "
        "replaces only its own rows): the load column tells how busy the machine was.",
        "",
    ]
    runs = data.get("runs", [])
    if runs:
        lines.append("Runs whose rows are in this file (latest last):")
        lines.append("")
        lines += [
            f"- `python benchmarks/run.py {' '.join(r['argv'])}` ({r['started']})" for r in runs
        ]
        lines.append("")
    peers = data.get("peers", {})
    if peers:
        lines.append(
            "Peers: "
            + "; ".join(
                f"{p}: "
                + (
                    ", ".join(f"{k} {v}" for k, v in (d.get("versions") or {}).items())
                    if d.get("status") == "ok"
                    else f"**{d.get('status')}**"
                )
                for p, d in peers.items()
            )
            + "."
        )
        lines.append("")
    if plot(data, out_dir / "time_vs_rows.png"):
        lines += ["![time vs rows](time_vs_rows.png)", ""]
    order = {"small": 0, "medium": 1, "large": 2, "huge": 3}
    for name, size in sorted(data["sizes"].items(), key=lambda kv: order.get(kv[0], 9)):
        s = size["size"]
        lines += [f"## {name}: {s['users']:,} users × {s['recs']} = {s['rows']:,} rows", ""]
        lines += size_table(size)
        lines += ["", "### Targets", ""]
        lines += targets(size)
        lines.append("")
    lines += ["## Targets", "", TARGETS_DOC]
    if data.get("agreement"):
        lines += ["## Agreement check (run before timing)", ""]
        lines += agreement_section(data["agreement"])
        lines.append("")
    ooc = out_dir / "out_of_core.json"
    if ooc.exists():
        o = json.loads(ooc.read_text())
        lines += ["## Beyond memory: streaming a Parquet file larger than RAM", ""]
        lines += [
            f"`{o.get('command')}` over {o['rows']:,} recommendation rows ({o['users']:,} users "
            f"x 100; {o['in_memory_gib']} GiB in memory as Int64/Int64/Int32/Float64, more than "
            f"the {o['ram_gib']} GiB of RAM; {o['parquet_gib']} GiB of Parquet in 200 files, "
            f"generated in {o['generate_s']} s and deleted afterwards), on {o['machine']}, "
            f"{o['date']}.",
            "",
            "| query | status | wall s | peak RSS GiB |",
            "|---|---|--:|--:|",
        ]
        for task, label in (
            ("evaluate", "evaluate, streaming engine"),
            ("floor", "join floor, streaming engine"),
        ):
            t = o.get(task)
            if t:
                lines.append(
                    f"| {label} | {t['status']} | {t.get('seconds', float('nan')):.1f} "
                    f"| {t['peak_rss_gib']} |"
                )
        if o.get("values"):
            lines += [
                "",
                "Values: "
                + ", ".join(f"{k} {v:.6f}" for k, v in o["values"].items())
                + " (the same generator as the smaller sets; compare e.g. the large set's).",
            ]
        lines.append("")
    demo = out_dir / "demo_size.json"
    if demo.exists():
        from demo_size import section  # this folder's script, imported on use

        lines += section(json.loads(demo.read_text()))
    (out_dir / "results.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out_dir / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
