"""Start and stop a reference server (or any server command) on a free loopback port.

The server runs in its own process group so stopping it also stops its uvicorn workers,
whether the caller finished, failed or was interrupted (the context manager's `finally`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from load.mcp_http import initialize_body, request_headers
from reference_server.config import PROJECT_ROOT

DEFAULT_COMMAND = (sys.executable, "-m", "reference_server")


class ServerUrl(str):
    """The `/mcp` URL of a started server, carrying its process id (for CPU accounting)."""

    pid: int = 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and all its children (the uvicorn workers)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 180.0) -> None:
    """Until an `initialize` is answered (each worker warms up before it serves)."""
    body = json.dumps(initialize_body()).encode()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode} before it was ready")
        request = urllib.request.Request(url, data=body, headers=request_headers(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                if response.status < 500:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code < 500:
                return
        except (OSError, TimeoutError):
            pass
        time.sleep(0.3)
    raise TimeoutError(f"server at {url} not ready after {timeout_s:.0f} s")


def stop(proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


@contextmanager
def running_server(
    *,
    workers: int = 1,
    env: dict[str, str] | None = None,
    command: Sequence[str] = DEFAULT_COMMAND,
    log_path: Path | None = None,
    cwd: Path | None = None,
    replace_env: bool = False,
) -> Iterator[ServerUrl]:
    """Yield the `/mcp` URL of a server started with `--workers` and extra `OCM_*` env.

    `cwd` and `replace_env` (env is the whole environment, not additions) start another
    checkout's server, e.g. the base of `make bench BASE=` (load/worktree.py)."""
    port = free_port()
    args = [
        *command,
        "--transport",
        "http",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]
    full_env = dict(env or {}) if replace_env else {**os.environ, **(env or {})}
    url = ServerUrl(f"http://127.0.0.1:{port}/mcp")
    with log_path.open("ab") if log_path else tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            args,
            env=full_env,
            cwd=cwd or PROJECT_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url.pid = proc.pid
        try:
            wait_ready(url, proc)
            yield url
        finally:
            stop(proc)
