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
