"""Start and stop child processes on free loopback ports: the reference server, Chroma, nginx.

One launcher for tests, load and scale. Every process runs in its own process group, so
stopping it also stops its children (uvicorn's workers), and is stopped by the context manager
that started it, also on failure or Ctrl-C, so no run leaves a server behind.
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

from ocm_common.mcp_messages import initialize_body, request_headers

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SERVER_MODULE = (sys.executable, "-m", "reference_server")


def free_port() -> int:
    """A port the OS reports free on 127.0.0.1 (bind port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers_below_500(request: urllib.request.Request, timeout: float) -> bool:
    """The server answered, with anything but a server error (a 401 or 404 is an answer)."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status) < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except (OSError, TimeoutError):
        return False


def http_ok(url: str) -> Callable[[], bool]:
    """Ready when a GET of `url` answers below 500 (Chroma's heartbeat, nginx)."""

    def check() -> bool:
        return _answers_below_500(urllib.request.Request(url), 1.0)

    return check


def mcp_ready(url: str) -> Callable[[], bool]:
    """Ready when an MCP `initialize` is answered below 500 (each worker warms up before it
    serves; a 401 from a server that wants a token is an answer too)."""
    body = json.dumps(initialize_body()).encode()

    def check() -> bool:
        request = urllib.request.Request(url, data=body, headers=request_headers(), method="POST")
        return _answers_below_500(request, 5.0)

    return check


def stop(proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """SIGTERM the process group, then SIGKILL if it does not exit in time."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def _tail(log: IO[bytes], lines: int = 20) -> str:
    try:
        log.flush()
        log.seek(0)
        return "\n".join(log.read().decode(errors="replace").splitlines()[-lines:])
    except (OSError, ValueError):
        return "(no log)"


@contextlib.contextmanager
def running(
    cmd: Sequence[str],
    *,
    ready: Callable[[], bool],
    what: str,
    log: Path | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = 120.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start `cmd` in its own process group, wait for `ready`, stop it on exit. Output goes to
    `log` (appended) or a temporary file; its tail is in the error when the start fails."""
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a+b") if log is not None else tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            list(cmd),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + timeout_s
            while not ready():
                if proc.poll() is not None:
                    raise RuntimeError(f"{what} exited with {proc.returncode}; log:\n{_tail(out)}")
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"{what} not ready after {timeout_s:.0f} s; log:\n{_tail(out)}"
                    )
                time.sleep(0.2)
            yield proc
        finally:
            stop(proc)


class ServerUrl(str):
    """The `/mcp` URL of a started server, carrying its process id (for CPU accounting)."""

    pid: int = 0


def server_command(
    port: int, workers: int = 1, command: Sequence[str] = SERVER_MODULE
) -> list[str]:
    """A server (the reference server by default) over streamable HTTP on a loopback port."""
    return [
        *command, "--transport", "http", "--host", "127.0.0.1",
        "--port", str(port), "--workers", str(workers),
    ]  # fmt: skip


@contextlib.contextmanager
def running_server(
    *,
    workers: int = 1,
    env: dict[str, str] | None = None,
    command: Sequence[str] = SERVER_MODULE,
    log_path: Path | None = None,
    cwd: Path | None = None,
    replace_env: bool = False,
    timeout_s: float = 180.0,
) -> Iterator[ServerUrl]:
    """Yield the `/mcp` URL of a server started with `--workers` and extra `OCM_*` env, once
    it answers `initialize`.

    `cwd` and `replace_env` (env is the whole environment, not additions) start another
    checkout's server, e.g. the base of `make bench BASE=` (load/worktree.py)."""
    port = free_port()
    url = ServerUrl(f"http://127.0.0.1:{port}/mcp")
    full_env = dict(env or {}) if replace_env else {**os.environ, **(env or {})}
    with running(
        server_command(port, workers, command),
        ready=mcp_ready(url),
        what=f"server {' '.join(command[1:])} on port {port}",
        log=log_path,
        env=full_env,
        cwd=cwd or PROJECT_ROOT,
        timeout_s=timeout_s,
    ) as proc:
        url.pid = proc.pid
        yield url


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
