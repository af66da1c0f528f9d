"""schedule.get: OHIP Schedule of Benefits lookup, fee rows from SQL, context from passages.

SQL answers by code (named in `codes` or written in `q`), by keyword (FTS5 over the fee
table), by description (a q that restates a code's description ranks that code first) and
through the hand-written commentary table, whose code lists carry context a keyword search
misses ('ED consultation as an internist' -> A135). The vector path ranks `ohip_chunks` passages
for `q` and indexes every passage by the codes it mentions, so each item gets the requirement
and limit sentences that mention its code, and the answer survives an SQL outage (fees are then
read from the schedule passages). Each item lists every fee component column the Schedule gives
(`schedule_fees.py`). A code the extract lists with two fees is a conflict: the item shows the
fee most source tables give, `fee_variants` every listing, and `conflicts` names both; limits
and requirements that the fee table and the schedule passages state differently are conflicts
too. Codes are accepted in any case; when every requested code is unknown the answer says so
(`unknown_codes`, `needs_more_info`) instead of failing. The merge lives in `schedule_merge.py`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from reference_server.retrieval import ohip_schedule as schedule
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.ohip_schedule import (
    codes_in,
    commentary_as_passages,
)
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import SCHEDULE, calculate_confidence
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Citation, Evidence
from reference_server.tools.schedule_merge import Built, ScheduleItem, build_item, rank

NAME = "schedule.get"
CODE_PATTERN = r"^[A-Za-z]{1,2}\d{3}[A-Za-z]?$"  # A007, C124, B990, C983B; any case
Code = Annotated[str, StringConstraints(pattern=CODE_PATTERN, to_upper=True)]
Include = Literal["codes", "fee", "limits", "documentation", "commentary"]
ALL_INCLUDE: list[Include] = ["codes", "fee", "limits", "documentation", "commentary"]


class Request(StrictModel):
    q: str = Field(
        min_length=1,
        max_length=1000,
        pattern=NON_BLANK,
        description="Query text, e.g. 'discharge day MRP'.",
    )
    codes: list[Code] | None = Field(
        default=None,
        max_length=20,
        description="Specific fee codes to look up, any case (e.g. 'C124', 'b990', 'C983B').",
    )
    include: list[Include] = Field(
        default_factory=lambda: list(ALL_INCLUDE),
        description=(
            "Parts to include (default all): codes = related codes beyond the ones named, fee, "
            "limits, documentation = billing requirements, commentary = requirement and limit "
            "sentences from the commentary passages, with their citations."
        ),
    )
    top_k: int = Field(default=6, ge=1, le=20, description="Number of items (default 6, max 20).")


class Response(Evidence):
    items: list[ScheduleItem]
    unknown_codes: list[str] = Field(
        default_factory=list, description="Requested codes the Schedule does not list."
    )
    needs_more_info: bool = Field(
        default=False,
        description=(
            "True when every requested code is unknown: the items (if any) only match q; ask "
            "for the service or a valid code."
        ),
    )


async def run(rt: Runtime, req: Request) -> ToolOutput:
    named = list(dict.fromkeys([*(req.codes or []), *codes_in(req.q)]))
    include: set[str] = set(req.include)
    dual = await run_dual(
        rt.settings,
        sql=lambda: schedule.keyword_search(rt.ohip_sql, req.q, named),
        vector=lambda: schedule.vector_search(rt.vectors, req.q),
    )
    sql, vec = dual.sql.value, dual.vector.value
    found = rank(req.q, named, sql, vec)
    ordered = sorted(found, key=lambda c: found[c].order(c))
    if "codes" not in include and named:
        ordered = [c for c in ordered if found[c].named is not None]
    # Passages per code: the vector store's, or the SQL copy of the commentary when it failed.
    context = vec.by_code if vec else commentary_as_passages(sql.all_commentary if sql else [])
    built: list[Built] = []
    for code in ordered:
        if len(built) >= req.top_k:
            break
        rows = sql.rows.get(code, []) if sql else []
        mentions = context.get(code, [])
        passages = {p.id: p for p in mentions if p.metadata.get("doc_type") == "commentary"}
        passages.update(found[code].passages)
        b = build_item(code, rows, list(passages.values()), mentions, include)
        if b:
            built.append(b)
    # Unknown codes are an answer, not an error (002: needs_more_info); only trusted when a
    # path answered, since an outage can hide a code that exists.
    unknown = [c for c in (req.codes or []) if not any(b.item.code == c for b in built)]
    unknown = unknown if dual.provenance else []
    citations: list[Citation] = []
    for b in built:
        citations += [c for c in b.citations if c not in citations]
    conflicts = [c for b in built for c in b.conflicts]
    corroborating = {p for b in built for p in b.passages} if vec else set()
    confidence = calculate_confidence(
        num_sql_results=sum(b.from_sql for b in built),
        num_vector_results=len(corroborating),
        num_conflicts=len(conflicts),
        profile=SCHEDULE,
    )
    response = Response(
        provenance=dual.provenance,
        confidence=confidence,
        items=[b.item for b in built],
        citations=citations,
        conflicts=conflicts,
        unknown_codes=unknown,
        needs_more_info=bool(req.codes) and len(unknown) == len(req.codes or []),
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Look up OHIP Schedule of Benefits fee codes by code or by description: fee, its "
        "components (H technical, P professional, surgical columns), description, billing "
        "requirements, service limits and PDF page, with citations. Codes the schedule lists "
        "with two different fees show every listing and are reported in conflicts. Use for 'what is the fee for C124', "
        "'can I bill a consultation in the ED as an internist', psychotherapy limits, virtual care "
        "codes and house-call premiums."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={"q": "intermediate assessment"},
)
