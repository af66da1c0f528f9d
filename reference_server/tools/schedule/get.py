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
(`unknown_codes`, `needs_more_info`) instead of failing. The merge lives in `merge.py`, the code order in `code_ranking.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from reference_server.retrieval import ohip_schedule as schedule
from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.ohip_schedule import SqlFound, VectorFound, codes_in
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import SCHEDULE, Counts
from reference_server.scoring.features import Signals
from reference_server.tools.common import Citation, Evidence
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import NON_BLANK, StrictModel
from reference_server.tools.schedule.merge import Built, ScheduleItem, build_items
from reference_server.tools.score_step import EvidenceFields, Score

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


@dataclass(frozen=True)
class Query:
    text: str
    requested: list[str]  # the codes the request names, as given (uppercased)
    named: list[str]  # those, then the codes written in q, each once
    include: frozenset[str]
    top_k: int


Found = DualResult[SqlFound, VectorFound]


@dataclass(frozen=True)
class Items:
    built: list[Built]
    unknown: list[str]  # requested codes no item answers


class ScheduleGet(DualPathTool[Request, Query, SqlFound, VectorFound, Items, Response]):
    name = NAME
    confidence_family = "schedule"
    title = "OHIP Schedule of Benefits fee codes"
    description = (
        "Look up OHIP Schedule of Benefits fee codes by code or by description: fee, its "
        "components (H technical, P professional, surgical columns), description, billing "
        "requirements, service limits and PDF page, with citations. Codes the schedule lists "
        "with two different fees show every listing and are reported in conflicts. Use for 'what is the fee for C124', "
        "'can I bill a consultation in the ED as an internist', psychotherapy limits, virtual care "
        "codes and house-call premiums."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(q="intermediate assessment")

    def parse(self, rt: Runtime, req: Request) -> Query:
        requested = list(req.codes or [])
        named = list(dict.fromkeys([*requested, *codes_in(req.q)]))
        return Query(req.q, requested, named, frozenset(req.include), req.top_k)

    def sql(self, rt: Runtime, q: Query) -> SqlFound:
        return schedule.keyword_search(rt.ohip_sql, q.text, q.named)

    def vector(self, rt: Runtime, q: Query) -> VectorFound:
        return schedule.vector_search(rt.vectors, q.text)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Items:
        built = build_items(
            q.text, q.named, q.include, q.top_k, found.sql.value, found.vector.value
        )
        # Unknown codes are an answer, not an error (002: needs_more_info); only trusted when a
        # path answered, since an outage can hide a code that exists.
        unknown = [c for c in q.requested if not any(b.item.code == c for b in built)]
        return Items(built, unknown if found.provenance else [])

    def score(self, q: Query, merged: Items, found: Found) -> Score[Citation]:
        citations: list[Citation] = []
        for b in merged.built:
            citations += [c for c in b.citations if c not in citations]
        corroborating = (
            {p for b in merged.built for p in b.passages} if found.vector.value else set()
        )
        return Score(
            citations=citations,
            conflicts=[c for b in merged.built for c in b.conflicts],
            counts=Counts(
                sql_records=sum(b.from_sql for b in merged.built),
                vector_passages=len(corroborating),
                profile=SCHEDULE,
            ),
            signals=Signals(no_answer=not merged.built),
        )

    def respond(self, q: Query, merged: Items, evidence: EvidenceFields[Any]) -> Response:
        return Response(
            **evidence,
            items=[b.item for b in merged.built],
            unknown_codes=merged.unknown,
            needs_more_info=bool(q.requested) and len(merged.unknown) == len(q.requested),
        )


TOOL = ScheduleGet()
