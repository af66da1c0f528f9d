"""Child processes for rehearsals: free loopback ports, start-and-wait, stop for certain.

Every process started here is stopped by the context manager that started it, also on
failure or Ctrl-C, so tests and `make` targets never leave a server behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    """A port the OS reports free on 127.0.0.1 (bind port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(
    ready: Callable[[], bool], proc: subprocess.Popen[bytes], timeout_s: float, what: str, log: Path
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}; log:\n{_tail(log)}")
        if ready():
            return
        time.sleep(0.2)
    raise TimeoutError(f"{what} not ready after {timeout_s:.0f} s; log:\n{_tail(log)}")


def http_ok(url: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return httpx.get(url, timeout=1.0).status_code < 500
        except httpx.HTTPError:
            return False

    return check


def _tail(log: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


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


@contextlib.contextmanager
def running(
    cmd: Sequence[str],
    *,
    log: Path,
    ready: Callable[[], bool],
    what: str,
    env: dict[str, str] | None = None,
    timeout_s: float = 120.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start `cmd` in its own process group, wait for `ready`, stop it on exit."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            list(cmd), stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        wait_until(ready, proc, timeout_s, what, log)
        yield proc
    finally:
        stop(proc)


def server_command(port: int, workers: int = 1) -> list[str]:
    """The reference server over streamable HTTP on a loopback port (this interpreter)."""
    import sys

    return [
        sys.executable, "-m", "reference_server", "--transport", "http",
        "--port", str(port), "--workers", str(workers),
    ]  # fmt: skip


def chroma_binary() -> str | None:
    """The `chroma` command the chromadb package installs next to this interpreter."""
    import sys

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
