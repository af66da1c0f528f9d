"""The embedded store's per-process copies: a copy whose process died without its exit
handlers (SIGKILL, a hung shutdown) is removed by the next process that makes one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from reference_server.retrieval.chroma_client import sweep_orphans


def test_a_dead_process_copy_is_swept_and_live_or_unnamed_ones_stay(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for name in (f"ocm-chroma-{dead.pid}-abc", f"ocm-chroma-{os.getpid()}-def", "ocm-chroma-x"):
        (tmp_path / name / "chroma").mkdir(parents=True)
    removed = sweep_orphans(tmp_path)
    assert [p.name for p in removed] == [f"ocm-chroma-{dead.pid}-abc"]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([f"ocm-chroma-{os.getpid()}-def", "ocm-chroma-x"])


def test_a_server_stopped_by_sigterm_removes_its_copy(tmp_path: Path) -> None:
    """uvicorn re-raises SIGTERM after its graceful shutdown; the server must still run its
    exit handlers (bench-scale's servers left 4.8 GB each at 100x when they did not)."""
    from ocm_common.launcher import free_port, mcp_ready, running, server_command

    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    ready = mcp_ready(f"http://127.0.0.1:{port}/mcp")
    log = tmp_path / "server.log"
    with running(server_command(port), log=log, ready=ready, what="server", env=env) as proc:
        assert list(tmp_path.glob("ocm-chroma-*")), "the server works on a private copy"
    assert proc.returncode is not None
    assert not list(tmp_path.glob("ocm-chroma-*")), log.read_text()[-2000:]
