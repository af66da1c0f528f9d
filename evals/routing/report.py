"""The routing record -> routing.json, routing.md and routing.html (scale curve and per-tool
plots inline), and the floors check the gate applies."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from evals.routing.run import RoutingRecord

FLOORS = Path(__file__).with_name("floors.yaml")


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def check_floors(record: RoutingRecord, path: Path = FLOORS) -> list[str]:
    """Each floor (step, mode, metric, minimum) the record falls below, in words; a metric
    named `strict_<m>` is read from the strict (own tool only) summary."""
    floors = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    steps = {s["name"]: s for s in record["steps"]}
    failures = []
    for step_name, modes in (floors.get("steps") or {}).items():
        step = steps.get(step_name)
        if step is None:
            continue  # a step this run did not measure (other catalogues)
        for mode, metrics in modes.items():
            body = step["modes"].get(mode)
            if body is None:
                continue
            for metric, minimum in metrics.items():
                strict = metric.startswith("strict_")
                got = body["strict"] if strict else body["overall"]
                value = got[metric.removeprefix("strict_")] if got else None
                if value is not None and value < minimum:
                    failures.append(f"{step_name} {mode} {metric} {value:.4f} < floor {minimum}")
    return failures


def floors_not_applied(record: RoutingRecord, path: Path = FLOORS) -> str | None:
    """Why the floors cannot judge this run (None: they can): they were measured on another
    case set, so a run on changed cases would be red or green for the cases, not the search."""
    floors = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    measured = floors.get("cases") or {}
    wanted = measured.get("fingerprint")
    got = record.get("cases_fingerprint")
    if wanted is None or wanted == got:
        return None
    return (
        f"the floors were measured on {measured.get('count', '?')} cases (fingerprint {wanted}); "
        f"this run asked {record['cases']} (fingerprint {got}). Measure them again on these "
        "cases with `ocm routing ... --write-floors`."
    )


def measured_floors(record: RoutingRecord, below: float = 0.01) -> dict[str, Any]:
    """Floors `below` under this run's every step and metric (rounded down to 0.005), with the
    case set they hold for."""
    steps: dict[str, Any] = {}
    for step in record["steps"]:
        modes: dict[str, Any] = {}
        for mode, body in step["modes"].items():
            metrics = {}
            for prefix, summary in (("", body["overall"]), ("strict_", body["strict"])):
                for metric in ("top1", "top3", "mrr"):
                    if summary and summary.get(metric) is not None:
                        value = math.floor((summary[metric] - below) * 200) / 200
                        metrics[prefix + metric] = round(max(0.0, value), 3)
            modes[mode] = metrics
        steps[step["name"]] = modes
    return {
        "cases": {"count": record["cases"], "fingerprint": record["cases_fingerprint"]},
        "steps": steps,
    }


def markdown(record: RoutingRecord, failures: list[str]) -> str:
    lines = ["# Routing evaluation", ""]
    lines.append(
        f"Cases: {record['cases']} ({', '.join(record['case_sources'])}); catalogues: "
        f"{', '.join(record['catalogues'])}; distractors: {record['distractors']['count']} "
        f"(seed {record['distractors']['seed']})."
    )
    lines.append(f"Machine: {record.get('machine_line', '')}")
    lines += [
        "",
        "## Scale curve",
        "",
        "Accepting: any tool that answers the case counts (by the tools' specs); strict: only",
        "the case's own tool.",
        "",
        "| step | tools | mode | cases | top-1 | top-3 | MRR | strict top-1 | strict top-3 | strict MRR |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for step in record["steps"]:
        for mode, body in step["modes"].items():
            o = body["overall"]
            st = body.get("strict") or o
            lines.append(
                f"| {step['name']} | {step['tools']} | {mode} | {o['cases']} | {_pct(o['top1'])} | {_pct(o['top3'])} | {o['mrr']:.3f} "
                f"| {_pct(st['top1'])} | {_pct(st['top3'])} | {st['mrr']:.3f} |"
            )
    for step in (record["steps"][0], record["steps"][-1]):
        hybrid = step["modes"].get("hybrid")
        if not hybrid:
            continue
        lines += [
            "",
            f"## {step['name']} ({step['tools']} tools), hybrid",
            "",
            "| per tool | cases | top-1 | top-3 | MRR | strict top-1 | strict top-3 |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        strict_tools = hybrid.get("strict_per_tool") or hybrid["per_tool"]
        for tool, o in hybrid["per_tool"].items():
            st = strict_tools.get(tool, o)
            lines.append(
                f"| {tool} | {o['cases']} | {_pct(o['top1'])} | {_pct(o['top3'])} | {o['mrr']:.3f} "
                f"| {_pct(st['top1'])} | {_pct(st['top3'])} |"
            )
        lines += [
            "",
            "| per catalogue | cases | top-1 | top-3 | MRR |",
            "|---|---:|---:|---:|---:|",
        ]
        for cat, o in hybrid["per_catalogue"].items():
            lines.append(
                f"| {cat} | {o['cases']} | {_pct(o['top1'])} | {_pct(o['top3'])} | {o['mrr']:.3f} |"
            )
        lines += [
            "",
            "| per case source | cases | top-1 | top-3 | MRR |",
            "|---|---:|---:|---:|---:|",
        ]
        for src, o in hybrid["per_source"].items():
            lines.append(
                f"| {src} | {o['cases']} | {_pct(o['top1'])} | {_pct(o['top3'])} | {o['mrr']:.3f} |"
            )
        lines += [
            "",
            "Confusion (top-1 misses: whose questions went to which tool):",
            "",
            "| expected | ranked first | cases |",
            "|---|---|---:|",
        ]
        for row in hybrid["confusion"][:20]:
            lines.append(f"| {row['expected']} | {row['ranked_first']} | {row['cases']} |")
    lines += ["", "## Floors", ""]
    not_applied = record.get("floors_not_applied")
    if not_applied:
        lines.append(f"- NOT APPLIED: {not_applied}")
    else:
        lines += [f"- FAILED: {f}" for f in failures] or ["- every floor met"]
    return "\n".join(lines) + "\n"


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plots(record: RoutingRecord) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    fig, ax = plt.subplots(figsize=(7, 4))
    sizes = [s["tools"] for s in record["steps"]]
    for mode in record["steps"][0]["modes"]:
        for metric, style in (("top1", "-o"), ("top3", "--s")):
            ax.plot(
                sizes,
                [s["modes"][mode]["overall"][metric] for s in record["steps"]],
                style,
                label=f"{mode} {metric}",
            )
    ax.set_xscale("log")
    ax.set_xlabel("tools in the catalogue")
    ax.set_ylabel("share of cases")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("Routing accuracy as the catalogue grows")
    out.append(("Scale curve", _png(fig)))
    plt.close(fig)
    last = record["steps"][-1]["modes"].get("hybrid")
    if last:
        tools = list(last["per_tool"])
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(tools) + 1))
        ax.barh(tools, [last["per_tool"][t]["top3"] for t in tools], label="top-3", color="#9ecae1")
        ax.barh(tools, [last["per_tool"][t]["top1"] for t in tools], label="top-1", color="#3182bd")
        ax.set_xlim(0, 1)
        ax.legend(fontsize=7)
        ax.set_title(f"Per tool, hybrid, {record['steps'][-1]['tools']} tools")
        out.append(("Per tool at the largest catalogue", _png(fig)))
        plt.close(fig)
    return out


def html_page(record: RoutingRecord, md: str) -> str:
    figures = "".join(
        f"<h2>{html.escape(title)}</h2><img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>"
        for title, data in plots(record)
    )
    return (
        "<!doctype html><meta charset='utf-8'><title>Routing evaluation</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}</style>"
        f"{figures}<h2>Tables</h2><pre>{html.escape(md)}</pre>"
    )


def write(record: RoutingRecord, out: Path, floors: Path = FLOORS) -> tuple[list[str], str | None]:
    """The report files; returns the floors failed and why the floors could not judge (None:
    they could)."""
    out.mkdir(parents=True, exist_ok=True)
    not_applied = floors_not_applied(record, floors)
    failures = [] if not_applied else check_floors(record, floors)
    record = {**record, "floors_failed": failures}
    if not_applied:
        record["floors_not_applied"] = not_applied
    (out / "routing.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    md = markdown(record, failures)
    (out / "routing.md").write_text(md, encoding="utf-8")
    (out / "routing.html").write_text(html_page(record, md), encoding="utf-8")
    return failures, not_applied
