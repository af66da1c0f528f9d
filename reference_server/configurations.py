"""Named configurations of the reference server, for ablations and backend comparisons.

A name stands for a set of :class:`~reference_server.config.Settings` overrides:
``inprocess:keyword`` in the harness, ``OCM_CONFIG=keyword`` for a server started any other
way (stdio, HTTP). Configurations that need something this machine may not have (an OpenAI
key, an index built with other embeddings, a server feature) say what is missing instead of
quietly running as something else.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ocm_common.json_types import JsonObject

# Beside the default index (build/index); this module reads no settings, so that
# `config.Settings` can resolve OCM_CONFIG through it without the two importing each other.
OPENAI_INDEX_DIR = Path(__file__).resolve().parent.parent / "build" / "index-openai"


class ConfigurationUnavailable(ValueError):
    """A named configuration that cannot run here; the message says why and what to do."""


@dataclass(frozen=True)
class NamedConfiguration:
    name: str
    description: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    # Returns None when the configuration can run, else the reason it cannot.
    unavailable: Callable[[Mapping[str, str]], str | None] = lambda env: None


def _needs_key(env: Mapping[str, str]) -> str | None:
    return None if env.get("OPENAI_API_KEY") else "needs OPENAI_API_KEY in the environment"


def _openai_index(env: Mapping[str, str]) -> str | None:
    missing = _needs_key(env)
    if missing:
        return missing
    index = Path(env.get("OCM_OPENAI_INDEX_DIR") or OPENAI_INDEX_DIR)
    if not (index / "opa.db").is_file():
        return (
            f"needs an index built with OpenAI embeddings at {index}: run "
            f"'OCM_EMBEDDING=openai OCM_INDEX_DIR={index} make index' (or set OCM_OPENAI_INDEX_DIR)"
        )
    return None


def _rerank(env: Mapping[str, str]) -> str | None:
    if not _rerank_implemented():
        return "OCM_RERANK is not implemented by this server version (no reranker in retrieval/)"
    return _needs_key(env)


def _rerank_implemented() -> bool:
    """True when the server ships a reranker that reads ``Settings.rerank``."""
    import importlib.util

    return importlib.util.find_spec("reference_server.retrieval.rerank") is not None


CONFIGURATIONS: dict[str, NamedConfiguration] = {
    c.name: c
    for c in (
        NamedConfiguration("hybrid", "SQL + vector paths, weighted RRF (k=10, vector x2), boosts"),
        NamedConfiguration("vector", "vector path only", {"mode": "vector"}),
        NamedConfiguration("keyword", "SQL (FTS5 BM25) path only", {"mode": "keyword"}),
        NamedConfiguration(
            "no-boosts",
            "hybrid without the spec's phrase/title/recency boosts",
            {"fusion": {"boosts": False}},
        ),
        NamedConfiguration(
            "rrf-equal",
            "hybrid, RRF k=10 with both lists weighted equally",
            {"fusion": {"vector_weight": 1.0}},
        ),
        NamedConfiguration(
            "rrf-k60",
            "hybrid, classic RRF (k=60, equal weights)",
            {"fusion": {"rrf_k": 60.0, "vector_weight": 1.0}},
        ),
        NamedConfiguration(
            "openai-embeddings",
            "hybrid with OpenAI text-embedding-3-small query and index embeddings",
            {"embedding": "openai"},
            _openai_index,
        ),
        NamedConfiguration(
            "llm-rerank", "hybrid, then an OpenAI LLM reranks", {"rerank": "openai"}, _rerank
        ),
    )
}


def resolve(name: str, env: Mapping[str, str] | None = None) -> JsonObject:
    """The Settings overrides of a named configuration; raises ConfigurationUnavailable naming
    the known names, or the reason this one cannot run here."""
    env = os.environ if env is None else env
    config = CONFIGURATIONS.get(name)
    if config is None:
        raise ConfigurationUnavailable(
            f"unknown configuration {name!r}; known: {', '.join(CONFIGURATIONS)}"
        )
    reason = config.unavailable(env)
    if reason:
        raise ConfigurationUnavailable(f"configuration {name!r} is unavailable: {reason}")
    overrides: JsonObject = {
        k: dict(v) if isinstance(v, Mapping) else v for k, v in config.overrides.items()
    }
    if name == "openai-embeddings":
        overrides["index_dir"] = env.get("OCM_OPENAI_INDEX_DIR") or str(OPENAI_INDEX_DIR)
    return overrides
