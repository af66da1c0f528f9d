"""The run-time catalog: names and shapes the index builders and the tools must agree on.

Run-time code (tools, retrieval, scoring) never imports `index/` or `ingest/`; anything both
sides need lives here: collection names, chunk-id shapes (what citations carry and
`source.passages` resolves), the SQL copy of the passages, the OPA sections' filter tags, date
parsing, the ODB ingredient key and the BM25 impact tables. Changing a name here changes it
for the writer and every reader at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ------------------------------------------------------------------------------ collections
OPA_ORGS: tuple[str, ...] = ("cpso", "ontario_health", "cep", "pho", "moh")
OPA_COLLECTIONS: dict[str, str] = {org: f"opa_{org}_corpus" for org in OPA_ORGS}
# Dr. OFF chunk-id prefix -> Chroma collection
OFF_COLLECTIONS: dict[str, str] = {"ohip": "ohip_chunks", "adp": "adp_v1", "odb": "odb_documents"}
ALL_COLLECTIONS: tuple[str, ...] = (*OFF_COLLECTIONS.values(), *OPA_COLLECTIONS.values())
# The tool families that may each embed with their own model (`Settings.static_embedding`): the
# collections a family's tools search, and tool search's catalogue of tool descriptions.
EMBEDDING_FAMILIES: tuple[str, ...] = ("opa", "schedule", "adp", "odb", "tool_search")
_COLLECTION_FAMILY = {"ohip_chunks": "schedule", "adp_v1": "adp", "odb_documents": "odb"}


def embedding_family(collection: str) -> str:
    """The family whose model embeds a collection and the queries searching it."""
    return _COLLECTION_FAMILY.get(collection, "opa")


# OPA section ids start with the organisation's slug ('cpso-virtual-care:s01')
OPA_ID_PREFIXES: dict[str, str] = {
    "ontario-health-": "ontario_health",
    "cpso-": "cpso",
    "cep-": "cep",
    "pho-": "pho",
    "moh-": "moh",
}
# ohip.db table holding the SQL copy of every Dr. OFF passage (what source.passages shows when
# the vector store is down, and what it compares the vector payload with)
OFF_PASSAGES_TABLE = "off_passages"


# ------------------------------------------------------------------------- BM25 impacts
# The tokenizer of every FTS5 table; the impact ranking turns query words into tokens with it,
# so a table built with another would silently stop matching.
FTS_TOKENIZER = "porter unicode61"


@dataclass(frozen=True)
class Bm25Spec:
    """An FTS5 table whose bm25() summands are stored per (term, row) at build time
    (index/bm25_impacts.py writes them, retrieval/bm25_impacts.py ranks with them).

    `weights` are the columns a query term may match, with the weights the search gave bm25();
    the other columns count towards a row's length only, as in FTS5.
    """

    fts_table: str
    weights: tuple[tuple[str, float], ...]
    k1: float = 1.2  # FTS5's constants
    b: float = 0.75

    @property
    def terms_table(self) -> str:
        return f"{self.fts_table}_impacts"

    @property
    def rows_table(self) -> str:
        return f"{self.fts_table}_impact_rows"


OPA_SECTIONS_BM25 = Bm25Spec(
    "opa_sections_fts",
    (("title", 3.0), ("section_heading", 4.0), ("topics", 2.0), ("text", 1.5)),
)
OHIP_FEES_BM25 = Bm25Spec(
    "ohip_fee_fts", (("code", 5.0), ("description", 2.0), ("requirements", 1.0))
)
BM25_SPECS: tuple[Bm25Spec, ...] = (OPA_SECTIONS_BM25, OHIP_FEES_BM25)


# ------------------------------------------------------------------- OPA section filter tags
# The OPA keyword search filters inside FTS5: each section's FTS row carries its filter values
# as tokens in a `filter_tags` column that BM25 weighs 0, so ranking reads nothing outside the
# full-text index (joining each match to its section row to test the filters was a quarter of
# the search, at every corpus size). The builder writes these tokens; the search asks for them.
SECTION_TAGS_COLUMN = "filter_tags"
SUPERSEDED_TAG = "superseded"


def section_tag(kind: str, value: str) -> str:
    """One token per filter value, kept whole by the FTS tokenizer (it splits on '_'):
    ('org', 'ontario_health') -> 'orgontariohealth'."""
    return kind + re.sub(r"[^a-z0-9]", "", value.lower())


def section_tags(
    source_org: str,
    document_type: str,
    chunk_type: str,
    policy_level: str | None,
    is_superseded: bool,
) -> str:
    """A section's filter values as the space-separated tokens of its FTS `filter_tags` column."""
    tags = [
        section_tag("org", source_org),
        section_tag("type", document_type),
        section_tag("chunk", chunk_type),
    ]
    if policy_level:
        tags.append(section_tag("level", policy_level))
    if is_superseded:
        tags.append(SUPERSEDED_TAG)
    return " ".join(tags)


def collections_for(chunk_id: str) -> list[str]:
    """The collection(s) a chunk id can live in, from its prefix; unknown prefixes try them all."""
    head, sep, _ = chunk_id.partition(":")
    if sep and head in OFF_COLLECTIONS:
        return [OFF_COLLECTIONS[head]]
    for prefix, org in OPA_ID_PREFIXES.items():
        if chunk_id.startswith(prefix):
            return [OPA_COLLECTIONS[org]]
    return list(ALL_COLLECTIONS)


def is_off_chunk(chunk_id: str) -> bool:
    head, sep, _ = chunk_id.partition(":")
    return bool(sep) and head in OFF_COLLECTIONS


