"""schedule.get's merge: build each item from the fee rows (or the schedule passages) with
requirement and limit sentences from the commentary, and the conflicts between the fee table and
the passages (fee, limits, requirements); which codes, in what order, is `code_ranking`'s."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache

from pydantic import BaseModel, Field

from reference_server.catalog import OHIP_LINE_EXTRA_CHARS
from reference_server.retrieval.ohip_schedule import (
    FeeRow,
    SqlFound,
    VectorFound,
    codes_in,
    commentary_as_passages,
    fee_value,
    passage_fees,
    schedule_lines,
)
from reference_server.retrieval.vector import VectorHit
from reference_server.scoring.citations import Citation
from reference_server.scoring.conflicts import Conflict
from reference_server.tools.schedule.code_ranking import rank
from reference_server.tools.schedule.fees import (
    COMPONENT_HELP,
    FeeComponent,
    FeeVariant,
    all_components,
    fee_note,
    listing_fee,
    variants,
)

MAX_PLAUSIBLE_SPAN = 100  # subsections spanning more PDF pages were mis-extracted: no page
MAX_SENTENCES = 3

LIMIT_WORDS = re.compile(
    r"\b(max(imum)?|at most|limited|limit|once|only one|only 1|per (patient|admission|day|week|"
    r"month|year|time period|provider)|units?|cap(ped)?|no more than|not payable|not eligible|"
    r"cannot|within \d+ (hours|days))\b",
    re.I,
)
DOC_WORDS = re.compile(
    r"\b(record\w*|chart\w*|document\w*|start and stop|written|must|requires?|required|minimum|"
    r"at least|all elements|referr\w*)\b",
    re.I,
)
SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
COMMENTARY_TEXTS = 1024  # commentary passages whose sentences are remembered


class ScheduleItem(BaseModel):
    code: str = Field(description="Fee code, e.g. 'C124'.")
    description: str = Field(description="Service description.")
    fee: float | None = Field(
        description=(
            "Dollar amount of the main listing (null for percentage premiums and fees the "
            "Schedule leaves to independent consideration). For a code priced by component it "
            "is the first column listed (the technical component, H, where there is one): read "
            "fee_components for every component; a code priced only by one component answers "
            "that component's amount."
        )
    )
    fee_components: list[FeeComponent] = Field(description=COMPONENT_HELP)
    fee_variants: list[FeeVariant] = Field(
        description=(
            "Every listing of a code the Schedule lists with different fees (e.g. a specialty's "
            "table against the general one), main listing first; empty when listed once."
        ),
    )
    fee_note: str | None = Field(
        description="The fee components and listings in words, when there is more than a fee.",
    )
    requirements: str | None = Field(description="Billing requirements and documentation.")
    limits: str | None = Field(description="Service limits and restrictions.")
    page_num: int | None = Field(description="First PDF page of the Schedule table listing it.")


def _sentences(
    code: str, texts: list[str], pattern: re.Pattern[str], skip: list[str] | None = None
) -> list[str]:
    """Sentences about this code (naming it, or naming no code) that match a pattern."""
    out: list[str] = []
    for text in texts:
        for sentence, mentioned in _split_sentences(text):
            about = not mentioned or code in mentioned
            if about and pattern.search(sentence) and sentence not in out + (skip or []):
                out.append(sentence)
    return out[:MAX_SENTENCES]


@lru_cache(maxsize=COMMENTARY_TEXTS)
def _split_sentences(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A commentary text's sentences with the codes each names: the texts are read-only, and
    every item built splits the same few again (twice: limits, then documentation)."""
    return tuple(
        (sentence, tuple(codes_in(sentence)))
        for sentence in SENTENCE_SPLIT.split(" ".join(text.split()))
    )


def _body(hit: VectorHit) -> str:
    """A commentary passage without its title and 'Codes:' lines."""
    return hit.text.split("\n", 2)[-1]


