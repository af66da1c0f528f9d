"""The OHIP Schedule store: fee rows and commentary (SQL), schedule and commentary passages (vector).

Both searches answer the same question, "which fee codes and passages does this query point
to", for schedule.get and coverage.answer: `keyword_search` reads the fee table (by code, FTS5
keywords) and the hand-written commentary; `vector_search` ranks `ohip_chunks` passages and
indexes every passage by the codes it mentions. Passage parsing (the 'CODE description: $fee
(limits; requirements)' lines the index builder writes) lives here too, next to the store.
"""

from __future__ import annotations

import re
from collections import ChainMap, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from reference_server.catalog import OFF_COLLECTIONS, OHIP_FEES_BM25, ohip_commentary_id
from reference_server.retrieval.bm25_impacts import Bm25Impacts
from reference_server.retrieval.ohip_descriptions import Described, rank_descriptions
from reference_server.retrieval.ohip_text import CODE_IN_TEXT, GENERIC, stem
from reference_server.retrieval.sql import STOPWORDS, SqlClient, as_rows, fts_words, select_list
from reference_server.retrieval.vector import HitsByValue, VectorClient, VectorHit

COLLECTION = OFF_COLLECTIONS["ohip"]
VECTOR_CANDIDATES = 12
FTS_CANDIDATES = 60
DESCRIPTION_CANDIDATES = 20

# Small query expansion: clinicians' words -> the words the Schedule and commentary use.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "elderly": ("senior", "older", "65", "frail"),
    "senior": ("elderly", "older", "65"),
    "house": ("home",),
    "home": ("house",),
    "ed": ("emergency",),
    "er": ("emergency",),
    "internist": ("internal",),
    "virtual": ("video", "telephone"),
    "video": ("virtual",),
    "phone": ("telephone", "virtual"),
    "session": ("unit",),
    "counseling": ("counselling",),
    "mrp": ("responsible",),
}
WORD = re.compile(r"[a-z0-9]+")
LINE_RE = re.compile(
    r"^(?P<code>[A-Z]{1,2}\d{3}[A-Z]?) (?P<desc>.*?): "
    r"(?P<fee>\$[\d,]+\.\d{2}(?: per unit| per diem| add-on)?|\+[\d.]+% premium|"
    r"independent consideration|fee not listed)"
    r"(?: \((?P<extra>.*)\))?(?P<conflict> \[fee differs between tables\])?$"
)


@dataclass(frozen=True)
class FeeRow:
    """One listing of a code in the fee table (`ohip_fee_schedule`)."""

    code: str
    description: str
    fee: float | None
    fee_kind: str
    fee_percent: float | None
    h_fee: float | None
    p_fee: float | None
    t_fee: float | None
    asst_fee: float | None
    surg_fee: float | None
    anae_fee: float | None
    units: str | None
    requirements: str | None
    limits: str | None
    subsection_title: str
    page_ref: str
    pdf_pages: str
    n_source_rows: int
    conflict_group: str | None
    n_fee_variants: int | None
    chunk_id: str

    @property
    def component_columns(self) -> tuple[float | None, ...]:
        """H, P, T, assistant, surgeon, anaesthetist: the columns in the Schedule's order."""
        return (self.h_fee, self.p_fee, self.t_fee, self.asst_fee, self.surg_fee, self.anae_fee)


@dataclass(frozen=True)
class CommentaryRow:
    """A hand-written commentary passage (`ohip_commentary`)."""

    id: str
    title: str
    codes: str | None  # 'A135;C124'
    section: str | None
    text: str


@dataclass(frozen=True)
class SqlFound:
    rows: Mapping[str, list[FeeRow]]  # code -> rows (two when the fee differs by table)
    fts: list[str]  # codes ranked by keyword match
    described: list[Described]  # codes whose descriptions q restates, best first
    commentary: list[CommentaryRow]  # commentary rows matching q, best first
    all_commentary: list[CommentaryRow]


@dataclass(frozen=True)
class VectorFound:
    hits: list[VectorHit]  # passages nearest to q
    by_code: Mapping[str, list[VectorHit]]  # every passage, indexed by the codes it mentions


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in WORD.findall(text.lower()))


@lru_cache(maxsize=4096)
def stems(text: str) -> frozenset[str]:
    """The word stems of a text, remembered: schedule.get scores q against the same fee
    descriptions again and again (the commentary has its own index, `commentary_index`)."""
    return _stems(text)


def query_terms(q: str) -> dict[str, float]:
    """Content-word stems of q with weights; synonyms count half."""
    terms: dict[str, float] = {}
    for word in WORD.findall(q.lower()):
        if word in STOPWORDS or word in GENERIC or (len(word) < 3 and word not in SYNONYMS):
            continue
        if CODE_IN_TEXT.fullmatch(word):
            continue
        terms[stem(word)] = 1.0
        for syn in SYNONYMS.get(word, ()):
            terms.setdefault(stem(syn), 0.5)
    return terms


