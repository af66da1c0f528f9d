"""The fake backend with every tool under a team's own name (``team_<golden name>``), for
``evals run --tool-map``. Over stdio: ``python tests/evals/renamed_server.py``."""

from __future__ import annotations

from fake_server import build_server
from fastmcp import FastMCP

PREFIX = "team_"
server = FastMCP("renamed-fake")
server.mount(build_server(), namespace=PREFIX.rstrip("_"))

if __name__ == "__main__":
    server.run(show_banner=False)
