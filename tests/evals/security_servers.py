"""The deliberately flawed fixture servers (tests/fixtures/servers) as targets: stdio specs,
and HTTP ones started on a free loopback port for the duration of a test module."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

SERVERS = Path(__file__).parents[1] / "fixtures" / "servers"


def stdio(name: str, *args: str) -> str:
    return f"stdio:python {SERVERS / name}.py" + "".join(f" {a}" for a in args)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def http_server(
    name: str, timeout_s: float = 60.0, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Serve fixture ``name`` over streamable HTTP on loopback; yield its /mcp URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / f"{name}.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"fixture server {name} exited with {proc.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(url, timeout=1.0)
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"fixture server {name} did not start within {timeout_s} s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