def codes_in(text: str) -> list[str]:
    """Schedule-shaped codes written in free text, uppercased, in order."""
    return list(dict.fromkeys(m.upper() for m in CODE_IN_TEXT.findall(text)))


def overlap(terms: dict[str, float], stems: frozenset[str]) -> float:
    return sum(w for t, w in terms.items() if t in stems)


def keyword_search(
    sql: SqlClient, q: str, named: list[str], limit: int = FTS_CANDIDATES
) -> SqlFound:
    """SQL path: commentary rows scored against q, fee codes by FTS5 and by how closely q
    restates their description, the fee rows of every code named, matched or listed in the
    commentary."""
    index = commentary_index(sql)
    scores: dict[int, float] = defaultdict(float)
    for term, weight in query_terms(q).items():
        for i, in_title, in_text in index.by_stem.get(term, ()):
            scores[i] += weight * (2 * in_title + in_text)
    for code in set(named):
        for i in index.by_code.get(code, ()):
            scores[i] += 3
    commentary = index.rows
    scored = [(scores[i], commentary[i]) for i in sorted(scores) if scores[i] > 0]
    best = max((score for score, _ in scored), default=0.0)
    ranked = [r for score, r in sorted(scored, key=lambda x: -x[0]) if score >= best / 3]
    fts: list[str] = []
    words = fts_words(" ".join(w for w in q.split() if w.lower().strip("?.,!") not in GENERIC))
    if words:
        # FTS5's BM25 ranking from the stored impacts (retrieval/bm25_impacts.py); the fee rows
        # are read for the top `limit` only.
        top_rows = [rowid for rowid, _ in Bm25Impacts(sql, OHIP_FEES_BM25).top(words, limit)]
        codes = (
            {
                r["fee_rowid"]: r["code"]
                for r in sql.query(
                    "SELECT rowid AS fee_rowid, code FROM ohip_fee_schedule "
                    f"WHERE rowid IN ({','.join('?' * len(top_rows))})",
                    top_rows,
                )
            }
            if top_rows
            else {}
        )
        fts = list(dict.fromkeys(codes[i] for i in top_rows if i in codes))
    # The fee rows of every commentary code (so vector-only context codes resolve too) are the
    # same on every call: read once per process; only the named and matched codes are per call.
    described = rank_descriptions(sql, q, DESCRIPTION_CANDIDATES)
    matched = set(named) | set(fts) | {d.code for d in described}
    rows = ChainMap(_fee_rows(sql, matched), _commentary_fee_rows(sql))
    return SqlFound(rows, fts, described, ranked, commentary)


@dataclass(frozen=True)
class CommentaryIndex:
    """The commentary rows (shared, read-only) with their title and text stems and their codes
    inverted, built once per process: scoring q against every row's stems on each call grew
    with the corpus, and past 4,096 texts the `stems` memo thrashed (100x: 5% of all calls)."""

    rows: list[CommentaryRow]
    by_stem: dict[str, list[tuple[int, bool, bool]]]  # stem -> (row, in title, in text)
    by_code: dict[str, list[int]]


def commentary_index(sql: SqlClient) -> CommentaryIndex:
    return sql.derived.get("ohip_commentary_index", lambda: _commentary_index(sql))


def _commentary_index(sql: SqlClient) -> CommentaryIndex:
    rows = as_rows(
        CommentaryRow, sql.query(f"SELECT {select_list(CommentaryRow)} FROM ohip_commentary")
    )
    by_stem: dict[str, list[tuple[int, bool, bool]]] = defaultdict(list)
    by_code: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        title, text = _stems(row.title), _stems(row.text)
        for stem_ in sorted(title | text):
            by_stem[stem_].append((i, stem_ in title, stem_ in text))
        for code in dict.fromkeys(c for c in (row.codes or "").split(";") if c):
            by_code[code].append(i)
    return CommentaryIndex(rows, dict(by_stem), dict(by_code))


# A code's listings, the one most source tables give first (ties: corpus order), so the item's
# main fee is the same on every machine and in the derived cases.
FEE_ROWS = (
    f"SELECT {select_list(FeeRow)} "
    "FROM ohip_fee_schedule WHERE code IN ({marks}) ORDER BY code, n_source_rows DESC, rowid"
)


def _fee_rows(sql: SqlClient, codes: set[str]) -> dict[str, list[FeeRow]]:
    rows: dict[str, list[FeeRow]] = defaultdict(list)
    if codes:
        marks = ",".join("?" * len(codes))
        for r in as_rows(FeeRow, sql.query(FEE_ROWS.format(marks=marks), sorted(codes))):
            rows[r.code].append(r)
    return dict(rows)


