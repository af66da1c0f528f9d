"""One MCP session for the security run: every call bounded in time, classified (answered,
tool error, protocol error, timeout, crash), recorded for the checks that read results
afterwards, and, for stdio targets, the server process's memory watched while it runs. The
sandbox's trees are listed before and after each call (:mod:`.files`), so every call records
the files it created, changed or deleted; a message from the server the client could not parse
(a lone surrogate, bytes that are not JSON) during a call is recorded on that call.

The session's client runs on the target's own transport (:meth:`McpTarget.transport`: a stdio
server gets the canary in its environment and its stderr in a log file; the working directory
stays the harness's, as for ``evals run``), with the declared root. After a timeout or a crash it reconnects (a new process
for stdio), so one stuck call does not end the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

import psutil

from evals.run.mcp_target import McpTarget
from evals.run.security.files import FileChange, FileChangeJson, changes, snapshot
from evals.run.security.sandbox import Sandbox
from evals.run.security.surface import ToolSurface
from evals.run.targets import TargetError, make_target
from ocm_common.client_session import record_results_as_they_come
from ocm_common.json_types import Arguments, JsonObject, JsonValue

Status = Literal["ok", "tool-error", "protocol-error", "timeout", "crash"]
SAMPLE_EVERY_S = 0.05
ROOT_PLACEHOLDER = "{root}"
SURROGATE = re.compile("[\ud800-\udfff]")


class CallSummary(TypedDict):
    """A call as the security report's call log records it (:meth:`Call.summary`)."""

    tool: str
    purpose: str
    status: Status
    reach: str
    reach_reason: str
    latency_ms: float
    args: JsonObject  # as sent to the tool, huge values abbreviated
    answer: str
    answer_bytes: int
    peak_rss_growth_mb: float | None
    files: list[FileChangeJson]
    unparsed: list[str]


@dataclass
class Call:
    """One ``tools/call`` as the checks see it; ``text`` joins the text content, or holds the
    protocol error's message; ``peak_rss_growth_mb`` is measured for stdio targets only;
    ``reach`` is set by :func:`.probe.probe_call` (reached, refused by the server naming the
    probed argument, retried, unreached) with the reason; ``files`` what the call did to the
    sandbox's trees; ``unparsed`` the client's parse errors for messages during the call."""

    tool: str
    args: Arguments
    purpose: str
    status: Status
    text: str = ""
    structured: JsonValue = None
    latency_ms: float = 0.0
    peak_rss_growth_mb: float | None = None
    detail: str = ""
    reach: str = ""
    reach_reason: str = ""
    files: list[FileChange] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)

    def summary(self) -> CallSummary:
        """The call as the report records it: arguments abbreviated, the answer's start
        (lone surrogates written as escapes, so the record stays UTF-8)."""
        from evals.run.security.reproduce import shorten_args

        return {
            "tool": self.tool,
            "purpose": self.purpose,
            "status": self.status,
            "reach": self.reach,
            "reach_reason": self.reach_reason,
            "latency_ms": round(self.latency_ms, 1),
            "args": shorten_args(self.args),
            "answer": printable(self.output()[:200]),
            "answer_bytes": self.size_bytes(),
            "peak_rss_growth_mb": self.peak_rss_growth_mb,
            "files": [c.to_json() for c in self.files],
            "unparsed": [printable(u[:200]) for u in self.unparsed],
        }

    def size_bytes(self) -> int:
        """The answer's size in UTF-8 bytes (text content and structured content)."""
        return len(self.output().encode("utf-8", "surrogatepass"))

    def output(self) -> str:
        """Everything the server sent back, as one string to search."""
        parts = [self.text]
        if self.structured is not None:
            parts.append(json.dumps(self.structured, ensure_ascii=False, default=str))
        return "\n".join(p for p in parts if p)


def printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` (they cannot be written as UTF-8)."""
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


@dataclass
class Session:
    spec: str
    sandbox: Sandbox
    call_timeout_s: float = 10.0
    connect_timeout_s: float = 60.0
    calls: list[Call] = field(default_factory=list)
    capabilities: JsonObject = field(default_factory=dict)  # the server's, as initialize sent them
    _client: Any = None
    _server: Any = None  # the in-process server, built once
    _target: McpTarget | None = None
    _pids: set[int] = field(default_factory=set)
    _env_backup: str | None = None
    _unparsed: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.spec.split(":", 1)[0]

    # ------------------------------------------------------------------ connection

    def _transport(self) -> Any:
        """The target's own transport (McpTarget.transport): a stdio server gets the sandbox's
        environment (the canary, its own HOME with the marker) and its stderr logged, and
        "{root}" in its command line becomes the root the harness declares (a folder it made);
        the in-process server is built and warmed once."""
        if self._target is None:
            self._target = make_target(self.spec.replace(ROOT_PLACEHOLDER, str(self.sandbox.root)))
        if self.kind == "inprocess":
            if self._server is None:
                self._server = self._target.transport()
            return self._server
        return self._target.transport(
            extra_env=self.sandbox.server_env(),
            log_file=self.sandbox.base / "server-stderr.log",
        )

    def _plant_canary(self) -> None:
        """The in-process server reads this process's environment: the canary goes there for
        the session (and comes out in :meth:`close`)."""
        if self.kind == "inprocess" and self._env_backup is None:
            self._env_backup = os.environ.get(self.sandbox.canary_env, "")
            os.environ[self.sandbox.canary_env] = self.sandbox.canary_value

    async def open(self) -> None:
        from fastmcp import Client

        self._plant_canary()
        before = _child_pids()
        try:
            client = Client(
                self._transport(),
                timeout=self.call_timeout_s,
                roots=[self.sandbox.root_uri],
                message_handler=self._on_message,
            )
            await asyncio.wait_for(client.__aenter__(), self.connect_timeout_s)
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"cannot connect to target {self.spec!r}: {exc}") from exc
        record_results_as_they_come(client)
        self._client = client
        self._pids = _child_pids() - before if self.kind == "stdio" else set()
        init = getattr(client, "initialize_result", None)
        caps = getattr(init, "capabilities", None)
        if caps is not None:
            self.capabilities = caps.model_dump(by_alias=True, exclude_none=True, mode="json")

    async def _on_message(self, message: Any) -> None:
        """A line the client could not read arrives as an exception: kept for the call in
        progress (the stdio transport also ends the request it answered, when it names one)."""
        if isinstance(message, Exception):
            self._unparsed.append(str(message))

    async def _disconnect(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            # A dead or stuck server may not close cleanly: its process is ended below.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.__aexit__(None, None, None), 5.0)
        for pid in self._pids:
            _end(pid)
        self._pids = set()

    async def close(self) -> None:
        await self._disconnect()
        if self._env_backup is not None:
            if self._env_backup:
                os.environ[self.sandbox.canary_env] = self._env_backup
            else:
                os.environ.pop(self.sandbox.canary_env, None)
            self._env_backup = None

    async def reconnect(self) -> None:
        await self._disconnect()
        await self.open()

    # ------------------------------------------------------------------ requests

    async def list_tools(self) -> list[ToolSurface]:
        try:
            tools = await asyncio.wait_for(self._client.list_tools(), self.call_timeout_s)
        except Exception as exc:
            raise TargetError(f"tools/list failed on {self.spec!r}: {exc}") from exc
        return [
            ToolSurface.from_wire(t.model_dump(by_alias=True, exclude_none=True, mode="json"))
            for t in tools
        ]

    def alive(self) -> bool:
        """False once a stdio server's process has exited."""
        for pid in self._pids:
            try:
                proc = psutil.Process(pid)
                if proc.status() == psutil.STATUS_ZOMBIE:
                    return False
            except psutil.NoSuchProcess:
                return False
        return True

    async def _ping(self) -> bool:
        try:
            return bool(await asyncio.wait_for(self._client.ping(), 3.0))
        except Exception:
            return False

    def _rss_mb(self) -> float | None:
        total, seen = 0, False
        for pid in self._pids:
            try:
                proc = psutil.Process(pid)
                total += proc.memory_info().rss
                for child in proc.children(recursive=True):
                    total += child.memory_info().rss
                seen = True
            except psutil.Error:
                continue
        return total / 2**20 if seen else None

    async def _watch(self, base: float, peak: list[float]) -> None:
        while True:
            now = self._rss_mb()
            if now is not None:
                peak[0] = max(peak[0], now - base)
            await asyncio.sleep(SAMPLE_EVERY_S)

    async def call(
        self, tool: str, args: Arguments, purpose: str, *, timeout_s: float | None = None
    ) -> Call:
        limit = timeout_s or self.call_timeout_s
        base = self._rss_mb()
        peak = [0.0]
        watcher = asyncio.create_task(self._watch(base, peak)) if base is not None else None
        before = snapshot(self.sandbox.trees)
        self._unparsed.clear()
        started = time.perf_counter()
        record = Call(tool, args, purpose, "ok")
        try:
            result = await asyncio.wait_for(
                self._client.call_tool_mcp(tool, dict(args), timeout=limit), limit + 1.0
            )
            record.status = "tool-error" if result.is_error else "ok"
            record.text = "\n".join(
                b.text for b in result.content if getattr(b, "type", "") == "text"
            )
            record.structured = result.structured_content
        except TimeoutError:
            record.status, record.detail = "timeout", f"no answer within {limit:g} s"
        except Exception as exc:
            record.text = str(exc)
            record.detail = type(exc).__name__
            record.status = "protocol-error"  # or a crash: decided below by the server's health
        record.latency_ms = (time.perf_counter() - started) * 1000.0
        record.unparsed = list(self._unparsed)
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            record.peak_rss_growth_mb = round(peak[0], 1)
        if record.status == "protocol-error" and _is_timeout_error(record.text):
            record.status, record.detail = "timeout", f"no answer within {limit:g} s"
        elif record.status in ("protocol-error", "crash"):
            # An error answer from a live server is a refusal; from a dead one, a crash.
            healthy = self.alive() and await self._ping()
            record.status = "protocol-error" if healthy else "crash"
        elif not self.alive():
            record.status = "crash"
        record.files = changes(before, snapshot(self.sandbox.trees))
        self.calls.append(record)
        if record.status in ("timeout", "crash"):
            await self.reconnect()
        return record


def _is_timeout_error(text: str) -> bool:
    return "timed out" in text.lower() or "timeout" in text.lower()


def _child_pids() -> set[int]:
    try:
        return {p.pid for p in psutil.Process().children(recursive=False)}
    except psutil.Error:
        return set()


def _end(pid: int) -> None:
    """End a server process this session started (and what it started), by id."""
    try:
        proc = psutil.Process(pid)
        procs = [*proc.children(recursive=True), proc]
    except psutil.Error:
        return
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(procs, timeout=3)
