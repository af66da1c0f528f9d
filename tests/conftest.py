"""Shared fixtures: one warmed in-process server over the built index, and call helpers.

The index is built by `make index` (which `make test` runs first); OCM_INDEX_DIR points
elsewhere if needed. Freshness is pinned to a fixed 'today' so staleness tiers are stable.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import date
from functools import cache
from typing import Any

import pytest
from fastmcp import Client, FastMCP

from ocm_common.launcher import running_server
from reference_server import catalog
from reference_server.config import Settings
from reference_server.server import build_server

OFF_COLLECTIONS = tuple(catalog.OFF_COLLECTIONS.values())

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

AS_OF = date(2026, 11, 1)
# The shared server answers the functional tests, which assert answers: generous path timeouts
# keep a busy machine from turning a slow call into a degraded answer. Timeout and fault
# behaviour is tested with explicit settings (tests/test_dual_path.py).
GENEROUS = {"sql_timeout_ms": 5000, "vector_timeout_ms": 5000, "tool_timeout_ms": 10000}
# Settings that a tool call reads from its runtime's settings (`rt.settings`: dual_path's faults,
# mode and timeouts, the whole-tool deadline, fusion, reranking, which confidence is stated); the
# stores never read them.
# A server that differs from the shared one in these alone can answer from the shared stores.
PER_CALL_SETTINGS = frozenset(
    {
        "faults",
        "mode",
        "fusion",
        "sql_timeout_ms",
        "vector_timeout_ms",
        "tool_timeout_ms",
        "rerank",
        "rerank_model",
        "rerank_timeout_ms",
        "rerank_candidates",
        "confidence_model",
    }
)
# The runtime's opened stores (Runtime's cached properties) and what they built once per process
# (their `derived` values, the vector payloads and flat indexes, the query embedding cache).
STORES = ("embedder", "vectors", "opa_sql", "ohip_sql")


def make_settings(**overrides: Any) -> Settings:
    return Settings.from_env(as_of_date=AS_OF, **overrides)


@pytest.fixture(scope="session")
def settings() -> Settings:
    s = make_settings(**GENEROUS)
    if not s.opa_db.exists():
        pytest.exit(f"index not built at {s.index_dir}: run `make index`", returncode=2)
    return s


@cache
def shared_server() -> FastMCP:
    """The one warmed in-process server of this test process (the `server` fixture).

    Loading the model, copying and reading the Chroma store and building the per-process values
    cost 2-5 s per server on a 2-core machine; `run_fresh` servers reuse what this one opened."""
    srv = build_server(make_settings(**GENEROUS))
    srv.runtime.warm_up()
    return srv


@pytest.fixture(scope="session")
def server(settings: Settings) -> FastMCP:
    return shared_server()


@pytest.fixture(scope="session")
def off_collections(server: FastMCP) -> None:
    """The shared server with the Dr. OFF collections loaded too (for modules timing OFF tools)."""
    load_collections(server, OFF_COLLECTIONS)


@pytest.fixture
async def client(server: FastMCP) -> AsyncIterator[Client[Any]]:
    async with Client(server) as c:
        yield c


def load_collections(server: FastMCP, names: Iterable[str]) -> None:
    """Load these collections' payloads now (one tiny search each), so a timed call is not cut
    by the vector timeout on a server that was not warmed up."""
    for name in names:
        server.runtime.vectors.search(name, "warm up", n_results=1)


async def run_fresh(
    tool: str,
    args: dict[str, Any],
    *,
    warm_up: bool = False,
    collections: Iterable[str] = (),
    **overrides: Any,
) -> Any:
    """Call `tool` on a fresh server built with Settings overrides (e.g. faults); the raw result.

    When every override is one a call reads at run time (PER_CALL_SETTINGS), the fresh server
    is built over the shared server's opened stores, as the server's own warm-up calls run over
    a copy of its runtime with other settings (`Runtime._run_warm_up_calls`): it is then warm
    already, like a server after `warm_up`. Any other override (another index, another model,
    a Chroma server) gets stores of its own, warmed only when `warm_up` is set."""
    server = build_server(make_settings(**overrides))
    if set(overrides) <= PER_CALL_SETTINGS:
        share_stores(server)
    elif warm_up:
        server.runtime.warm_up()
    load_collections(server, collections)
    async with Client(server) as client:
        return await client.call_tool(tool, args, raise_on_error=False)


def share_stores(server: FastMCP) -> None:
    """Give `server`'s runtime the shared server's opened (and warmed) stores."""
    shared = shared_server().runtime
    runtime = server.runtime
    for name in STORES:
        runtime.__dict__[name] = shared.__dict__[name]  # KeyError: not a cached store any more


async def call(client: Client[Any], tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool that must succeed; return its structuredContent."""
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    assert result.structured_content is not None
    return result.structured_content


async def call_error(client: Client[Any], tool: str, args: dict[str, Any]) -> str:
    """Call a tool that must fail with a tool error; return the message."""
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.is_error, f"expected a tool error, got {result.structured_content}"
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text and 'File "' not in text
    return text


# The one HTTP server of the suite (tests/test_transports.py, tests/test_http_contract.py).
HTTP_TOKEN = "test-token-not-a-secret"
HTTP_ALLOWED_ORIGIN = "https://ehr.example.org"


@pytest.fixture(scope="session")
def http_server(settings: Settings) -> Iterator[str]:
    """The reference server over streamable HTTP: one worker, a bearer token and one allowed
    Origin; yields its /mcp URL. Each start loads the model and warms every tool in every worker
    (12 s for one worker, 55 s for the default four on a busy 2-core machine), so the HTTP tests
    share one; several workers are started by the load run (tests/load/test_load_runs.py)."""
    env = {
        "OCM_INDEX_DIR": str(settings.index_dir),
        "OCM_BEARER_TOKEN": HTTP_TOKEN,
        "OCM_ALLOWED_ORIGINS": HTTP_ALLOWED_ORIGIN,
    }
    with running_server(workers=1, env=env, timeout_s=120) as url:
        yield url


# Session fixtures that start a real server: the tests using one share a worker under xdist.
SHARED_SERVER_FIXTURES = frozenset({"http_server"})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`make test` runs `--dist loadgroup`), keep together the tests that
    share something costly to build: those using a server-starting session fixture on one
    worker, and a module whose tests share a module- or class-scoped fixture on one worker, so
    each is built once. Every other test goes to whichever worker is free."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        used = set(info.names_closure)
        if used & SHARED_SERVER_FIXTURES:
            item.add_marker(pytest.mark.xdist_group(sorted(used & SHARED_SERVER_FIXTURES)[0]))
            continue
        scopes = {d.scope for defs in info.name2fixturedefs.values() for d in defs}
        if scopes & {"module", "class", "package"}:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
