"""The CEP clinical-tools store behind opa.clinical_tools, in the paths' naming scheme.

SQL path: every CEP document carrying a structured `tool` block (a few dozen rows; the tool
filters them by condition, name, category and feature). Vector path: CEP chunks nearest the
request's words, whose metadata carry the same tool block so the path can answer alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from reference_server.retrieval import opa_sections
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient, VectorHit

LIMIT = 20
_WORD = re.compile(r"[a-z0-9]+(?:['/+-][a-z0-9]+)*")


def padded_words(text: str) -> str:
    """`text`'s words, lower-cased, one space between and one at each end, so a name is found in
    a question only as whole words (' add ' is not in ' bladder leakage ')."""
    return " " + " ".join(_WORD.findall(text.lower())) + " "


def word_runs(padded: str) -> frozenset[str]:
    """Every run of consecutive words of a `padded_words` text, each padded the same way: a
    padded name is inside `padded` exactly when it is one of these, so a name is tested by one
    set lookup instead of a substring search per name and document."""
    words = padded.split()
    if not words:
        return frozenset({padded})
    return frozenset(
        " " + " ".join(words[i:j]) + " "
        for i in range(len(words))
        for j in range(i + 1, len(words) + 1)
    )


Feature = Literal["assessment_algorithm", "calculator", "checklist"]


@dataclass(frozen=True)
class CepFeatures:
    """Where in the tool each feature is (an anchor or a URL), or None when it has none."""

    assessment_algorithm: str | None
    calculator: str | None
    checklist: str | None

    def anchor(self, feature: Feature) -> str | None:
        return {
            "assessment_algorithm": self.assessment_algorithm,
            "calculator": self.calculator,
            "checklist": self.checklist,
        }[feature]


@dataclass(frozen=True)
class CepNavEntry:
    title: str
    anchor: str | None
    summary: str | None


@dataclass(frozen=True)
class CepTool:
    """A CEP document's structured `tool` block (the JSON column, or its vector copy)."""

    tool_id: str  # the document id when the block names none
    category: str
    conditions: tuple[str, ...]
    features: CepFeatures
    screening_tools: tuple[str, ...]
    navigation: tuple[CepNavEntry, ...]
    pdf_url: str | None
    summary: str | None

    @classmethod
    def decode(cls, text: str, document_id: str) -> CepTool:
        data: Mapping[str, Any] = json.loads(text)
        features = data.get("features") or {}
        return cls(
            tool_id=data.get("tool_id", document_id),
            category=data.get("category", ""),
            conditions=tuple(data.get("conditions", ())),
            features=CepFeatures(
                features.get("assessment_algorithm"),
                features.get("calculator"),
                features.get("checklist"),
            ),
            screening_tools=tuple(data.get("screening_tools") or ()),
            navigation=tuple(
                CepNavEntry(n["title"], n.get("anchor"), n.get("summary"))
                for n in data.get("navigation") or ()
            ),
            pdf_url=data.get("pdf_url"),
            summary=data.get("summary"),
        )


@dataclass(frozen=True)
class CepToolDoc:
    """One CEP tool document. `match_names` are its tool's conditions and its topics lower-cased
    once, `match_text` the same joined by a control character (requests refuse those),
    `match_words` each name as `padded_words` and `category_lower` its category, so matching a
    request against every document does not lower or split the same names on every call (100x:
    ~3,000 documents)."""

    document_id: str
    title: str
    source_url: str
    updated_date: str | None
    topics: tuple[str, ...]
    tool: CepTool
    match_names: tuple[str, ...]
    match_text: str
    match_words: frozenset[str]
    title_lower: str
    category_lower: str

    @classmethod
    def build(
        cls,
        document_id: str,
        title: str,
        source_url: str,
        updated_date: str | None,
        topics: tuple[str, ...],
        tool: CepTool,
    ) -> CepToolDoc:
        names = tuple(n.lower() for n in [*tool.conditions, *topics])
        return cls(
            document_id,
            title,
            source_url,
            updated_date,
            topics,
            tool,
            match_names=names,
            match_text="\x00".join(names),
            match_words=frozenset(padded_words(n) for n in names),
            title_lower=title.lower(),
            category_lower=tool.category.lower(),
        )


