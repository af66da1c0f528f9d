"""source.passages: the exact text behind a citation ('show source'), with highlighted terms.

Every citation of every tool carries a `chunk_id`; this tool resolves any of them (ids by
prefix: 'ohip:' -> ohip_chunks, 'adp:' -> adp_v1, 'odb:' -> odb_documents, OPA section and
document ids by organisation slug; an id with no known prefix is tried everywhere). Both paths
answer through `retrieval.passages`: the vector payload is the primary copy (what was embedded
and cited), the SQL copy corroborates it and stands in when the vector path fails; copies that
differ are a conflict. Ids found nowhere are listed in `missing_ids`; if none resolve, the call
is a not-found error naming them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from reference_server.errors import NotFoundError, PathsFailedError
from reference_server.retrieval import passages as by_id
from reference_server.retrieval.dual_path import DualResult, PathName
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.base import ExtraMeta
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import NON_BLANK, StrictModel
from reference_server.tools.score_step import EvidenceFields, Score

NAME = "source.passages"
CONTEXT_CHARS = 50
MAX_HIGHLIGHTS = 5

ChunkId = Annotated[str, StringConstraints(min_length=1, max_length=300, pattern=NON_BLANK)]
Term = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=NON_BLANK)]


class Request(StrictModel):
    chunk_ids: list[ChunkId] = Field(
        min_length=1,
        max_length=50,
        description=(
            "Chunk ids from citations, 1 to 50: 'ohip:commentary:mrp-discharge-day', "
            "'adp:mobility:110.01', 'odb:lu:414', or an OPA section id 'cpso-virtual-care:s01'."
        ),
    )
    highlight_terms: list[Term] | None = Field(
        default=None, max_length=20, description="Terms to highlight (case-insensitive)."
    )


class Passage(BaseModel):
    chunk_id: str
    text: str = Field(description="Full passage text.")
    source: str = Field(description="Source document.")
    page: int | None = Field(description="Page number if available.")
    section: str | None = Field(description="Section reference.")
    highlights: list[str] = Field(
        description="Up to 5 snippets, ~50 characters either side of a term marked **term**."
    )


class Response(BaseModel):
    passages: list[Passage]
    total_chunks: int = Field(description="Number of passages returned.")
    missing_ids: list[str] = Field(
        default_factory=list, description="Requested ids found in no collection."
    )


# ------------------------------------------------------------------------------ highlights
def _pattern(term: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive; a plural 's'/'es' still matches ('premium' -> 'premiums')."""
    return re.compile(rf"(?<!\w){re.escape(term.strip())}(?:s|es)?(?!\w)", re.I)


def highlight(text: str, terms: list[str]) -> list[str]:
    """Snippets of about 50 characters either side of each term, cut at word boundaries."""
    patterns = [_pattern(t) for t in dict.fromkeys(t.strip() for t in terms) if t]
    text = " ".join(text.split())  # snippets read as one line
    matches = sorted((m.start(), m.end()) for p in patterns for m in p.finditer(text))
    snippets: list[str] = []
    covered_until = -1
    for start, end in matches:
        if start < covered_until:
            continue  # already inside the previous snippet
        left = max(0, start - CONTEXT_CHARS)
        right = min(len(text), end + CONTEXT_CHARS)
        if left > 0 and not text[left - 1].isspace():
            space = text.find(" ", left, start)
            left = space + 1 if space != -1 else start
        if right < len(text) and not text[right].isspace():
            space = text.rfind(" ", end, right)
            right = space if space != -1 else end
        window = text[left:right].strip()
        for p in patterns:
            window = p.sub(lambda m: f"**{m.group(0)}**", window)
        snippets.append(("..." if left > 0 else "") + window + ("..." if right < len(text) else ""))
        covered_until = right
        if len(snippets) == MAX_HIGHLIGHTS:
            break
    return snippets


