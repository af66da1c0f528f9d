"""The ranking: BM25 over a tool's fields and the embedding model's similarity, each ranking
the whole catalogue, fused by reciprocal rank (RRF); filters by category and tool type; a
capability search that also checks parameter names and complexity."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from tool_search.bm25 import FieldBM25
from tool_search.models import MatchReason
from tool_search.ranking_config import RankingConfig
from tool_search.records import ToolRecord
from tool_search.semantic import SemanticIndex
from tool_search.text import split_name, stem

# Small k: a tool catalogue is short and its first ranks matter most (k=5 chosen on the
# tuning half of the routing cases over 10, 30 and 60; docs/tool-search.md).
RRF_K = RankingConfig().rrf_k
# Similarity bands for the response's confidence distribution (MiniLM cosine).
HIGH_SIMILARITY, MEDIUM_SIMILARITY = 0.55, 0.35


@dataclass(frozen=True)
class Hit:
    row: int
    score: float
    keyword_rank: int | None
    semantic_rank: int | None
    similarity: float | None


def _ranks(scores: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """1-based rank of each eligible tool by score (ties by catalogue order); 0 = unranked."""
    rows = np.flatnonzero(eligible)
    order = rows[np.lexsort((rows, -np.round(scores[rows], 6)))]
    ranks = np.zeros(len(scores), dtype=np.int64)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


class ToolIndex:
    """A catalogue's tools with both rankings built."""

    def __init__(
        self,
        tools: list[ToolRecord],
        semantic: SemanticIndex | None = None,
        config: RankingConfig | None = None,
    ):
        self.config = config or RankingConfig()
        self.tools = tools
        self.by_id = {t.tool_id: i for i, t in enumerate(tools)}
        self.keyword = FieldBM25(tools, self.config)
        self.semantic = (
            semantic if semantic is not None else SemanticIndex(tools, config=self.config)
        )
        self._categories = np.array([t.category for t in tools], dtype=object)
        self._types = np.array([t.tool_type for t in tools], dtype=object)

    def mask(self, category: str | None = None, tool_type: str | None = None) -> np.ndarray:
        keep = np.ones(len(self.tools), dtype=bool)
        if category:
            keep &= self._categories == category
        if tool_type:
            keep &= self._types == tool_type
        return keep

    def search(
        self,
        query: str,
        mode: str = "hybrid",
        k: int = 10,
        keep: np.ndarray | None = None,
    ) -> tuple[list[Hit], int]:
        """The best k tools and how many matched at all (keyword: any term; semantic and
        hybrid: every eligible tool is ranked)."""
        keep = np.ones(len(self.tools), dtype=bool) if keep is None else keep
        kw = self.keyword.scores(query) if mode in ("keyword", "hybrid") else None
        sem = self.semantic.scores(query) if mode in ("semantic", "hybrid") else None
        kw_ranks = _ranks(kw, keep & (kw > 0)) if kw is not None else None
        sem_ranks = _ranks(sem, keep) if sem is not None else None
        if mode == "keyword":
            assert kw is not None and kw_ranks is not None
            fused = np.where(kw_ranks > 0, kw, 0.0)
            eligible = kw_ranks > 0
        elif mode == "semantic":
            assert sem is not None
            fused, eligible = sem.astype(np.float64), keep
        else:
            assert kw_ranks is not None and sem_ranks is not None
            k_rrf, w_sem = self.config.rrf_k, self.config.semantic_weight
            fused = np.where(kw_ranks > 0, 1.0 / (k_rrf + kw_ranks), 0.0)
            fused = fused + np.where(sem_ranks > 0, w_sem / (k_rrf + sem_ranks), 0.0)
            eligible = keep
        total = int(eligible.sum())
        rows = np.flatnonzero(eligible)
        rounded = np.round(fused[rows], 6)
        if len(rows) > k:  # keep the k best (and any tied with the k-th) before sorting
            cutoff = np.partition(-rounded, k - 1)[k - 1]
            rows, rounded = rows[-rounded <= cutoff], rounded[-rounded <= cutoff]
        rows = rows[np.lexsort((rows, -rounded))][:k]
        hits = [
            Hit(
                row=int(r),
                score=round(float(fused[r]), 6),
                keyword_rank=int(kw_ranks[r]) if kw_ranks is not None and kw_ranks[r] else None,
                semantic_rank=int(sem_ranks[r]) if sem_ranks is not None and sem_ranks[r] else None,
                similarity=round(float(sem[r]), 4) if sem is not None else None,
            )
            for r in rows
        ]
        return hits, total

    def matched_fields(self, row: int, query: str) -> dict[str, list[str]]:
        return self.keyword.matched_fields(row, query)

    def ranked_ids(self, query: str, mode: str = "hybrid", k: int = 10) -> list[str]:
        """The ids of the best k tools (what the routing evaluation reads)."""
        hits, _ = self.search(query, mode, k)
        return [self.tools[h.row].tool_id for h in hits]


def _name_key(name: str) -> str:
    return " ".join(stem(w) for w in split_name(name).split())


def parameter_matches(tool: ToolRecord, wanted: list[str]) -> dict[str, str] | None:
    """Each wanted parameter -> the tool's argument providing it (exact name, the same words
    once split and stemmed, or a close spelling), or None when one has no match."""
    names = [p.name for p in tool.parameters]
    keys = {_name_key(n): n for n in names}
    out: dict[str, str] = {}
    for want in wanted:
        if want in names:
            out[want] = want
            continue
        key = _name_key(want)
        if key in keys:
            out[want] = keys[key]
            continue
        close = difflib.get_close_matches(key, list(keys), n=1, cutoff=0.8)
        if not close:
            return None
        out[want] = keys[close[0]]
    return out


def capability_search(
    index: ToolIndex,
    description: str,
    required: list[str],
    complexity: str,
    k: int,
) -> tuple[list[tuple[Hit, dict[str, str]]], int, dict[str, int]]:
    """Hybrid ranking restricted to tools that take every required parameter and have the
    preferred complexity; returns (hits with their parameter matches, total, exclusions)."""
    keep = np.ones(len(index.tools), dtype=bool)
    excluded: dict[str, int] = {}
    matches: dict[int, dict[str, str]] = {}
    for row, tool in enumerate(index.tools):
        found = parameter_matches(tool, required) if required else {}
        if found is None:
            keep[row] = False
            excluded["missing a required parameter"] = (
                excluded.get("missing a required parameter", 0) + 1
            )
            continue
        if complexity != "any" and tool.complexity != complexity:
            keep[row] = False
            excluded["other complexity"] = excluded.get("other complexity", 0) + 1
            continue
        matches[row] = found
    hits, total = index.search(description, "hybrid", k, keep)
    return [(h, matches[h.row]) for h in hits], total, excluded


def confidence_band(similarity: float | None) -> str:
    if similarity is None:
        return "unknown"
    if similarity >= HIGH_SIMILARITY:
        return "high"
    return "medium" if similarity >= MEDIUM_SIMILARITY else "low"


def describe_hit(index: ToolIndex, hit: Hit, query: str) -> MatchReason:
    """The 'why it matched' of a hit."""
    return MatchReason(
        fields=index.matched_fields(hit.row, query),
        keyword_rank=hit.keyword_rank,
        semantic_rank=hit.semantic_rank,
        similarity=hit.similarity,
    )
