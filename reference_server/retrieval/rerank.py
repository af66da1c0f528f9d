"""Optional LLM reranking (`OCM_RERANK=openai`): the spec's "Vector -> Rerank -> Filter" step.

Seeds 000/001 rerank the fused candidates with a small OpenAI chat model that scores each one
0-10 for relevance to the query. Here that is one batched chat completion over the top
`rerank_candidates` hits, run only when the setting asks for it *and* `OPENAI_API_KEY` is set,
under its own timeout (`OCM_RERANK_TIMEOUT_MS`, no retries), cut to what is left of the
whole-tool timeout after retrieval. Any failure - no key, timeout,
HTTP error, unparsable reply - leaves the order as fused, so reranking can only reorder an
answer, never lose one. The outcome is reported in the tool's `_meta.rerank`.

Reranking reorders the window and hands the window's original scores back out in the new order,
so scores stay monotonic and on the fusion scale (the spec's boosts stay inside them).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NotRequired, Protocol, TypedDict, TypeVar

from reference_server.config import Settings
from reference_server.errors import masked

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You rank passages of Ontario clinical practice guidance for a clinician's question. "
    "Score every passage 0-10 for how directly it answers the question (10 = answers it, "
    "0 = unrelated). Reply with JSON only: "
    '{"scores": [{"id": "<passage id>", "score": <0-10>}, ...]} covering every passage id.'
)
PASSAGE_CHARS = 700
# Time kept back from the whole-tool budget for merging, scoring and serialising the answer.
RESPONSE_RESERVE_MS = 150.0
MIN_BUDGET_MS = 50.0


class Rankable(Protocol):
    score: float


H = TypeVar("H", bound=Rankable)


class RerankMeta(TypedDict):
    """`_meta.rerank`: whether the reranker reordered the answer, with which model, over how
    many candidates, in how long, and why not."""

    applied: bool
    model: str
    candidates: int
    elapsed_ms: NotRequired[float]
    error: NotRequired[str]


@dataclass
class RerankOutcome:
    """What the reranker did, for `_meta.rerank` (absent when reranking is off)."""

    applied: bool
    model: str
    candidates: int = 0
    elapsed_ms: float | None = None
    error: str | None = None
    scores: dict[str, float] = field(default_factory=dict)

    def meta(self) -> RerankMeta:
        out: RerankMeta = {
            "applied": self.applied,
            "model": self.model,
            "candidates": self.candidates,
        }
        if self.elapsed_ms is not None:
            out["elapsed_ms"] = round(self.elapsed_ms, 1)
        if self.error:
            out["error"] = self.error
        return out


def enabled(settings: Settings) -> bool:
    return settings.rerank == "openai"


def _prompt(query: str, passages: Sequence[tuple[str, str]]) -> str:
    lines = [f"Question: {query}", "", "Passages:"]
    for pid, text in passages:
        lines.append(json.dumps({"id": pid, "text": text[:PASSAGE_CHARS]}, ensure_ascii=False))
    return "\n".join(lines)


def parse_scores(content: str, ids: set[str]) -> dict[str, float]:
    """The model's {"scores": [{"id", "score"}]} reply, kept only for known ids, clamped to 0-10."""
    data = json.loads(content)
    rows = data.get("scores") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ValueError("reply has no 'scores' list")
    scores: dict[str, float] = {}
    for row in rows:
        if not isinstance(row, dict) or str(row.get("id")) not in ids:
            continue
        value = row.get("score")
        if isinstance(value, int | float) and not isinstance(value, bool):
            scores[str(row["id"])] = max(0.0, min(10.0, float(value)))
    if not scores:
        raise ValueError("reply scored none of the passages")
    return scores


def budget_ms(settings: Settings, spent_ms: float) -> float:
    """The rerank call's time: its own timeout, cut so the tool still answers within its
    whole-tool timeout after `spent_ms` of retrieval (a late rerank must not lose the answer)."""
    left = settings.tool_timeout_ms - spent_ms - RESPONSE_RESERVE_MS
    return min(settings.rerank_timeout_ms, left)


def _score_with_openai(
    settings: Settings, query: str, passages: list[tuple[str, str]], timeout_s: float
) -> str:
    from openai import OpenAI

    client = OpenAI(timeout=timeout_s, max_retries=0)
    reply = client.chat.completions.create(
        model=settings.rerank_model,
        temperature=0,
        response_format={"type": "json_object"},
        messages=[
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": _prompt(query, passages)},
        ],
    )
    return reply.choices[0].message.content or ""


def reorder(hits: list[H], ids: list[str], scores: dict[str, float]) -> list[H]:
    """Window ordered by model score (ties and unscored keep fused order), scores handed back."""
    window = list(range(len(ids)))
    order = sorted(window, key=lambda i: (-scores.get(ids[i], -1.0), i))
    original = [hits[i].score for i in window]
    reranked = [hits[i] for i in order]
    for hit, score in zip(reranked, original, strict=True):
        hit.score = score
    return reranked + hits[len(ids) :]


async def rerank(
    settings: Settings,
    query: str,
    hits: list[H],
    *,
    id_of: Callable[[H], str],
    text_of: Callable[[H], str],
    spent_ms: float = 0.0,
) -> tuple[list[H], RerankOutcome | None]:
    """Hits reranked by the configured model, or unchanged (with the reason) when it cannot.
    `spent_ms` is how long the tool has run so far (see `budget_ms`)."""
    if not enabled(settings):
        return hits, None
    outcome = RerankOutcome(applied=False, model=settings.rerank_model)
    if not hits:
        return hits, outcome
    if not os.environ.get("OPENAI_API_KEY"):
        outcome.error = "OPENAI_API_KEY is not set; order left as fused"
        return hits, outcome
    budget = budget_ms(settings, spent_ms)
    if budget < MIN_BUDGET_MS:
        outcome.error = f"no time left in the tool budget ({budget:.0f} ms); order left as fused"
        return hits, outcome
    window = hits[: settings.rerank_candidates]
    ids = [id_of(h) for h in window]
    outcome.candidates = len(window)
    passages = [(i, text_of(h)) for i, h in zip(ids, window, strict=True)]
    started = time.perf_counter()
    try:
        content = await asyncio.wait_for(
            asyncio.to_thread(_score_with_openai, settings, query, passages, budget / 1000),
            timeout=budget / 1000,
        )
        scores = parse_scores(content, set(ids))
    except Exception as exc:  # any failure falls back to the fused order
        outcome.elapsed_ms = (time.perf_counter() - started) * 1000
        # The outcome reaches the client's `_meta`: the exception itself goes to the log only.
        outcome.error = (
            f"timed out after {budget:.0f} ms"
            if isinstance(exc, TimeoutError)
            else masked("the reranker", exc)
        )
        log.warning("rerank fell back to the fused order: %s", outcome.error)
        return hits, outcome
    outcome.elapsed_ms = (time.perf_counter() - started) * 1000
    outcome.applied = True
    outcome.scores = scores
    return reorder(hits, ids, scores), outcome
