"""A tiny OpenAI-compatible server on 127.0.0.1 for testing LLM-judged metric wiring offline.

Answers ``/v1/chat/completions`` with canned JSON chosen by the response model named in the
request (ragas asks instructor for JSON matching a pydantic schema) and ``/v1/embeddings``
with fixed vectors. Every request body is kept in ``requests`` for assertions.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Response-model title -> canned content. Matching is on the JSON schema title instructor sends.
CANNED: dict[str, dict[str, Any]] = {
    "StatementGeneratorOutput": {"statements": ["A007 is billable.", "The fee is $37.95."]},
    "NLIStatementOutput": {
        "statements": [
            {"statement": "A007 is billable.", "reason": "stated", "verdict": 1},
            {"statement": "The fee is $37.95.", "reason": "not stated", "verdict": 0},
        ]
    },
    "ContextPrecisionOutput": {"reason": "useful", "verdict": 1},
    "ContextRecallOutput": {
        "classifications": [
            {"statement": "A007 is billable.", "reason": "in context", "attributed": 1},
            {"statement": "It needs a referral.", "reason": "absent", "attributed": 0},
        ]
    },
}


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _reply(self, payload: dict[str, Any], status: int = 200) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        if self.path.endswith("/embeddings"):
            inputs = body.get("input")
            count = len(inputs) if isinstance(inputs, list) else 1
            data = [
                {"object": "embedding", "index": i, "embedding": [0.6, 0.8, 0.0]}
                for i in range(count)
            ]
            self._reply(
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            )
            return
        if self.path.endswith("/chat/completions"):
            if self.server.fail_chat:
                self._reply({"error": {"message": "fake: judge unavailable"}}, 400)
                return
            text = json.dumps(body)
            # Longest title first: NLIStatementOutput's schema mentions other names too.
            title = next(
                (
                    t
                    for t in sorted(CANNED, key=len, reverse=True)
                    if f'"title": "{t}"' in text or f'\\"title\\": \\"{t}\\"' in text
                ),
                None,
            )
            if title is None:
                self._reply({"error": {"message": "fake: unknown response model"}}, 400)
                return
            content = json.dumps(CANNED[title])
            self._reply(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "fake"),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )
            return
        self._reply({"error": {"message": f"fake: no route {self.path}"}}, 404)


class FakeOpenAI(ThreadingHTTPServer):
    """Start with ``with FakeOpenAI() as api: api.base_url``; stops on exit. ``fail_chat``
    answers every chat completion with HTTP 400 (a judge that is down)."""

    daemon_threads = True

    def __init__(self, *, fail_chat: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fail_chat = fail_chat
        self.requests: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
