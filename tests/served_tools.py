"""The tools the reference server serves, read from its registry: tests of the harness count
what the server publishes, never a number written down."""

from __future__ import annotations

from reference_server.tools import ALL_TOOLS

SERVED: list[str] = sorted(tool.name for tool in ALL_TOOLS)
