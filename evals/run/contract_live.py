"""Contract diff of two live servers, no golden files: list both targets' tools (every member
of each ``tools/list`` entry, as published: names, titles, descriptions, annotations, input and
output schemas down to argument descriptions, defaults, enums and examples, ``execution``,
``_meta``) and diff them with :mod:`evals.contract`. ``python -m evals contract --a SPEC
--b SPEC`` writes ``contract.json`` and ``contract.md``; exit 1 when B breaks a client written
against A or adds instruction-like text a model would read."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals import contract
from evals.render import Document, Paragraph, Table, write
from evals.run.targets import TargetError, make_target
from ocm_common.run_record import RecordHeader, write_record


@dataclass
class ContractDiff:
    a: str
    b: str
    tools_a: list[str] = field(default_factory=list)
    tools_b: list[str] = field(default_factory=list)
    changes: list[contract.Change] = field(default_factory=list)
    error: str | None = None

    @property
    def breaking(self) -> list[contract.Change]:
        return [c for c in self.changes if c.breaking]

    @property
    def suspicious(self) -> list[contract.Change]:
        return [c for c in self.changes if c.suspicious]

    def marked(self, concern: str) -> list[contract.Change]:
        return [c for c in self.changes if c.concern == concern]

    @property
    def exit_code(self) -> int:
        if self.error:
            return 2
        return 1 if self.breaking or self.suspicious else 0

    def summary_line(self) -> str:
        return (
            f"{len(self.changes)} change(s): {len(self.marked('compatibility'))} for "
            f"compatibility ({len(self.breaking)} breaking), {len(self.marked('poisoning'))} "
            f"for poisoning review ({len(self.suspicious)} suspicious)"
        )

    def console_lines(self) -> list[str]:
        """One line per change (rich markup), the breaking and suspicious ones marked."""
        lines = []
        for c in self.changes:
            mark = (
                "[red]breaking[/] "
                if c.breaking
                else "[red]suspicious[/] "
                if c.suspicious
                else f"[yellow]{c.concern}[/] "
                if c.concern
                else ""
            )
            lines.append(f"  {mark}{c.pointer}: {c.describe()}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "exit_code": self.exit_code,
            "error": self.error,
            "tools_a": self.tools_a,
            "tools_b": self.tools_b,
            "added": sorted(set(self.tools_b) - set(self.tools_a)),
            "removed": sorted(set(self.tools_a) - set(self.tools_b)),
            "breaking": len(self.breaking),
            "suspicious": len(self.suspicious),
            "compatibility": len(self.marked("compatibility")),
            "poisoning": len(self.marked("poisoning")),
            "changes": contract.to_json(self.changes),
        }


async def list_surface(spec: str, timeout_s: float = 30.0) -> dict[str, dict[str, Any]]:
    """Every tool ``spec`` publishes, ``{name: tools/list entry}`` (one session, bounded)."""

    async def listed() -> list[dict[str, Any]]:
        async with make_target(spec, timeout_s=timeout_s) as target:
            return await target.list_tools_wire()

    try:
        entries = await asyncio.wait_for(listed(), 2 * timeout_s)  # start + initialize + list
    except TimeoutError as exc:
        raise TargetError(f"{spec!r} did not list its tools within {2 * timeout_s:g} s") from exc
    return {str(e.get("name", "")): e for e in entries}


async def diff_targets(a: str, b: str, timeout_s: float = 30.0) -> ContractDiff:
    result = ContractDiff(a, b)
    try:
        tools_a = await list_surface(a, timeout_s)
        tools_b = await list_surface(b, timeout_s)
    except TargetError as exc:
        result.error = str(exc)
        return result
    result.tools_a, result.tools_b = sorted(tools_a), sorted(tools_b)
    result.changes = contract.diff_surfaces(tools_a, tools_b)
    return result


def document(diff: ContractDiff) -> Document:
    doc = Document(title="Contract diff", meta=[f"A `{diff.a}`", f"B `{diff.b}`"])
    if diff.error:
        doc.verdict = Paragraph(f"harness error: {diff.error}", "bad")
        return doc
    n = len(diff.changes)
    doc.verdict = Paragraph(
        diff.summary_line() if n else "the same tool surface",
        "bad" if diff.exit_code else ("warn" if n else "good"),
    )
    doc.section(
        "Changes from A to B",
        Table(
            ["path", "change", "marked"],
            [[c.pointer, c.describe(), c.marks] for c in diff.changes],
            tones=[
                "bad" if c.breaking or c.suspicious else "warn" if c.concern else "neutral"
                for c in diff.changes
            ],
            note="Paths are JSON pointers: /<tool>/<inputSchema|outputSchema|description|"
            "title|annotations|execution|...>/... Marked: compatibility (breaking: a client "
            "written against A can fail against B) and poisoning (text a model reads; "
            "suspicious: it adds instruction-like wording or invisible characters).",
        ),
    )
    return doc


def write_report(
    diff: ContractDiff, out: Path, head: RecordHeader | None = None
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "contract.json"
    path.write_text(json.dumps(diff.to_json(), indent=2, ensure_ascii=False, default=str) + "\n")
    if head is not None:
        write_record(out, head, diff.to_json(), [path.name, "contract.md", "contract.html"])
    return {"json": path, **write(document(diff), out, "contract")}
