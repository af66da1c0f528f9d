"""A loopback HTTP listener the harness runs while it probes for outbound requests. A tool
given ``http://127.0.0.1:<port>/<random path>`` that makes a request to it has fetched a
URL its caller chose (server-side request forgery, SSRF); no other address is ever handed
out. It runs in its own thread, so a server inside this process (the in-process target) that
fetches synchronously still gets an answer, and every connection is bounded in time."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

HOST = "127.0.0.1"
SOCKET_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Hit:
    method: str
    path: str
    at: float


@dataclass
class CanaryListener:
    """``with CanaryListener() as listener: url = listener.url(token)``."""

    page_marker: str = field(default_factory=lambda: f"ocm-canary-page-{secrets.token_hex(8)}")
    hits: list[Hit] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> CanaryListener:
        listener = self

        class Handler(BaseHTTPRequestHandler):
            timeout = SOCKET_TIMEOUT_S

            def _answer(self) -> None:
                listener.record(Hit(self.command, self.path, time.monotonic()))
                body = f"<html><body>{listener.page_marker}</body></html>".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = do_PATCH = _answer

            def log_message(self, format: str, *args: object) -> None:
                """Quiet: the hits are the record."""

        self._server = ThreadingHTTPServer((HOST, 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="canary-listener", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=SOCKET_TIMEOUT_S)

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the canary listener is not running")
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    def url(self, token: str) -> str:
        return f"{self.origin}/{token}"

    def record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)

    def hits_for(self, token: str) -> list[Hit]:
        with self._lock:
            return [h for h in self.hits if token in h.path]

    def hits_since(self, start: float) -> list[Hit]:
        with self._lock:
            return [h for h in self.hits if h.at >= start]
