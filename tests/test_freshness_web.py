"""check_web against a local HTTP server on 127.0.0.1 (never the real sites)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fastmcp import Client

from reference_server.server import build_server
from tests.conftest import make_settings

PAGES = {
    "/en/Physicians/Policies-Guidance/Policies/Virtual-Care": "<p><strong>Reviewed and Updated:</strong> March 2026</p>",
    "/en/Physicians/Policies-Guidance/Policies/Consent-to-Treatment": "<p>Last Updated: January 2001</p>",
}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.endswith("Closing-a-Medical-Practice"):
            time.sleep(3)  # slower than the configured web timeout
        body = PAGES.get(self.path)
        self.send_response(200 if body else 404)
        self.end_headers()
        self.wfile.write((body or "missing").encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def local_site() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


async def test_check_web_flags_newer_page_and_survives_timeouts(local_site: str) -> None:
    settings = make_settings(
        web_enabled=True,
        web_timeout_s=0.5,
        web_url_rewrite={"https://www.cpso.on.ca": local_site},
        tool_timeout_ms=5000,
    )
    server = build_server(settings)
    docs = ["cpso-virtual-care", "cpso-consent-to-treatment", "cpso-closing-a-medical-practice"]
    async with Client(server) as client:
        result = await client.call_tool(
            "opa.freshness_probe", {"document_ids": docs, "check_web": True}
        )
    updates = result.structured_content["potential_updates"]
    assert [u["document_id"] for u in updates] == ["cpso-virtual-care"]
    assert updates[0]["detected_date"] == "2026-03-01"
    assert updates[0]["url"].startswith(
        "https://www.cpso.on.ca/"
    )  # reports the real URL, not the rewrite
    assert any(
        "Re-ingest cpso-virtual-care" in r for r in result.structured_content["recommendations"]
    )
