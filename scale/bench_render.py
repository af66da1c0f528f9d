"""The corpus-scale bench's outputs for people: the console table, `scale.md` and `scale.png`.

Reads the result `scale.bench` measured (figures, index sizes, targets); measures nothing.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from ocm_common.percentiles import DEFINITION
from scale.bench_targets import ScaleFigures, ScaleResult


def render(result: ScaleResult, console: Console) -> str:
    factors = sorted(int(f) for f in result["scale"])
    table = Table(title="corpus scale: single-client p50/p95 (ms) and saturation calls/s per tool")
    table.add_column("tool")
    for f in factors:
        table.add_column(f"{f}x p50", justify="right")
        table.add_column(f"{f}x p95", justify="right")
        table.add_column(f"{f}x rps", justify="right")
        if f != 1:
            table.add_column(f"p95 {f}x/1x", justify="right")
            table.add_column(f"answer {f}x/1x", justify="right")
    md = [
        "| tool | "
        + " | ".join(
            f"{f}x p50 | {f}x p95 | {f}x calls/s"
            + (f" | p95 {f}x/1x | answer {f}x/1x" if f != 1 else "")
            for f in factors
        )
        + " |"
    ]
    md.append("|" + " --- |" * (1 + sum(5 if f != 1 else 3 for f in factors)))
    checks = result["targets"]
    for tool in sorted(result["scale"]["1"]):
        cells = []
        for f in factors:
            row = result["scale"][str(f)][tool]
            cells += [f"{row['p50_ms']:.1f}", f"{row['p95_ms']:.1f}", f"{row.get('rps', 0):.0f}"]
            if f != 1:
                check = checks.get(str(f))
                ratio = check["ratios"].get(tool) if check else None
                limit = check["limit"] if check else None
                interval = check["intervals_95"].get(tool) if check else None
                mark = "" if ratio is None or limit is None or ratio <= limit else " MISSED"
                shown = f" [{interval[0]:.2f}-{interval[1]:.2f}]" if interval else ""
                cells.append(f"{ratio:.2f}{shown}{mark}" if ratio is not None else "-")
                cells.append(_answer_growth(result["scale"], tool, f))
        table.add_row(tool, *cells)
        md.append(f"| {tool} | " + " | ".join(cells) + " |")
    console.print(table)
    note = (
        f"p50/p95: {DEFINITION}. p95 Nx/1x: the ratio, with its 95 % bootstrap interval in brackets (each factor's calls "
        "resampled on their own). answer Nx/1x: the reply's size against 1x. Tools that list matching records (a "
        "condition's tools, a topic's IPAC sections, stale documents) keep the best n_results "
        "(n_sections), so their answers grow with the corpus only up to that bound."
    )
    console.print(note)
    md += ["", note]
    index = Table(title="index per factor")
    for col in ("factor", "chunks", "size MB", "build s"):
        index.add_column(col, justify="right")
    md += ["", "| factor | chunks | size MB | build s |", "| --- | --- | --- | --- |"]
    for f in factors:
        i = result["index"][str(f)]
        cells = [f"{f}x", str(i["chunks"]), f"{i['bytes'] / 1e6:.0f}", str(i["build_s"])]
        index.add_row(*cells)
        md.append("| " + " | ".join(cells) + " |")
    console.print(index)
    return "\n".join(md) + "\n"


def _answer_growth(scale: ScaleFigures, tool: str, factor: int) -> str:
    base = scale["1"][tool].get("answer_bytes")
    grown = scale[str(factor)][tool].get("answer_bytes")
    return f"{grown / base:.1f}" if base and grown is not None else "-"


def plot(result: ScaleResult, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    factors = sorted(int(f) for f in result["scale"])
    tools = sorted(result["scale"]["1"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    # Twelve tools outnumber the default ten colours (two pairs of lines looked alike): each
    # tool gets its own colour from tab20, and every other line is dashed.
    palette = [plt.get_cmap("tab20")(k) for k in range(20)]
    for i, tool in enumerate(tools):
        style = {
            "marker": "o",
            "label": tool,
            "color": palette[(2 * i) % 20 + (i >= 10)],
            "linestyle": "--" if i % 2 else "-",
        }
        ax1.plot(factors, [result["scale"][str(f)][tool]["p95_ms"] for f in factors], **style)
        ax2.plot(factors, [result["scale"][str(f)][tool].get("rps", 0) for f in factors], **style)
    for ax, label in ((ax1, "single-client p95 (ms)"), (ax2, "saturation calls/s")):
        ax.set_xscale("log")
        ax.set_xticks(factors, [f"{f}x" for f in factors])
        ax.set_xlabel("corpus size")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    ax1.set_yscale("log")
    ax2.legend(fontsize=7, loc="upper right")
    fig.suptitle("How latency and throughput grow with the corpus (synthetic scale)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