@dataclass(frozen=True)
class CepCatalogue:
    """The CEP tool documents, with which of them each category and each feature lists, and
    every title and name text in one tuple, so a request's filters pick their documents by a
    lookup or one substring test per document instead of scoring the whole catalogue in Python
    (10x: ~380 documents, 0.4-1.0 ms a call). `memo` keeps what a tool builds from one document
    (its answer entry), keyed by the document's position."""

    docs: tuple[CepToolDoc, ...]
    by_category: Mapping[str, tuple[int, ...]]
    with_feature: Mapping[Feature, tuple[int, ...]]
    by_name_words: Mapping[str, tuple[int, ...]]
    titles: tuple[str, ...]
    name_texts: tuple[str, ...]
    memo: dict[tuple[int, bool], Any]

    @classmethod
    def of(cls, docs: list[CepToolDoc]) -> CepCatalogue:
        by_category: dict[str, list[int]] = {}
        with_feature: dict[Feature, list[int]] = {}
        by_name_words: dict[str, list[int]] = {}
        features: tuple[Feature, ...] = ("assessment_algorithm", "calculator", "checklist")
        for i, d in enumerate(docs):
            by_category.setdefault(d.category_lower, []).append(i)
            for f in features:
                if d.tool.features.anchor(f):
                    with_feature.setdefault(f, []).append(i)
            for words in d.match_words:
                by_name_words.setdefault(words, []).append(i)
        return cls(
            tuple(docs),
            {k: tuple(v) for k, v in by_category.items()},
            {k: tuple(v) for k, v in with_feature.items()},
            {k: tuple(v) for k, v in by_name_words.items()},
            tuple(d.title_lower for d in docs),
            tuple(d.match_text for d in docs),
            {},
        )

    def titles_with(self, text: str) -> set[int]:
        return {i for i, title in enumerate(self.titles) if text in title}

    def names_with(self, text: str) -> set[int]:
        return {i for i, names in enumerate(self.name_texts) if text in names}


def keyword_search(sql: SqlClient) -> CepCatalogue:
    """SQL path: all CEP tool documents, tool block and topics decoded, as a catalogue.

    Built once per process (the index is read-only): decoding the documents on every call grew
    with the catalogue (1.8 ms per call at 10x)."""

    def decoded() -> CepCatalogue:
        rows = sql.query(
            "SELECT document_id, title, source_url, updated_date, topics, tool FROM opa_documents "
            "WHERE source_org = 'cep' AND tool IS NOT NULL"
        )
        return CepCatalogue.of(
            [
                CepToolDoc.build(
                    r["document_id"],
                    r["title"],
                    r["source_url"],
                    r["updated_date"],
                    tuple(json.loads(r["topics"])),
                    CepTool.decode(r["tool"], r["document_id"]),
                )
                for r in rows
            ]
        )

    catalogue: CepCatalogue = sql.derived.get("opa_cep_tools.documents", decoded)
    return catalogue


def vector_search(vectors: VectorClient, query: str, limit: int = LIMIT) -> list[VectorHit]:
    """Vector path: CEP chunks nearest the query."""
    return opa_sections.vector_search(
        vectors, query, opa_sections.Filters(source_orgs=["cep"]), limit=limit
    )


def tools_from_vectors(hits: list[VectorHit]) -> list[CepToolDoc]:
    """CEP tool documents rebuilt from vector-chunk metadata, one per document."""
    found: dict[str, CepToolDoc] = {}
    for h in hits:
        m = h.metadata
        if m.get("tool") and m.get("document_id") not in found:
            found[m["document_id"]] = CepToolDoc.build(
                m["document_id"],
                m.get("title", ""),
                m.get("source_url", ""),
                m.get("updated_date") or None,
                tuple(t for t in str(m.get("topics", "")).split(";") if t),
                CepTool.decode(m["tool"], m["document_id"]),
            )
    return list(found.values())
