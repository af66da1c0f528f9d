"""Which codes schedule.get's answer lists, and in what order: the code lists both paths produced
(fee-table search, commentary rows, description matches, passages) fused by reciprocal rank,
codes the request names first, then codes whose description the question restates.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from reference_server import ranking
from reference_server.retrieval.ohip_schedule import (
    SqlFound,
    VectorFound,
    described_overlaps,
    query_terms,
)
from reference_server.retrieval.vector import VectorHit

RRF_K = 10
SIMILARITY_BAND = 0.15  # commentary passages this close to the best one add their codes
# A description q restates this closely (F1 of the weighted word sets, retrieval/
# ohip_descriptions.py) ranks its code ahead of codes that are only near q: questions that
# restate a description score about 0.9-1.0 on it, open questions at most about 0.65.
RESTATED = 0.75


@dataclass
class Candidate:
    score: float = 0.0
    named: int | None = None
    restated: float = 0.0  # how closely q restates the code's description, when >= RESTATED
    passages: dict[str, VectorHit] = field(default_factory=dict)

    def order(self, code: str) -> tuple[bool, int, float, float, str]:
        """Named codes in request order, then restated descriptions, then fused score."""
        return (
            self.named is None,
            self.named or 0,
            -self.restated,
            -ranking.score(self.score),
            code,
        )


def rank(
    q: str, named: list[str], sql: SqlFound | None, vec: VectorFound | None
) -> dict[str, Candidate]:
    """Reciprocal-rank fusion of the code lists each path produced; named codes come first,
    then codes whose description q restates (`Candidate.order`)."""
    found: dict[str, Candidate] = defaultdict(Candidate)
    for i, code in enumerate(named):
        found[code].named = i

    def add(codes: list[tuple[float, str]]) -> None:
        for position, code in codes:
            found[code].score += 1.0 / (RRF_K + position)

    def from_commentary(rows: list[tuple[int, str]]) -> list[tuple[float, str]]:
        out = []
        for row_rank, codes in rows:
            out += [(row_rank + 0.3 * j, c) for j, c in enumerate(codes.split(";")) if c]
        return out

    if sql:
        add(from_commentary([(i, r.codes or "") for i, r in enumerate(sql.commentary)]))
        add([(float(i), c) for i, c in enumerate(sql.fts)])
        # Only close restatements count: as one more fused list, descriptions sharing a word
        # or two with an open question pushed the commentary's answers down.
        for d in sql.described:
            if d.score >= RESTATED:
                found[d.code].restated = d.score
    if vec:
        terms = query_terms(q)
        best = vec.hits[0].similarity if vec.hits else 0.0
        commentary = [
            h
            for h in vec.hits
            if h.metadata.get("doc_type") == "commentary" and h.similarity >= best - SIMILARITY_BAND
        ]
        add(
            from_commentary(
                [(i, str(h.metadata.get("codes", ""))) for i, h in enumerate(commentary)]
            )
        )
        line_hits: list[tuple[float, str]] = []
        for i, hit in enumerate(h for h in vec.hits if h.metadata.get("doc_type") == "subsection"):
            for code, shared in described_overlaps(hit, terms).items():
                line_hits.append((i * 3 + 1 / shared, code))
        add(sorted(line_hits))
        for hit in vec.hits:
            for code in str(hit.metadata.get("codes", "")).split(";"):
                if code in found:
                    found[code].passages[hit.id] = hit
    return found
