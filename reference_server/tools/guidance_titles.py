"""Which guidance a question's words lie nearest as a whole: a third view of a policy question,
beside the keyword and the vector path's section rankings.

Both paths rank sections, and a clinician's question in their own words ("may my clinic's
Instagram post patient success stories?") can find its closest sections in a policy that touches
the subject (social media) while another policy is the one about it (advertising); the two paths
then agree, with a clear margin, on the wrong policy. Each guidance's title with its topics says
what the document is about. When the title nearest the question (by the same embedding as the
vector path, from the same query vector) is another guidance's, the section answer is in doubt
whatever its margin: on clinicians' questions such answers were right about two times in three,
against eight or nine in ten for those whose own title is nearest.

A guidance is a document with its companion (a policy's Advice to the Profession): each is
embedded as "title: topics", and the guidance takes its better similarity. Similarities are
rounded as every ranking rounds them (ranking.py), so machines agree on which title is nearest.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from reference_server import ranking
from reference_server.errors import IndexMissingError
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient


@dataclass(frozen=True)
class TitleMatrix:
    """Every current document of an organisation, embedded as "title: topics"."""

    guidance: tuple[str, ...]  # per row: the guidance it belongs to (its own id, or the
    # document it accompanies)
    vectors: np.ndarray  # unit rows, one per document

    def nearest(self, query_vector: Sequence[float]) -> dict[str, float]:
        """Each guidance's best similarity to the query, rounded as rankings compare them."""
        if not self.guidance:
            return {}
        raw = self.vectors @ np.asarray(query_vector, dtype=np.float32)
        best: dict[str, float] = {}
        for key, value in zip(self.guidance, ranking.similarities(raw).tolist(), strict=True):
            best[key] = max(best.get(key, -1.0), float(value))
        return best


EMPTY = TitleMatrix((), np.zeros((0, 0), dtype=np.float32))


def title_text(title: str, topics: Sequence[str]) -> str:
    """What a document is about, as one line: its title, then its topics."""
    return f"{title}: {', '.join(topics)}" if topics else title


def title_matrix(sql: SqlClient, vectors: VectorClient, org: str, collection: str) -> TitleMatrix:
    """The organisation's current documents by title, built once per process with the model
    that embeds the collection's queries; empty when the SQL store cannot be read (then the
    answer carries no title view)."""

    def build() -> TitleMatrix:
        rows = sql.query(
            "SELECT document_id, title, topics, companion_of FROM opa_documents "
            "WHERE source_org = ? AND is_superseded = 0 ORDER BY document_id",
            [org],
        )
        if not rows:
            return EMPTY
        embedder = vectors.embedder_for(collection)
        model = getattr(embedder, "inner", embedder)  # not the query cache: titles are not queries
        texts = [title_text(str(r["title"]), json.loads(r["topics"] or "[]")) for r in rows]
        matrix = np.asarray(model.embed(texts), dtype=np.float32)
        keys = tuple(str(r["companion_of"] or r["document_id"]) for r in rows)
        return TitleMatrix(keys, matrix)

    try:
        return vectors.derived.get(("guidance_titles", org, collection), build)
    except (IndexMissingError, sqlite3.Error, OSError):
        return EMPTY


def title_gap(
    nearest: Mapping[str, float], lead_document: str, families: Mapping[str, str]
) -> float | None:
    """How much nearer the leading answer's guidance title lies to the question than any other
    guidance's (negative: another's is nearer); None when there is nothing to compare."""
    lead = families.get(lead_document, lead_document)
    if lead not in nearest or len(nearest) < 2:
        return None
    other = max(v for k, v in nearest.items() if k != lead)
    return round(nearest[lead] - other, ranking.SIMILARITY_DECIMALS)
