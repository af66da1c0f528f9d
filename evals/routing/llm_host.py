"""Optional LLM host mode: a model (OpenAI) reads the top-k tools search returns, as a host
would after a tool-search call, and picks one; its pick is scored like a ranking of one.
Without OPENAI_API_KEY (or the openai package) the mode is skipped, and the record says why."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evals.routing.cases import RoutingCase
from evals.routing.metrics import summary_of_ranks
from tool_search.engine import ToolIndex

if TYPE_CHECKING:
    from evals.routing.run import LLMHostResult

DEFAULT_MODEL = "gpt-4o-mini"


def unavailable() -> str | None:
    """Why the mode cannot run here, or None."""
    if not os.environ.get("OPENAI_API_KEY"):
        return "OPENAI_API_KEY is not set (offline): the LLM host mode was skipped"
    try:
        import openai  # noqa: F401
    except ImportError:
        return "the openai package is not installed: the LLM host mode was skipped"
    return None


def _prompt(case: RoutingCase, index: ToolIndex, ids: list[str]) -> str:
    listed = "\n".join(f"- {i}: {index.tools[index.by_id[i]].description[:600]}" for i in ids)
    return (
        "You route a user's request to exactly one tool. Tools:\n"
        f"{listed}\n\nRequest: {case.text}\n"
        'Answer with JSON only: {"tool_id": "<one of the ids above>"}'
    )


def llm_host(
    index: ToolIndex, cases: Sequence[RoutingCase], k: int = 5, model: str = DEFAULT_MODEL
) -> LLMHostResult:
    reason = unavailable()
    if reason:
        return {"skipped": reason}
    from openai import OpenAI

    client = OpenAI()
    ranks: list[int | None] = []
    for case in cases:
        ids = index.ranked_ids(case.text, "hybrid", k)
        reply = client.chat.completions.create(
            model=model,
            temperature=0,
            response_format={"type": "json_object"},
            messages=[{"role": "user", "content": _prompt(case, index, ids)}],
        )
        try:
            pick = json.loads(reply.choices[0].message.content or "{}").get("tool_id")
        except json.JSONDecodeError:
            pick = None
        ranks.append(1 if pick in case.expected else None)
    return {"model": model, "k": k, "overall": summary_of_ranks(ranks)}
