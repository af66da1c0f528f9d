"""``security.json`` (the record) and ``security.md`` / ``security.html`` (the summary)
through the one renderer."""

from __future__ import annotations

import json
from pathlib import Path

from evals.render import Bullets, Document, Paragraph, Table, write
from evals.run.security.findings import SecurityReport
from ocm_common.run_record import RecordHeader, write_record

JSON_FILE = "security.json"


def document(report: SecurityReport) -> Document:
    doc = Document(
        title="Security checks",
        meta=[
            f"target `{report.target}`",
            f"{report.calls} tool call(s)",
            f"{report.duration_s:.1f} s",
        ],
    )
    if report.error:
        doc.verdict = Paragraph(f"harness error: {report.error}", "bad")
    elif report.errors:
        doc.verdict = Paragraph(f"{len(report.errors)} finding(s) at error level", "bad")
    elif report.called_nothing and not report.findings:
        doc.verdict = Paragraph(
            f"0 calls: {report.skipped_line()}; the call-based checks checked nothing", "warn"
        )
    else:
        warn = len(report.findings)
        doc.verdict = Paragraph(
            "no finding at error level" + (f" ({warn} warning(s))" if warn else ""),
            "warn" if warn else "good",
        )
    rows = [
        [f.check, f.grade, f.level, f.tool or "", f.message, f.evidence or "", f.reproduction or ""]
        for f in report.findings
    ]
    doc.section(
        "Findings",
        Table(
            ["check", "grade", "level", "tool", "what", "evidence", "reproduce"],
            rows,
            tones=["bad" if f.level == "error" else "warn" for f in report.findings],
            note="" if rows else "none",
        ),
    )
    silent = set(report.families_without_calls)
    doc.section(
        "Checks",
        Table(
            ["check", "family", "findings"],
            [
                [n, fam, "not checked: made no calls" if fam in silent else str(report.count(n))]
                for n, fam in sorted(report.checks.items())
            ],
        ),
    )
    if report.reach:
        doc.section(
            "Reach",
            Table(
                ["tool", "probe", "reached", "refused (the probe's value)", "could not reach"],
                [
                    [
                        row["tool"],
                        row["probe"],
                        str(row["reached"]),
                        str(row["refused"]),
                        "; ".join(row["could_not_reach"]),
                    ]
                    for row in report.reach
                ],
                tones=[
                    "bad" if row["reached"] + row["refused"] == 0 else "neutral"
                    for row in report.reach
                ],
                note="each probe's last call; a call that could not reach its tool checked nothing",
            ),
        )
    if report.skipped:
        doc.section(
            "Tools not called",
            Table(["tool", "why"], [[s.tool, s.reason] for s in report.skipped]),
        )
    if report.notes:
        doc.section("Notes", Bullets(report.notes))
    return doc


def write_report(
    report: SecurityReport, out: Path, head: RecordHeader | None = None
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / JSON_FILE
    path.write_text(
        json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    if head is not None:
        write_record(out, head, report.to_json(), [JSON_FILE, "security.md", "security.html"])
    return {"json": path, **write(document(report), out, "security")}