# ------------------------------------------------------------------------------ tool
@dataclass(frozen=True)
class Query:
    ids: list[str]  # as requested, stripped, each once
    terms: list[str]


Passages = dict[str, by_id.Passage]
Found = DualResult[Passages, Passages]


@dataclass(frozen=True)
class Shown:
    passages: list[Passage]
    conflicts: list[Conflict]
    missing: list[str]
    provenance: list[PathName]  # published in `_meta` (the response has no provenance field)


def shown(
    chunk_id: str, chosen: by_id.Passage, copy: by_id.Passage | None, terms: list[str]
) -> Passage:
    """The vector payload (or the SQL copy), its page and section filled in from the copy."""
    return Passage(
        chunk_id=chunk_id,
        text=chosen.text,
        source=chosen.source,
        page=chosen.page if chosen.page is not None else (copy.page if copy else None),
        section=chosen.section or (copy.section if copy else None),
        highlights=highlight(chosen.text, terms),
    )


def text_conflict(chunk_id: str, primary: by_id.Passage, copy: by_id.Passage) -> Conflict | None:
    return compare(
        f"{chunk_id}.text",
        " ".join(copy.text.split()),
        " ".join(primary.text.split()),
        "Vector payload shown (the indexed, cited copy); the SQL copy differs.",
    )


class SourcePassages(DualPathTool[Request, Query, Passages, Passages, Shown, Response]):
    name = NAME
    title = "Show cited source passages"
    description = (
        "Show source: the full text of cited passages by chunk id, from any collection (OHIP schedule "
        "and commentary, ADP manuals, ODB formulary, OPA guidance sections), with source, page, "
        "section and up to 5 highlighted snippets per passage for the given terms."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(chunk_ids=["adp:cep:thresholds"])

    def parse(self, rt: Runtime, req: Request) -> Query:
        return Query(
            list(dict.fromkeys(i.strip() for i in req.chunk_ids)), req.highlight_terms or []
        )

    def sql(self, rt: Runtime, q: Query) -> Passages:
        return by_id.from_sql(rt.opa_sql, rt.ohip_sql, q.ids)

    def vector(self, rt: Runtime, q: Query) -> Passages:
        return by_id.from_vectors(rt.vectors, q.ids)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Shown:
        sql, vec = found.sql.value or {}, found.vector.value or {}
        passages: list[Passage] = []
        conflicts: list[Conflict] = []
        for chunk_id in q.ids:
            primary, copy = vec.get(chunk_id), sql.get(chunk_id)
            chosen = primary or copy
            if chosen is None:
                continue
            if primary and copy:
                c = text_conflict(chunk_id, primary, copy)
                if c:
                    conflicts.append(c)
            passages.append(shown(chunk_id, chosen, copy, q.terms))
        missing = [i for i in q.ids if i not in vec and i not in sql]
        if not passages:
            if found.errors:
                raise PathsFailedError(
                    "The passages could not be retrieved right now (retrieval failed: "
                    f"{', '.join(sorted(found.errors))}); try again."
                )
            raise NotFoundError(
                "chunk",
                ", ".join(missing),
                "Use the chunk ids given in citations, e.g. 'ohip:commentary:mrp-discharge-day' or "
                "'cpso-virtual-care:s01'.",
            )
        return Shown(passages, conflicts, missing, found.provenance)

    def score(self, q: Query, merged: Shown, found: Found) -> Score[Any]:
        return Score(conflicts=merged.conflicts)  # no confidence: passages are read by id

    def respond(self, q: Query, merged: Shown, evidence: EvidenceFields[Any]) -> Response:
        return Response(
            passages=merged.passages,
            total_chunks=len(merged.passages),
            missing_ids=merged.missing,
        )

    def meta(self, merged: Shown) -> ExtraMeta:
        meta: ExtraMeta = {"provenance": merged.provenance}
        if merged.conflicts:
            meta["conflicts"] = [c.model_dump(mode="json") for c in merged.conflicts]
        return meta


TOOL = SourcePassages()