def _join(*parts: str | None) -> str | None:
    """Parts as sentences: each ends with a full stop, joined by spaces."""
    kept = [p.strip() for p in parts if p and p.strip()]
    return " ".join(p if p[-1] in ".!?" else p + "." for p in kept) or None


def _page(pdf_pages: str | None) -> int | None:
    start, _, end = (pdf_pages or "").partition("-")
    if not start.isdigit():
        return None
    if end.isdigit() and int(end) - int(start) > MAX_PLAUSIBLE_SPAN:
        return None
    return int(start)


def _fee_basis(row: FeeRow) -> str | None:
    kind = row.fee_kind
    if kind == "percent" and row.fee_percent is not None:
        return f"Premium: add {row.fee_percent:g}% to the listed fee."
    return {
        "per_unit": "Fee is per unit.",
        "per_diem": "Fee is per diem.",
        "add_on": "Fee is an add-on to the main service.",
        "independent_consideration": "Fee by independent consideration.",
    }.get(kind or "")


def _money(value: float | None) -> str:
    return "no fee" if value is None else f"{value:.2f}"


def _squash(text: str | None) -> str:
    return " ".join((text or "").split())


def text_conflicts(code: str, rows: list[FeeRow], mentions: list[VectorHit]) -> list[Conflict]:
    """Limits and requirements of the fee table (SQL) against the schedule passages' lines.

    Each passage line carries '(limits; requirements)' cut to OHIP_LINE_EXTRA_CHARS; a table value
    missing from every line of the code (compared up to that cut) is a conflict.
    """
    extras = [_squash(m["extra"]) for p in mentions for m in schedule_lines(p).get(code, [])]
    if not extras:
        return []
    out: list[Conflict] = []
    stated = (
        ("limits", [r.limits for r in rows]),
        ("requirements", [r.requirements for r in rows]),
    )
    for name, texts in stated:
        values = list(dict.fromkeys(_squash(t) for t in texts if t))
        for value in values:
            probe = value[: OHIP_LINE_EXTRA_CHARS // 2]
            if not any(probe in extra for extra in extras):
                out.append(
                    Conflict(
                        field=f"{code}.{name}",
                        sql_value=value,
                        vector_value=extras,
                        resolution=(
                            f"Schedule table (SQL) {name} used; the schedule passage says "
                            "otherwise, so the passage index may be stale."
                        ),
                    )
                )
    return out


@dataclass
class Built:
    item: ScheduleItem
    citations: list[Citation]
    conflicts: list[Conflict]
    from_sql: bool
    passages: set[str]


def build_item(
    code: str,
    rows: list[FeeRow],
    passages: list[VectorHit],
    mentions: list[VectorHit],
    include: AbstractSet[str],
) -> Built | None:
    """One item from the SQL rows (or, without them, the schedule passages) plus passage context.

    `passages` are the commentary and nearest passages naming the code (context, corroboration);
    `mentions` every passage naming it (fees to compare, schedule lines when SQL failed).
    """
    commentary = [p for p in passages if p.metadata.get("doc_type") == "commentary"]
    texts = [_body(p) for p in commentary] if "commentary" in include else []
    conflicts: list[Conflict] = []
    vector_fees = passage_fees(code, mentions)
    if rows:
        row = rows[0]  # ordered by n_source_rows: the fee most source tables give
        description, (fee, _) = row.description, listing_fee(row)
        requirements = _join(_fee_basis(row), row.requirements)
        limits = row.limits
        page = _page(row.pdf_pages)
        source = f"OHIP Schedule of Benefits, {row.subsection_title} ({row.page_ref})"
        chunk_id = row.chunk_id
        fees = sorted({f for f in (listing_fee(r)[0] for r in rows) if f is not None})
        if len(fees) > 1:
            listed = "; ".join(
                f"{_money(listing_fee(r)[0])} ({r.page_ref} {r.subsection_title})" for r in rows
            )
            conflicts.append(
                Conflict(
                    field=f"{code}.fee",
                    sql_value=listed,
                    vector_value=vector_fees or None,
                    resolution=(
                        f"The schedule extract lists {code} with {len(fees)} different fees; the "
                        f"item shows {_money(fee)}, the fee in most source tables "
                        f"({row.n_source_rows} rows), and every listing in fee_variants. "
                        "Confirm against the current Schedule."
                    ),
                )
            )
        elif fee is not None and vector_fees and fee not in vector_fees:
            conflicts.append(
                Conflict(
                    field=f"{code}.fee",
                    sql_value=fee,
                    vector_value=vector_fees,
                    resolution="Schedule table (SQL) fee used; the passage index may be stale.",
                )
            )
        conflicts += text_conflicts(code, rows, mentions)
    else:
        lines = [(p, m) for p in mentions for m in schedule_lines(p).get(code, [])]
        if not lines:
            return None
        hit, m = lines[0]
        description, fee = m["desc"], fee_value(m["fee"])
        extra = m["extra"] or ""
        is_limit = bool(LIMIT_WORDS.search(extra))
        requirements = _join(None if fee is not None else m["fee"], "" if is_limit else extra)
        limits = extra if is_limit else None
        page = None  # the passage metadata cannot tell a plausible page from a mis-extracted one
        meta = hit.metadata
        source = f"OHIP Schedule of Benefits, {meta.get('subsection', '')} ({meta.get('page', '')})"
        chunk_id = hit.id
        if len(vector_fees) > 1:
            conflicts.append(
                Conflict(
                    field=f"{code}.fee",
                    vector_value=vector_fees,
                    resolution=(
                        f"The schedule passages list {code} with {len(vector_fees)} different fees "
                        f"and the fee table (SQL) was unavailable; the item shows {fee if fee is None else f'{fee:.2f}'}. Confirm "
                        "against the current Schedule."
                    ),
                )
            )
    limit_notes = _sentences(code, texts, LIMIT_WORDS)
    doc_notes = _sentences(code, texts, DOC_WORDS, skip=limit_notes)
    requirements = _join(requirements, *doc_notes) if "documentation" in include else None
    limits = _join(limits, *limit_notes) if "limits" in include else None
    show_fee = "fee" in include
    item = ScheduleItem(
        code=code,
        description=description,
        fee=fee if show_fee else None,
        fee_components=all_components(rows) if show_fee else [],
        fee_variants=variants(rows) if show_fee else [],
        fee_note=fee_note(code, rows) if show_fee else None,
        requirements=requirements,
        limits=limits,
        page_num=page,
    )
    citations = [Citation(source=source, loc=code, page=page, chunk_id=chunk_id)]
    if "commentary" in include:
        citations += [
            Citation(
                source=f"OHIP billing commentary: {p.metadata.get('title', '')}",
                loc=p.id,
                chunk_id=p.id,
            )
            for p in commentary
        ]
    return Built(item, citations, conflicts, bool(rows), {p.id for p in passages})


def build_items(
    q: str,
    named: list[str],
    include: frozenset[str],
    top_k: int,
    sql: SqlFound | None,
    vec: VectorFound | None,
) -> list[Built]:
    """The top_k items, best first: the codes both paths point to (`rank`), each built from its
    fee rows and the passages that name it."""
    found = rank(q, named, sql, vec)
    ordered = sorted(found, key=lambda c: found[c].order(c))
    if "codes" not in include and named:
        ordered = [c for c in ordered if found[c].named is not None]
    # Passages per code: the vector store's, or the SQL copy of the commentary when it failed.
    context = vec.by_code if vec else commentary_as_passages(sql.all_commentary if sql else [])
    built: list[Built] = []
    for code in ordered:
        if len(built) >= top_k:
            break
        rows = sql.rows.get(code, []) if sql else []
        mentions = context.get(code, [])
        passages = {p.id: p for p in mentions if p.metadata.get("doc_type") == "commentary"}
        passages.update(found[code].passages)
        b = build_item(code, rows, list(passages.values()), mentions, include)
        if b:
            built.append(b)
    return built
