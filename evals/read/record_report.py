"""Any run record as a report, and any two records of one kind side by side.

`evals report` and `evals compare --run-a --run-b` dispatch on the record's kind: a run log
gets the eval report and the paired comparison, a bench the bench report; every other kind
(gate, derived, fuzz, security, contract, load, scale) is shown here from its header and body
alone: what ran, on which commit and machine, how it ended, and the body's figures. Two
records of one kind are compared figure by figure (every number in both bodies, B - A and
B / A); that comparison states differences and judges none (no exit 1), since only run logs
carry the per-scenario pairs a significance test needs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from evals import render
from ocm_common.machine import one_line
from ocm_common.run_record import RunRecord

MAX_ROWS = 400  # figures shown per report; the record holds them all


def header_rows(record: RunRecord) -> list[list[str]]:
    h = record.header
    return [
        ["kind", h.kind],
        ["schema version", str(h.schema_version)],
        ["commit", f"{h.commit or '?'}{' (dirty)' if h.dirty else ''}"],
        ["machine", one_line(h.machine) if h.machine else "-"],
        ["target", h.target or "-"],
        ["settings", json.dumps(h.settings, sort_keys=True, default=str)],
        ["started", h.started],
        ["duration", f"{h.duration_s:.1f} s"],
        ["status", h.status],
        ["exit code", str(h.exit_code)],
    ]


def figures(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, leaf) for every number, string and boolean in a body; lists of plain
    values are one leaf, lists of objects are numbered."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from figures(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and any(isinstance(x, Mapping | list) for x in value):
        for number, item in enumerate(value):
            yield from figures(item, f"{prefix}[{number}]")
    elif value is not None:
        yield prefix, value


def _cell(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 200 else text[:197] + "..."


def document(path: Path, record: RunRecord) -> render.Document:
    doc = render.Document(f"{record.kind.capitalize()} record", meta=[f"record: {path}"])
    h = record.header
    doc.verdict = render.Paragraph(
        f"{h.status}; exit {h.exit_code}",
        "good" if h.status == "complete" else "bad",
    )
    doc.section("Header", render.Table(["field", "value"], header_rows(record)))
    rows = [[key, _cell(value)] for key, value in figures(record.body)]
    doc.section(
        "Body",
        render.Table(
            ["figure", "value"],
            rows[:MAX_ROWS],
            note=f"{len(rows)} figures; the first {MAX_ROWS} shown" if len(rows) > MAX_ROWS else "",
        ),
    )
    if record.files:
        doc.section("Files beside it", render.Bullets(record.files))
    return doc


def write(path: Path, record: RunRecord) -> dict[str, Path]:
    """``<kind>.report.md`` and ``.html`` beside the record."""
    return render.write(document(path, record), path.parent, f"{record.kind}.report")


def numbers(record: RunRecord) -> dict[str, float]:
    return {
        key: float(value)
        for key, value in figures(record.body)
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


def compare_document(a: RunRecord, b: RunRecord, label_a: str, label_b: str) -> render.Document:
    """Headers side by side, then every figure both bodies have: A, B, B - A, B / A."""
    doc = render.Document(
        f"{a.kind.capitalize()} records compared", meta=[f"A: {label_a}", f"B: {label_b}"]
    )
    rows_a, rows_b = header_rows(a), header_rows(b)
    doc.section(
        "Headers",
        render.Table(
            ["field", "A", "B"], [[x[0], x[1], y[1]] for x, y in zip(rows_a, rows_b, strict=True)]
        ),
    )
    na, nb = numbers(a), numbers(b)
    shared = [k for k in na if k in nb]
    rows = [
        [
            key,
            f"{na[key]:g}",
            f"{nb[key]:g}",
            f"{nb[key] - na[key]:+g}",
            f"{nb[key] / na[key]:.3f}" if na[key] else "-",
        ]
        for key in shared
        if na[key] != nb[key]
    ]
    doc.verdict = render.Paragraph(
        f"{len(rows)} of {len(shared)} shared figures differ; "
        f"{len(set(na) - set(nb))} only in A, {len(set(nb) - set(na))} only in B "
        "(stated, not judged: no exit 1)"
    )
    doc.section(
        "Figures that differ",
        render.Table(["figure", "A", "B", "B - A", "B / A"], rows[:MAX_ROWS]),
    )
    return doc