# ------------------------------------------------------------------------------ chunk ids
# Every citation carries one of these; `source.passages` resolves each kind.
OHIP_CODES_PER_PASSAGE = 40  # schedule subsections are cut into passages of at most 40 codes


def ohip_commentary_id(slug: str) -> str:
    return f"ohip:commentary:{slug}"


def ohip_subsection_id(subsection_n: int | str, part: int = 1) -> str:
    """'ohip:subsection:12' (first part) or 'ohip:subsection:12:p2'."""
    return f"ohip:subsection:{subsection_n}" + (f":p{part}" if part > 1 else "")


def adp_rule_id(adp_doc: str, section_ref: str, kind: str, rule_id: str) -> str:
    """'adp:mobility:110.01:funding:F001' (kind: funding | exclusion | descriptive)."""
    return f"adp:{adp_doc}:{section_ref}:{kind}:{rule_id}"


ADP_CEP_ID = "adp:cep:thresholds"
# ADP manual sections keep the ingest id ('adp:prosthesis:205', 'adp:prosthesis:205-2'): section
# numbers collide inside a manual, the id does not.


def odb_group_id(group_id: str) -> str:
    return f"odb:group:{group_id}"


def odb_lu_id(lu_code: str) -> str:
    return f"odb:lu:{lu_code}"


def odb_policy_id(n: int | str) -> str:
    return f"odb:policy:{n}"


def odb_note_id(note_id: str) -> str:
    return f"odb:note:{note_id}"


# ------------------------------------------------------------------------------ shared text
OHIP_LINE_EXTRA_CHARS = 400


def ohip_line_extra(limits: str | None, requirements: str | None) -> str:
    """The '(limits; requirements)' part of a schedule passage line, as the index writes it and
    schedule.get reads it back (to compare with the fee table)."""
    return "; ".join(x for x in (limits, requirements) if x)[:OHIP_LINE_EXTRA_CHARS]


# ------------------------------------------------------------------------------ dates
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
MONTHS = {m.lower(): i for i, m in enumerate(MONTH_NAMES, start=1)}
MONTH = f"(?:{'|'.join(MONTH_NAMES)})"  # compile with re.I to accept any case
_DATE = re.compile(rf"(?:({MONTH})\s+)?(\d{{4}})", re.I)


def iso_date(year: str, month: str | None, day: int = 1) -> str:
    """('2014', 'December') -> '2014-12-01'; a missing or unknown month counts as January."""
    return f"{year}-{MONTHS.get((month or '').lower(), 1):02d}-{day:02d}"


def parse_dates(text: str) -> list[str]:
    """'April 2007; December 2014, May 2019' -> ['2007-04-01', '2014-12-01', '2019-05-01']."""
    return [iso_date(year, month) for month, year in _DATE.findall(text or "")]


# ------------------------------------------------------------------------------ ODB ingredients
SALT_WORDS = {
    "HCL",
    "HYDROCHLORIDE",
    "DIHYDROCHLORIDE",
    "HYDROBROMIDE",
    "SODIUM",
    "DISODIUM",
    "POTASSIUM",
    "CALCIUM",
    "MAGNESIUM",
    "ACETATE",
    "SULFATE",
    "SULPHATE",
    "BISULFATE",
    "PHOSPHATE",
    "DIPHOSPHATE",
    "FUMARATE",
    "HEMIFUMARATE",
    "MALEATE",
    "MESYLATE",
    "DIMESYLATE",
    "BESYLATE",
    "TARTRATE",
    "BITARTRATE",
    "SUCCINATE",
    "CITRATE",
    "BROMIDE",
    "CHLORIDE",
    "TOSYLATE",
    "LACTATE",
    "MALATE",
    "NITRATE",
    "OXALATE",
    "PAMOATE",
    "MONOHYDRATE",
    "DIHYDRATE",
    "TRIHYDRATE",
    "HEMIHYDRATE",
    "SESQUIHYDRATE",
    "ANHYDROUS",
    "HYCLATE",
    "TROMETHAMINE",
    "MEDOXOMIL",
    "CILEXETIL",
    "AXETIL",
    "BASE",
    "PROPIONATE",
    "DIPROPIONATE",
    "FUROATE",
    "VALERATE",
    "CYPIONATE",
    "ENANTHATE",
    "DECANOATE",
    "XINAFOATE",
    "ERBUMINE",
    "ARGININE",
    "MEGLUMINE",
    "HEMITARTRATE",
    "HBR",
    "L-TARTRATE",
    "ETEXILATE",
    "OLAMINE",
    "BUTYLBROMIDE",
}
ION_FIRST = {
    "SODIUM",
    "POTASSIUM",
    "CALCIUM",
    "MAGNESIUM",
    "FERROUS",
    "FERRIC",
    "ZINC",
    "ALUMINUM",
    "LITHIUM",
    "AMMONIUM",
    "SILVER",
    "COPPER",
}


def ingredient_key(generic_name: str) -> str:
    """'ATORVASTATIN CALCIUM' -> 'atorvastatin'; 'X HCL & Y' -> 'x & y'."""
    name = re.sub(r"\([^)]*\)", " ", generic_name or "")
    parts = [p for p in re.split(r"\s*(?:&|/|\bAND\b)\s*", name.upper()) if p.strip()]
    out: list[str] = []
    for part in parts:
        toks = part.split()
        if toks and toks[0] not in ION_FIRST:
            while len(toks) > 1 and toks[-1].strip(",") in SALT_WORDS:
                toks.pop()
        key = " ".join(toks).lower().strip(" ,")
        if key and key not in out:
            out.append(key)
    return " & ".join(out)
