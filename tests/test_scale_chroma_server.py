"""Chroma's client/server mode: a real `chroma run` on a free loopback port, loaded with the
built collections, answers every tool exactly as the embedded store does."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP

from evals.run.id_lookup import resolve_args
from evals.run.scenario import Scenario, load_scenarios
from reference_server.config import Settings
from reference_server.index.chroma_load import load_collections
from reference_server.server import build_server
from scale.procs import chroma_binary, chroma_server
from tests.conftest import make_settings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chroma_binary() is None, reason="the `chroma` command is not installed"),
    pytest.mark.timeout(600),
]
GOLDEN = Path(__file__).resolve().parent.parent / "golden"
PER_TOOL = 2


@pytest.fixture(scope="module")
def chroma_url(settings: Settings) -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="ocm-chroma-test-") as scratch:
        data = Path(scratch)
        with chroma_server(data / "data", log=data / "chroma.log") as url:
            counts = load_collections(settings.index_dir, url, quiet=True)
            assert all(counts.values()), counts
            yield url


def _calls() -> list[Scenario]:
    """Up to PER_TOOL golden scenarios per tool that expect an answer (not a tool error)."""
    taken: dict[str, int] = {}
    calls = []
    for scenario in load_scenarios(GOLDEN):
        if scenario.expects_error or taken.get(scenario.tool, 0) >= PER_TOOL:
            continue
        taken[scenario.tool] = taken.get(scenario.tool, 0) + 1
        calls.append(scenario)
    return calls


async def _answers(server: FastMCP) -> dict[str, Any]:
    """Each scenario's answer; an id the scenario asks the server for first is that server's."""
    out = {}
    async with Client(server) as client:

        async def structured(tool: str, args: dict[str, Any]) -> Any:
            result = await client.call_tool(tool, args, raise_on_error=False)
            return None if result.is_error else result.structured_content

        for scenario in _calls():
            args = await resolve_args(structured, scenario.lookups, dict(scenario.args))
            assert args is not None, f"{scenario.id}: the lookup found no id"
            result = await client.call_tool(scenario.tool, args, raise_on_error=False)
            out[scenario.id] = (result.is_error, result.structured_content)
    return out


async def test_chroma_server_answers_like_the_embedded_store(
    server: FastMCP, chroma_url: str
) -> None:
    remote_settings = make_settings(
        sql_timeout_ms=5000, vector_timeout_ms=5000, tool_timeout_ms=10000, chroma_url=chroma_url
    )
    remote = build_server(remote_settings)
    remote.runtime.warm_up()
    embedded, served = await _answers(server), await _answers(remote)
    assert len(embedded) >= 12  # every tool has at least one golden call
    for scenario_id, answer in embedded.items():
        assert not answer[0], f"{scenario_id} failed on the embedded store"
        differences = list(_differences(answer[1], served[scenario_id][1]))
        assert not differences, (
            f"{scenario_id}: the Chroma server answered differently: {differences}"
        )


def _differences(a: Any, b: Any, path: str = "$") -> Iterator[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            # How long a step took, and when the look-up ran (program_lookup's last_updated is the
            # time of the search, per spec 000), are not part of the answer.
            if not key.endswith("_ms") and key != "last_updated":
                yield from _differences(a.get(key), b.get(key), f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: {a!r} != {b!r}"


def test_a_bad_chroma_url_is_a_clear_configuration_error() -> None:
    with pytest.raises(ValueError, match="chroma_url"):
        Settings(chroma_url="127.0.0.1:8000")
