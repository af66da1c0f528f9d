"""Close a keep-alive connection after N requests, so clients' connections re-spread over workers.

uvicorn's workers share one listening socket, and a connection stays with the worker that
accepted it. Clients that open their connections at once and keep them (locust's 20 users, a
proxy's keep-alive pool) can land 15 on one worker and 5 on the other (measured under the
`paced` profile), and that worker then carries three quarters of the load. The usual cure is
nginx's `keepalive_requests` or Envoy's `max_requests_per_connection`: after N requests the
server answers with `Connection: close`, the client opens a new connection, and the worker
that is idle in `accept` is the likelier to take it. uvicorn has no such setting, so this
ASGI middleware adds it (`OCM_HTTP_MAX_REQUESTS_PER_CONNECTION`; 0 keeps connections open).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

REMEMBERED = 4096  # connections counted at once; the oldest is forgotten beyond this


class MaxRequestsPerConnection:
    """Counts requests per client connection (its address and port) in this worker; the N-th
    response carries `Connection: close`, which uvicorn honours after sending it."""

    def __init__(self, app: App, max_requests: int) -> None:
        self.app = app
        self.max_requests = max_requests
        self._counts: OrderedDict[tuple[Any, ...], int] = OrderedDict()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] != "http" or self.max_requests <= 0 or not client:
            await self.app(scope, receive, send)
            return
        key = tuple(client)
        count = self._counts.pop(key, 0) + 1
        if count < self.max_requests:
            self._counts[key] = count
            if len(self._counts) > REMEMBERED:
                self._counts.popitem(last=False)
            await self.app(scope, receive, send)
            return

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"connection", b"close")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_closing)
