"""The FastMCP server: the twelve tools over one shared runtime."""

from __future__ import annotations

import hmac
import logging
import os
from importlib import metadata
from typing import Any

import mcp.types as mt
from fastmcp import FastMCP
from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult
from mcp.server.lowlevel.server import NotificationOptions
from mcp.shared.exceptions import MCPError
from mcp.types import ServerCapabilities

from reference_server.config import Settings
from reference_server.runtime import Runtime
from reference_server.tools import ALL_TOOLS
from reference_server.tools.base import McpTool

INSTRUCTIONS = (
    "Ontario clinical reference tools. Dr. OPA (opa.*) answers practice-guidance questions from CPSO, "
    "Ontario Health, CEP, PHO and Ministry of Health documents; Dr. OFF (coverage.answer, schedule.get, "
    "adp.get, odb.get, source.passages) answers OHIP billing, ADP device funding and ODB drug coverage "
    "questions. Every answer carries provenance, confidence, citations and conflicts."
)
DISTRIBUTION = "ontario-clinical-mcp"
# JSON-RPC "Invalid params": the MCP spec's error for a tools/call naming an unknown tool.
INVALID_PARAMS = -32602


def project_version() -> str:
    """The installed project's version (serverInfo.version), from the package metadata."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # running from a source tree without installing
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text())["project"]["version"])


class UnknownToolIsProtocolError(Middleware):
    """A call naming a tool the server does not have is a JSON-RPC error (-32602), not a tool
    result: the client asked for something that does not exist, no tool ran.

    The tool set is fixed when the server is built, so names are checked against a set: asking
    FastMCP (`get_tool`, through its providers and visibility rules) cost ~8% of a worker's CPU
    under load, on top of the same look-up FastMCP makes to run the call."""

    def __init__(self, names: frozenset[str]):
        self._names = names

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        if name not in self._names:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name!r}")
        return await call_next(context)


class ConstantTimeTokenVerifier(TokenVerifier):
    """One static bearer token, compared in constant time (hmac.compare_digest), so response
    timing does not reveal how much of a guessed token was right."""

    def __init__(self, token: str):
        super().__init__()
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id="ocm-client", scopes=[])


def announce_only_tools(server: FastMCP) -> None:
    """Announce what is served and nothing else: tools, whose list never changes while the
    server runs (a stateless server could not send the notification anyway); no prompts,
    resources or log messages are offered, so none are announced."""
    low = server._mcp_server
    low.notification_options = NotificationOptions(
        prompts_changed=False, resources_changed=False, tools_changed=False
    )
    announced = low.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> ServerCapabilities:
        return announced(*args, **kwargs).model_copy(
            update={"prompts": None, "resources": None, "logging": None}
        )

    low.get_capabilities = get_capabilities  # type: ignore[method-assign]


class ReferenceServer(FastMCP[Any]):
    """The FastMCP server and the runtime its tools share (warm-up, cache counts)."""

    runtime: Runtime


def build_server(
    settings: Settings | None = None, bearer_token: str | None = None
) -> ReferenceServer:
    """A server with all tools registered; `bearer_token` protects the HTTP transport."""
    settings = settings or Settings.from_env()
    auth = ConstantTimeTokenVerifier(bearer_token) if bearer_token else None
    server = ReferenceServer(
        "ontario-clinical-reference",
        instructions=INSTRUCTIONS,
        version=project_version(),
        mask_error_details=True,
        auth=auth,
        middleware=[UnknownToolIsProtocolError(frozenset(tool.name for tool in ALL_TOOLS))],
    )
    runtime = Runtime(settings)
    for tool in ALL_TOOLS:
        server.add_tool(McpTool.register(tool, runtime))
    announce_only_tools(server)
    runtime.warm_up_calls = [tool.warm_up_call for tool in ALL_TOOLS]
    server.runtime = runtime
    logging.getLogger(__name__).debug("registered %d tools", len(ALL_TOOLS))
    return server


def bearer_token_from_env() -> str | None:
    return os.environ.get("OCM_BEARER_TOKEN") or None
