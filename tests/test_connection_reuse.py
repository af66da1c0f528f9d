"""The N-th response on a keep-alive connection says `Connection: close`, so clients reconnect
and their connections re-spread over the workers (connection_reuse.py)."""

from __future__ import annotations

from typing import Any

import pytest

from reference_server.config import Settings
from reference_server.connection_reuse import MaxRequestsPerConnection


async def _ok(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"x", b"1")]})
    await send({"type": "http.response.body", "body": b"{}"})


async def _closes(app: MaxRequestsPerConnection, client: tuple[str, int]) -> bool:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "client": client}, _receive, send)
    return (b"connection", b"close") in sent[0]["headers"]


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b""}


async def test_every_nth_request_of_a_connection_closes_it() -> None:
    app = MaxRequestsPerConnection(_ok, max_requests=3)
    a, b = ("127.0.0.1", 50001), ("127.0.0.1", 50002)
    got = [await _closes(app, a) for _ in range(7)]
    assert got == [False, False, True, False, False, True, False]
    assert [await _closes(app, b) for _ in range(3)] == [False, False, True]  # its own count


async def test_zero_keeps_connections_open() -> None:
    app = MaxRequestsPerConnection(_ok, max_requests=0)
    assert not any([await _closes(app, ("127.0.0.1", 50003)) for _ in range(50)])


def test_the_setting_is_validated_and_named() -> None:
    assert Settings.from_env({}).http_max_requests_per_connection == 25
    assert (
        Settings.from_env(
            {"OCM_HTTP_MAX_REQUESTS_PER_CONNECTION": "0"}
        ).http_max_requests_per_connection
        == 0
    )
    with pytest.raises(ValueError, match="http_max_requests_per_connection"):
        Settings.from_env({"OCM_HTTP_MAX_REQUESTS_PER_CONNECTION": "-1"})
