"""Contract diff of two live servers, no golden files: list both targets' tools (names,
titles, descriptions, annotations, input and output schemas, as published) and diff them
with :mod:`evals.contract`. ``python -m evals contract --a SPEC --b SPEC`` writes
``contract.json`` and ``contract.md``; exit 1 when B breaks a client written against A."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals import contract
from evals.render import Document, Paragraph, Table, write
from evals.run.security.sandbox import Sandbox
from evals.run.security.session import Session
from evals.run.security.surface import ToolSurface, surface_map
from evals.run.targets import TargetError


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
    def exit_code(self) -> int:
        if self.error:
            return 2
        return 1 if self.breaking else 0

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
            "changes": contract.to_json(self.changes),
        }


async def list_surface(spec: str, timeout_s: float = 30.0) -> list[ToolSurface]:
    """The tools ``spec`` publishes (one session, the same client the security run uses)."""
    sandbox = Sandbox.create()
    session = Session(spec, sandbox, call_timeout_s=timeout_s)
    try:
        await session.open()
        return await session.list_tools()
    finally:
        await session.close()
        sandbox.remove()


async def diff_targets(a: str, b: str, timeout_s: float = 30.0) -> ContractDiff:
    result = ContractDiff(a, b)
    try:
        tools_a = await list_surface(a, timeout_s)
        tools_b = await list_surface(b, timeout_s)
    except TargetError as exc:
        result.error = str(exc)
        return result
    result.tools_a = [t.name for t in tools_a]
    result.tools_b = [t.name for t in tools_b]
    result.changes = contract.diff_surfaces(surface_map(tools_a), surface_map(tools_b))
    return result


def document(diff: ContractDiff) -> Document:
    doc = Document(title="Contract diff", meta=[f"A `{diff.a}`", f"B `{diff.b}`"])
    if diff.error:
        doc.verdict = Paragraph(f"harness error: {diff.error}", "bad")
        return doc
    n, breaking = len(diff.changes), len(diff.breaking)
    doc.verdict = Paragraph(
        f"{n} change(s), {breaking} breaking" if n else "the same tool surface",
        "bad" if breaking else ("warn" if n else "good"),
    )
    doc.section(
        "Changes from A to B",
        Table(
            ["path", "change", "breaking"],
            [[c.pointer, c.describe(), "yes" if c.breaking else ""] for c in diff.changes],
            tones=["bad" if c.breaking else "neutral" for c in diff.changes],
            note="Paths are JSON pointers: /<tool>/<inputSchema|outputSchema|description|"
            "title|annotations>/...",
        ),
    )
    return doc


def write_report(diff: ContractDiff, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "contract.json"
    path.write_text(json.dumps(diff.to_json(), indent=2, ensure_ascii=False, default=str) + "\n")
    return {"json": path, **write(document(diff), out, "contract")}
