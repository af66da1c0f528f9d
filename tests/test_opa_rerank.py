"""OCM_RERANK=openai: the section-level opa.* tools rerank through a local fake OpenAI server.

The fake answers /v1/chat/completions on a free loopback port (never the network) and is
stopped by its fixture, also on failure. It scores the passages it is sent in reverse of the
order it received them, so a reranked answer is recognisably different from the fused one.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from reference_server.config import Settings
from reference_server.retrieval.rerank import budget_ms, parse_scores, reorder
from tests.conftest import run_fresh

QUERY = {"query": "documentation requirements for virtual care", "n_results": 20}


class FakeChat(ThreadingHTTPServer):
    daemon_threads = True  # a slow reply never holds up the fixture's shutdown
    mode = "reverse"  # reverse | slow | garbage | error
    requests: list[dict[str, Any]]


class _Handler(BaseHTTPRequestHandler):
    server: FakeChat

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        self.server.requests.append({"path": self.path, "body": body})
        if self.server.mode == "error":
            self._send(500, {"error": {"message": "fake: unavailable"}})
            return
        if self.server.mode == "slow":
            time.sleep(3.0)
        user = body["messages"][-1]["content"]
        ids = [json.loads(line)["id"] for line in user.splitlines() if line.startswith("{")]
        scores = [
            {"id": pid, "score": round(10 * (i + 1) / len(ids), 2)} for i, pid in enumerate(ids)
        ]
        content = "not json" if self.server.mode == "garbage" else json.dumps({"scores": scores})
        self._send(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)  # the client may have given up (timeout test)


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChat]:
    server = FakeChat(("127.0.0.1", 0), _Handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


async def _sections(
    tool_args: dict[str, Any], **overrides: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    result = await run_fresh(
        "opa.search_sections",
        tool_args,
        sql_timeout_ms=20000,
        vector_timeout_ms=20000,
        tool_timeout_ms=60000,
        **overrides,
    )
    assert not result.is_error, result.content[0].text
    return result.structured_content["sections"], result.meta or {}


# -- pure functions ---------------------------------------------------------------------------


class _Hit:
    def __init__(self, name: str, score: float) -> None:
        self.name, self.score = name, score


def test_reorder_hands_the_window_scores_back_in_the_new_order() -> None:
    hits = [_Hit("a", 3.0), _Hit("b", 2.0), _Hit("c", 1.0), _Hit("d", 0.5)]
    out = reorder(hits, ["a", "b", "c"], {"c": 9, "a": 4})  # b unscored: after the scored ones
    assert [h.name for h in out] == ["c", "a", "b", "d"]
    assert [h.score for h in out] == [3.0, 2.0, 1.0, 0.5]


def test_parse_scores_keeps_known_ids_and_clamps() -> None:
    reply = json.dumps(
        {
            "scores": [
                {"id": "x", "score": 14},
                {"id": "zz", "score": 5},
                {"id": "y", "score": "high"},
            ]
        }
    )
    assert parse_scores(reply, {"x", "y"}) == {"x": 10.0}
    with pytest.raises(ValueError):
        parse_scores(json.dumps({"scores": []}), {"x"})
    with pytest.raises(ValueError):
        parse_scores(json.dumps({"ranking": ["x"]}), {"x"})


def test_rerank_budget_fits_inside_the_whole_tool_timeout() -> None:
    s = Settings(tool_timeout_ms=1500, rerank_timeout_ms=1000)
    assert budget_ms(s, spent_ms=100) == 1000  # its own timeout when there is room
    assert budget_ms(s, spent_ms=600) == 750  # 1500 - 600 - 150 kept for the response
    assert budget_ms(s, spent_ms=1400) < 0  # no time left: not attempted


# -- through the tools -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_rerank_reorders_search_sections_by_the_model(fake_openai: FakeChat) -> None:
    fused, meta_off = await _sections(QUERY)
    assert "rerank" not in meta_off  # OCM_RERANK=off: nothing reads the key, no call made
    assert fake_openai.requests == []
    reranked, meta = await _sections(QUERY, rerank="openai", rerank_timeout_ms=20000)
    assert len(fused) > 5  # the whole fused pool fits in the rerank window (20)
    assert meta["rerank"]["applied"] is True and meta["rerank"]["candidates"] == len(fused)
    # The fake scores the passages it was sent in reverse: the fused pool, reversed.
    assert [s["section_id"] for s in reranked] == [s["section_id"] for s in fused][::-1]
    assert [s["score"] for s in reranked] == [s["score"] for s in fused]  # scores stay monotonic
    (request,) = fake_openai.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "gpt-4o-mini"
    assert QUERY["query"] in request["body"]["messages"][-1]["content"]


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["slow", "garbage", "error"])
async def test_rerank_failure_keeps_the_fused_order(fake_openai: FakeChat, mode: str) -> None:
    fused, _ = await _sections(QUERY)
    fake_openai.mode = mode
    # only the slow reply needs a budget it overruns; the others answer at once, so a busy
    # machine must not spend their budget before the request is even sent
    budget_ms = 1500 if mode == "slow" else 10000
    got, meta = await _sections(QUERY, rerank="openai", rerank_timeout_ms=budget_ms)
    assert [s["section_id"] for s in got] == [s["section_id"] for s in fused]
    assert meta["rerank"]["applied"] is False and meta["rerank"]["error"]
    # tried once, no retries; on a starved machine the cut can come before the slow request
    # reaches the fake, which is why that one may have sent nothing
    sent = len(fake_openai.requests)
    assert sent <= 1 if mode == "slow" else sent == 1


@pytest.mark.asyncio
async def test_rerank_without_api_key_is_not_attempted(
    fake_openai: FakeChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    fused, _ = await _sections(QUERY)
    got, meta = await _sections(QUERY, rerank="openai")
    assert [s["section_id"] for s in got] == [s["section_id"] for s in fused]
    assert meta["rerank"] == {
        "applied": False,
        "model": "gpt-4o-mini",
        "candidates": 0,
        "error": "OPENAI_API_KEY is not set; order left as fused",
    }
    assert fake_openai.requests == []


@pytest.mark.asyncio
async def test_policy_check_and_ipac_guidance_rerank_too(fake_openai: FakeChat) -> None:
    for tool, args in [
        ("opa.policy_check", {"query": "consent to treatment", "n_results": 5}),
        ("opa.ipac_guidance", {"topic": "reprocessing", "specific_item": "speculum"}),
    ]:
        result = await run_fresh(
            tool,
            args,
            rerank="openai",
            rerank_timeout_ms=20000,
            sql_timeout_ms=20000,
            vector_timeout_ms=20000,
            tool_timeout_ms=60000,
        )
        assert not result.is_error, result.content[0].text
        assert result.meta["rerank"]["applied"] is True, (tool, result.meta)
    assert len(fake_openai.requests) == 2


@pytest.mark.asyncio
async def test_slow_rerank_is_cut_to_the_tool_budget_and_the_tool_still_answers(
    fake_openai: FakeChat,
) -> None:
    fake_openai.mode = "slow"  # replies after 3 s
    result = await run_fresh(
        "opa.search_sections",
        QUERY,
        rerank="openai",
        rerank_timeout_ms=20000,  # larger than the tool's own budget
        sql_timeout_ms=1000,
        vector_timeout_ms=1000,
        tool_timeout_ms=2500,
        warm_up=True,
    )
    assert not result.is_error, result.content[0].text
    assert result.structured_content["sections"]
    assert result.meta["rerank"]["applied"] is False
    assert result.meta["rerank"]["elapsed_ms"] < 3000  # cut, not the 3 s reply waited out
