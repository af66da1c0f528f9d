"""A Chroma server (`chroma run`) on a free loopback port, through the one launcher
(ocm_common.launcher), which stops it on exit, also on failure or Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from ocm_common.launcher import free_port, http_ok, running


def chroma_binary() -> str | None:
    """The `chroma` command the chromadb package installs next to this interpreter."""
    here = Path(sys.executable).parent / "chroma"
    return str(here) if here.exists() else shutil.which("chroma")


@contextlib.contextmanager
def chroma_server(data_dir: Path, log: Path, port: int | None = None) -> Iterator[str]:
    """`chroma run` on a free loopback port over `data_dir`; yields its URL."""
    binary = chroma_binary()
    if binary is None:
        raise FileNotFoundError("the `chroma` command (chromadb package) is not installed")
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [binary, "run", "--path", str(data_dir), "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    with running(
        cmd, log=log, ready=http_ok(f"{url}/api/v2/heartbeat"), what="chroma run", env=env
    ):
        yield url
