"""A stdio MCP server as a child process the harness can see: every ``stdio:`` target's transport.

The MCP SDK's stdio client keeps the server process to itself, and the server's stderr goes to
the console; a launch that fails then reads only "Connection closed". It also decodes stdout
strictly as one text stream: the first byte that is not UTF-8 ends its reader for good, and
every later request waits for its timeout, the session open and deaf. This transport (a
fastmcp ``ClientTransport``, so any ``fastmcp.Client`` and every command use it alike):

- keeps the process: its pid, its exit status (:meth:`StdioProcess.exit_text`) and its stderr
  in a file, whose last lines explain a launch that failed (:class:`LaunchFailed`: the command,
  the exit status, the last 20 lines of stderr) or a death mid-run;
- reads stdout as bytes, one line at a time. A line that is not UTF-8, holds a lone surrogate
  (``\\ud800`` unpaired) or is not JSON-RPC is kept as an :class:`Unreadable` record; when the
  line names the id of a request, that request ends at once with a harness-made error
  (:data:`UNREADABLE_REPLY`, never sent by a server) instead of waiting out its timeout; the
  parse error also reaches the client's message handler (as the SDK's would); the lines after
  it are read as usual;
- stops the server as the SDK does (stdin closed, a 2 s grace, then SIGTERM and SIGKILL to its
  process group), every wait bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
import mcp_types as types
from fastmcp.client.transports import ClientTransport
from fastmcp.client.transports.base import TransportOptions
from mcp.shared.message import SessionMessage

from evals.run.target_contract import HARNESS_MARK, UNREADABLE_REPLY

HARNESS_ENCODE = -32018  # a request the harness could not encode (a lone surrogate in it)
STDERR_LINES = 20
EXIT_GRACE_S = 2.0  # after stdin closes, before SIGTERM; then as long again before SIGKILL
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]", re.I)


class LaunchFailed(RuntimeError):
    """The server did not start, or ended before it answered initialize: the message names the
    command, the exit status and the last lines of its stderr."""


@dataclass(frozen=True)
class Unreadable:
    """One stdout line that is not UTF-8 JSON-RPC: why, its first bytes, the request id it
    named (None when none could be read) and when it came (time.monotonic())."""

    reason: str
    excerpt: str
    request_id: int | str | None
    at: float


def read_line(line: bytes) -> tuple[Any, str | None]:
    """(the JSON-RPC message, None) for a readable stdout line, else (None, why it is not one
    UTF-8 JSON-RPC message)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 (byte 0x{line[exc.start]:02x} at offset {exc.start})"
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(json.loads(text), ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            return None, f"a lone surrogate (\\u{ord(exc.object[exc.start]):04x}) in a JSON string"
        except ValueError:
            pass  # not JSON: said below
    try:
        return types.jsonrpc_message_adapter.validate_json(text, by_name=False), None
    except ValueError as exc:
        first = str(exc).splitlines()
        return None, f"not JSON-RPC: {first[1].strip() if len(first) > 1 else first[0]}"[:200]


def request_id(line: bytes) -> int | str | None:
    """The id an unreadable reply names, when one can be read from it."""
    try:
        data = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        data = None
    if isinstance(data, dict) and ("result" in data or "error" in data):
        found = data.get("id")
        return found if isinstance(found, int | str) and not isinstance(found, bool) else None
    match = _ID.search(line)
    if match is None:
        return None
    raw = match.group(1).decode("utf-8", "replace")
    return raw.strip('"') if raw.startswith('"') else int(raw)


def exit_text(returncode: int | None) -> str:
    """'exit status 3', 'killed by signal 9 (SIGKILL)' or 'still running'."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "?"
        return f"killed by signal {-returncode} ({name})"
    return f"exit status {returncode}"


class StdioProcess(ClientTransport):
    """A fastmcp transport that runs ``command args`` and speaks newline-delimited JSON-RPC
    with it (see the module docstring). One process per session; the last one's state stays
    readable after it ended (pid, exit status, stderr tail, unreadable lines)."""

    def __init__(
        self,
        command: str,
        args: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        log_file: Path | IO[str] | None = None,
        command_line: str | None = None,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = env
        self.cwd = cwd
        self.log_file = log_file
        self.command_line = command_line or " ".join([command, *args])
        self.pid: int | None = None
        self.unreadable: list[Unreadable] = []
        self._process: Any = None
        self._stderr_path: Path | None = None
        self._stderr_start = 0
        self._returncode: int | None = None

    def __repr__(self) -> str:
        return f"<StdioProcess {self.command_line!r}>"

    # ------------------------------------------------------------------ what can be seen

    @property
    def returncode(self) -> int | None:
        """The exit status once the process ended (negative: killed by that signal)."""
        if self._process is not None:
            code = self._process.returncode
            if code is not None:
                self._returncode = code
        return self._returncode

    @property
    def exited(self) -> bool:
        return self.returncode is not None

    async def wait_exit(self, timeout_s: float) -> int | None:
        """The exit status, waiting up to ``timeout_s`` for it (None: still running)."""
        deadline = time.monotonic() + timeout_s
        while self.returncode is None and self._process is not None:
            if time.monotonic() >= deadline:
                break
            await anyio.sleep(0.02)
        return self.returncode

    def stderr_tail(self, lines: int = STDERR_LINES) -> list[str]:
        """The last lines this process wrote to stderr (this process's only, when the log file
        is shared), or [] when its stderr is not in a file the harness can read."""
        if self._stderr_path is None:
            return []
        try:
            with self._stderr_path.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                start = max(self._stderr_start, size - 64_000)
                handle.seek(start)
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return []
        return [line.rstrip() for line in text.splitlines() if line.strip()][-lines:]

    def exit_text(self) -> str:
        return exit_text(self.returncode)

    def ended_text(self) -> str:
        """'exited with status 3', 'was killed by signal 9 (SIGKILL)' or 'is still running'."""
        code = self.returncode
        if code is None:
            return "is still running"
        return f"was {exit_text(code)}" if code < 0 else f"exited with status {code}"

    def explain(self, what: str) -> str:
        """``what`` happened, with the command, the pid, the exit status and the stderr tail."""
        tail = self.stderr_tail()
        stderr = (
            f"last {len(tail)} lines of its stderr:\n" + "\n".join(f"  | {t}" for t in tail)
            if tail
            else "its stderr was empty"
            if self._stderr_path is not None
            else "its stderr is not captured"
        )
        pid = f" (pid {self.pid})" if self.pid else ""
        return f"{what}: command {self.command_line!r}{pid}, {self.exit_text()}; {stderr}"

    def unreadable_since(self, since: float) -> list[Unreadable]:
        return [u for u in self.unreadable if u.at >= since]

    # ------------------------------------------------------------------ the session

    @contextlib.asynccontextmanager
    async def connect_session(
        self, *, transport_options: TransportOptions | None = None, **session_kwargs: Any
    ) -> AsyncIterator[Any]:
        session_class = (transport_options or TransportOptions()).session_class
        async with (
            self._running() as (read_stream, write_stream),
            session_class(read_stream, write_stream, **session_kwargs) as session,
        ):
            try:
                yield session
            except Exception as exc:
                if getattr(session, "protocol_version", None) is not None:
                    raise
                # Thrown in while the client initializes: the server never came up.
                await self.wait_exit(1.0)
                what = f"the server did not complete initialize ({exc or type(exc).__name__})"
                raise LaunchFailed(self.explain(what)) from exc

    @contextlib.asynccontextmanager
    async def _running(self) -> AsyncIterator[tuple[Any, Any]]:
        stderr, temporary = self._open_stderr()
        try:
            try:
                process = await anyio.open_process(
                    [self.command, *self.args],
                    env=self.env,
                    cwd=self.cwd,
                    stderr=stderr,
                    start_new_session=True,
                )
            except OSError as exc:
                raise LaunchFailed(
                    f"cannot start the server: command {self.command_line!r}: {exc}"
                ) from exc
            self._process, self.pid, self._returncode = process, process.pid, None
            async with self._streams(process) as streams:
                yield streams
        finally:
            with contextlib.suppress(OSError):
                stderr.close()
            if temporary and self._stderr_path is not None:
                # the tail is read while the session is open; a launch failure read it already
                with contextlib.suppress(OSError):
                    self._stderr_path.unlink()
                self._stderr_path = None

    def _open_stderr(self) -> tuple[IO[Any], bool]:
        """The file the process writes its stderr to, and whether the harness made it."""
        if isinstance(self.log_file, str | Path):
            path = Path(self.log_file)
            handle: IO[Any] = path.open("ab")
            self._stderr_path, self._stderr_start = path, handle.tell()
            return handle, False
        if self.log_file is not None:
            name = getattr(self.log_file, "name", None)
            self._stderr_path = Path(name) if isinstance(name, str) else None
            with contextlib.suppress(OSError, ValueError):
                self._stderr_start = os.path.getsize(name) if isinstance(name, str) else 0
            return self.log_file, False
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed when the session ends
            prefix="ocm-stdio-stderr-", suffix=".log", delete=False
        )
        self._stderr_path, self._stderr_start = Path(handle.name), 0
        return handle, True

    @contextlib.asynccontextmanager
    async def _streams(self, process: Any) -> AsyncIterator[tuple[Any, Any]]:
        to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

        async def read_stdout() -> None:
            buffer = b""
            async with to_session:
                with contextlib.suppress(
                    anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError
                ):
                    async for chunk in process.stdout:
                        *lines, buffer = (buffer + chunk).split(b"\n")
                        for line in lines:
                            for item in self._items(line.rstrip(b"\r")):
                                await to_session.send(item)

        async def write_stdin() -> None:
            try:
                async with from_session:
                    async for message in from_session:
                        try:
                            data = message.message.model_dump_json(
                                by_alias=True, exclude_unset=True
                            )
                            raw = (data + "\n").encode("utf-8")
                        except (ValueError, UnicodeError) as exc:  # a lone surrogate in arguments
                            await to_session.send(_harness_error(message, exc))
                            continue
                        await process.stdin.send(raw)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await to_session.aclose()  # the session sees the end instead of a hang

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_stdout)
            tasks.start_soon(write_stdin)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    await self._stop(process)
                    for stream in (read_stream, write_stream, to_session, from_session):
                        await stream.aclose()
                tasks.cancel_scope.cancel()

    def _items(self, line: bytes) -> list[SessionMessage | Exception]:
        """One stdout line for the session: its message; or, for a line that is not UTF-8
        JSON-RPC, the parse error (a client's message handler sees it) and, when the line names
        a request, the harness's error that ends that request now."""
        if not line.strip():
            return []
        message, reason = read_line(line)
        if reason is None:
            return [SessionMessage(message)]
        found = request_id(line)
        self.unreadable.append(Unreadable(reason, repr(line[:120]), found, time.monotonic()))
        named = f" (reply to request {found!r})" if found is not None else ""
        items: list[SessionMessage | Exception] = [
            ValueError(f"unreadable line from the server{named}: {reason}")
        ]
        if found is not None:
            error = types.ErrorData(
                code=UNREADABLE_REPLY,
                message=f"the reply is not valid UTF-8 JSON-RPC: {reason}",
                data={"harness": HARNESS_MARK, "excerpt": repr(line[:120])},
            )
            items.append(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=found, error=error)))
        return items

    async def _stop(self, process: Any) -> None:
        """stdin closed, a grace, then the process group terminated (each wait bounded)."""
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        if await self.wait_exit(EXIT_GRACE_S) is None:
            from mcp.os.posix.utilities import terminate_posix_process_tree

            with contextlib.suppress(OSError):
                await terminate_posix_process_tree(process, EXIT_GRACE_S)
            await self.wait_exit(EXIT_GRACE_S)
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()
        # the asyncio transport closed now, not when collected after the loop is gone
        with anyio.move_on_after(EXIT_GRACE_S), contextlib.suppress(Exception):
            await process.aclose()


def _harness_error(message: SessionMessage, exc: BaseException) -> SessionMessage | Exception:
    """A request the harness could not encode ends at once with an error (no id: dropped)."""
    found = getattr(message.message, "id", None)
    if found is None:
        return ValueError(f"could not encode a message: {exc}")
    error = types.ErrorData(
        code=HARNESS_ENCODE, message=f"the harness could not encode the request: {exc}"
    )
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=found, error=error))
