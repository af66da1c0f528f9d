"""Show-source evidence: do a result's citations resolve through ``source.passages``?

The run side calls this once per scenario (main pass), right after the tool call and on the
same target, and the answer travels with the call into the checks (``citations_resolve``) and
the run log (``ScenarioRecord.citations``). The gate only reads that record.

A citation is any object under a ``citations`` list or a ``citation`` key of the result; each
must carry a non-empty ``chunk_id`` that ``source.passages`` returns a passage for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evals.run.targets import Target, TargetError

RESOLVER = "source.passages"
BATCH = 50  # source.passages accepts at most 50 ids per call


class CitationEvidence(BaseModel):
    """What resolving a result's citations found (stored in the run log)."""

    model_config = ConfigDict(frozen=True)

    cited: int = 0
    resolved: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    without_id: list[str] = Field(default_factory=list)
    error: str | None = None
    # the backend serves no source.passages, so nothing it cites can be shown (not checked)
    no_resolver: bool = False

    @property
    def ok(self) -> bool:
        return not (self.missing or self.without_id or self.error)


def _citations(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}.{key}"
            if key == "citations" and isinstance(value, list):
                for i, item in enumerate(value):
                    yield f"{here}[{i}]", item
            elif key == "citation" and isinstance(value, dict):
                yield here, value
            else:
                yield from _citations(value, here)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _citations(item, f"{path}[{i}]")


def cited_ids(result: Any) -> tuple[list[str], list[str]]:
    """(distinct chunk ids cited, paths of citations that carry no chunk id)."""
    ids: list[str] = []
    without: list[str] = []
    for path, citation in _citations(result, "$"):
        chunk_id = citation.get("chunk_id") if isinstance(citation, dict) else None
        if isinstance(chunk_id, str) and chunk_id.strip():
            if chunk_id not in ids:
                ids.append(chunk_id)
        else:
            without.append(path)
    return ids, without


async def resolve(
    target: Target, result: Any, timeout_s: float, *, served: bool = True
) -> CitationEvidence | None:
    """Ask the target's ``source.passages`` for every cited id; None when nothing is cited
    (``served=False``: the target has no source.passages, so the ids are only counted)."""
    ids, without = cited_ids(result)
    if not ids and not without:
        return None
    if not served:
        return CitationEvidence(cited=len(ids), without_id=without, no_resolver=True)
    found: set[str] = set()
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        try:
            outcome = await target.call_tool(
                RESOLVER, {"chunk_ids": list(batch)}, timeout_s=timeout_s
            )
        except TargetError as exc:
            return CitationEvidence(cited=len(ids), without_id=without, error=str(exc))
        if outcome.is_error:  # not-found when none of the batch resolves
            if "not found" not in outcome.text.lower():
                return CitationEvidence(cited=len(ids), without_id=without, error=outcome.text)
            continue
        passages = (outcome.structured or {}).get("passages") or []
        if isinstance(passages, list):
            found.update(str(p.get("chunk_id")) for p in passages if isinstance(p, dict))
    return CitationEvidence(
        cited=len(ids),
        resolved=[i for i in ids if i in found],
        missing=[i for i in ids if i not in found],
        without_id=without,
    )