def _commentary_fee_rows(sql: SqlClient) -> dict[str, list[FeeRow]]:
    """Fee rows of the codes the commentary lists, read once per process (the index is
    read-only; re-reading them on every call grew with the corpus: 16% of schedule.get at 10x).
    Shared between calls: readers look rows up by code and never edit them."""
    return sql.derived.get(
        "ohip_commentary_fee_rows", lambda: _fee_rows(sql, set(commentary_index(sql).by_code))
    )


def vector_search(vectors: VectorClient, q: str, limit: int = VECTOR_CANDIDATES) -> VectorFound:
    """Vector path: passages nearest to q, plus every passage indexed by the codes it names."""
    hits = vectors.search(COLLECTION, q, n_results=limit)
    return VectorFound(hits, HitsByValue(vectors, COLLECTION, "codes"))


# Distinct schedule passages whose parsed lines are remembered (`_parsed_lines`): the
# subsection passages of the index, with room for a larger corpus's nearest ones.
PARSED_PASSAGES = 8192
NO_LINES: Mapping[str, tuple[re.Match[str], ...]] = MappingProxyType({})
FEE_VALUE = re.compile(r"\$([\d,]+\.\d{2})")


def schedule_lines(hit: VectorHit) -> Mapping[str, tuple[re.Match[str], ...]]:
    """Parsed 'CODE description: $fee (limits; requirements)' lines of a schedule passage,
    by code. Read-only and shared: the passages never change, so each is parsed once per
    process (`_parsed_lines`), not on every call that finds it."""
    if hit.metadata.get("doc_type") != "subsection":
        return NO_LINES
    return _parsed_lines(hit.text)


@lru_cache(maxsize=PARSED_PASSAGES)
def _parsed_lines(text: str) -> Mapping[str, tuple[re.Match[str], ...]]:
    lines: dict[str, list[re.Match[str]]] = defaultdict(list)
    for line in text.splitlines()[1:]:
        m = LINE_RE.match(line)
        if m:
            lines[m["code"]].append(m)
    return MappingProxyType({code: tuple(found) for code, found in lines.items()})


def described_overlaps(hit: VectorHit, terms: dict[str, float]) -> dict[str, float]:
    """For each code listed in a schedule passage, `overlap` of q's terms with the stems of
    its first line's description, codes sharing none left out. Each passage's description
    stems are inverted once per process (`_codes_by_stem`), so a call looks up its few terms
    instead of scoring every line; the weights add in `terms` order, as `overlap` adds them."""
    if hit.metadata.get("doc_type") != "subsection":
        return {}
    by_stem = _codes_by_stem(hit.text)
    shared: dict[str, float] = {}
    for term, weight in terms.items():
        for code in by_stem.get(term, ()):
            shared[code] = shared.get(code, 0) + weight
    return {code: value for code, value in shared.items() if value}


@lru_cache(maxsize=PARSED_PASSAGES)
def _codes_by_stem(text: str) -> Mapping[str, tuple[str, ...]]:
    by_stem: dict[str, list[str]] = defaultdict(list)
    for code, matches in _parsed_lines(text).items():
        for stem_ in stems(matches[0]["desc"]):
            by_stem[stem_].append(code)
    return MappingProxyType({stem_: tuple(codes) for stem_, codes in by_stem.items()})


def fee_value(text: str) -> float | None:
    m = FEE_VALUE.match(text)
    return float(m.group(1).replace(",", "")) if m else None


def passage_fees(code: str, passages: list[VectorHit]) -> list[float]:
    """Fees the passages give for a code (schedule lines, or 'CODE (61.15' in commentary)."""
    fees: list[float] = []
    pattern = _commentary_fee(code)
    for hit in passages:
        for m in schedule_lines(hit).get(code, []):
            value = fee_value(m["fee"])
            if value is not None:
                fees.append(value)
        if hit.metadata.get("doc_type") == "commentary":
            fees.extend(float(x) for x in pattern.findall(hit.text))
    return sorted(set(fees))


@lru_cache(maxsize=PARSED_PASSAGES)
def _commentary_fee(code: str) -> re.Pattern[str]:
    """'CODE (61.15' or 'CODE, 61.15' in commentary, compiled once per code and process (the
    fee table's thousands of codes outgrow Python's own pattern cache)."""
    return re.compile(rf"\b{code}(?: \(|, )(\d+\.\d{{2}})")


def commentary_as_passages(rows: list[CommentaryRow]) -> dict[str, list[VectorHit]]:
    """The SQL copy of the commentary, shaped like passages, for when the vector path failed."""
    by_code: dict[str, list[VectorHit]] = defaultdict(list)
    for r in rows:
        codes = r.codes or ""
        hit = VectorHit(
            ohip_commentary_id(r.id),
            f"{r.title}\nCodes: {codes.replace(';', ', ')}\n{r.text}",
            {"doc_type": "commentary", "title": r.title, "codes": codes},
            0.0,
        )
        for code in codes.split(";"):
            if code:
                by_code[code].append(hit)
    return by_code
