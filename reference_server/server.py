"""The FastMCP server: the twelve tools over one shared runtime."""

from __future__ import annotations

import logging
import os

from fastmcp import FastMCP

from reference_server.config import Settings
from reference_server.runtime import Runtime
from reference_server.tools import ALL_SPECS
from reference_server.tools.base import McpTool

INSTRUCTIONS = (
    "Ontario clinical reference tools. Dr. OPA (opa.*) answers practice-guidance questions from CPSO, "
    "Ontario Health, CEP, PHO and Ministry of Health documents; Dr. OFF (coverage.answer, schedule.get, "
    "adp.get, odb.get, source.passages) answers OHIP billing, ADP device funding and ODB drug coverage "
    "questions. Every answer carries provenance, confidence, citations and conflicts."
)


def build_server(settings: Settings | None = None, bearer_token: str | None = None) -> FastMCP:
    """A server with all tools registered; `bearer_token` protects the HTTP transport."""
    settings = settings or Settings.from_env()
    auth = None
    if bearer_token:
        from fastmcp.server.auth.providers.jwt import StaticTokenVerifier

        auth = StaticTokenVerifier(tokens={bearer_token: {"client_id": "ocm-client", "scopes": []}})
    server = FastMCP(
        "ontario-clinical-reference", instructions=INSTRUCTIONS, mask_error_details=True, auth=auth
    )
    runtime = Runtime(settings)
    for spec in ALL_SPECS:
        server.add_tool(McpTool.create(spec, runtime))
    server.runtime = runtime  # type: ignore[attr-defined]
    logging.getLogger(__name__).debug("registered %d tools", len(ALL_SPECS))
    return server


def bearer_token_from_env() -> str | None:
    return os.environ.get("OCM_BEARER_TOKEN") or None
