"""Locust user that speaks MCP over streamable HTTP; each tool call is reported under its name.

Run through `ocm load run ...` (or `make load`), which passes the profile and the output
directory; at exit the run's per-tool records are checked against `load/slo.yaml`, the table of
misses is printed and the exit code is non-zero if anything missed.

Every request a user sends ends within `--call-timeout` seconds of wall-clock time (a
`gevent.Timeout`; the HTTP client's own network timeout restarts with every chunk, and an
event-stream reply sends keep-alive comments): a call without a complete reply by then is
reported as a failed call under its tool's name, and the user's connections are dropped so
the abandoned reply cannot be read as the next call's.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from pathlib import Path
from typing import Any, NamedTuple

import gevent
import gevent.lock
from locust import FastHttpUser, LoadTestShape, constant, constant_throughput, events, task
from locust.env import Environment
from locust.runners import WorkerRunner

from load.run_end import cut_short_is_a_failure
from load.safety import require_loopback
from load.slo import Miss, evaluate, evaluate_saturation, load_slo, miss_table
from load.stage_stats import StageSamples
from load.taskmix import TaskMix
from ocm_common.bench_summary import (
    CallFailure,
    LocustResult,
    SaturationStep,
    StageFigure,
    ToolFigures,
)
from ocm_common.durations import duration_arg
from ocm_common.latency_records import RECORDS_FILE, LatencyRecord, write_records
from ocm_common.mcp_http import (
    CALL_DEADLINE_S,
    McpCallError,
    McpSession,
    OutputSchemas,
    RpcNotification,
    RpcRequest,
    call_body,
    check_tool_result,
    initialize_body,
    initialized_notification,
    rpc,
)

log = logging.getLogger("load")


@events.init_command_line_parser.add_listener
def _options(parser: Any) -> None:
    parser.add_argument(
        "--load-profile", default="latency", help="load profile name (load/profiles.yaml)"
    )
    parser.add_argument("--mcp-path", default="/mcp")
    parser.add_argument("--out-dir", default="", help="where latency.jsonl and slo.json go")
    parser.add_argument("--rate", type=float, default=0.0, help="total calls/s (paced profile)")
    parser.add_argument("--validate-fraction", type=float, default=0.1)
    parser.add_argument("--slo-file", default="")
    parser.add_argument("--steps", default="", help="saturation: comma-separated user counts")
    parser.add_argument(
        "--step-time", type=duration_arg, default=8.0, help="saturation: time per step (8s)"
    )
    parser.add_argument("--mix-seed", type=int, default=None)
    parser.add_argument(
        "--mix-share",
        default="0/1",
        help="this process's share of an examples mix, i/N (N load processes never repeat a call)",
    )
    parser.add_argument(
        "--mix", default="golden", help="task mix: golden, examples:<file> or schema"
    )
    parser.add_argument(
        "--allow-writes",
        action="store_true",
        default=False,
        help="schema mix: also call tools that may change state",
    )
    parser.add_argument(
        "--warmup", type=duration_arg, default=0.0, help="time run before statistics are reset"
    )
    parser.add_argument(
        "--call-timeout",
        type=duration_arg,
        default=CALL_DEADLINE_S,
        help="seconds a call may take before it counts as failed",
    )


def _opt(env: Environment, name: str, default: Any = None) -> Any:
    return getattr(env.parsed_options, name, default) if env.parsed_options else default


class CacheCounts:
    """The server's query-embedding cache and batch counts (hits, misses, model batches, texts
    in them), per server process, first and last seen."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[int, ...]] = {}
        self.last: dict[str, tuple[int, ...]] = {}

    def see(self, cache: dict[str, Any] | None) -> None:
        if not cache or "process" not in cache:
            return
        counts = tuple(
            int(cache.get(k, 0))
            for k in ("embed_hits", "embed_misses", "embed_batches", "embed_batched_texts")
        )
        self.first.setdefault(cache["process"], counts)
        self.last[cache["process"]] = counts

    def merge(self, data: dict[str, dict[str, list[int]]]) -> None:
        """A worker's `dump` (its tuples arrive as lists)."""
        for proc, counts in data.get("first", {}).items():
            old = self.first.get(proc)
            self.first[proc] = tuple(counts) if old is None else min(old, tuple(counts))  # type: ignore[assignment]
        for proc, counts in data.get("last", {}).items():
            old = self.last.get(proc)
            self.last[proc] = tuple(counts) if old is None else max(old, tuple(counts))  # type: ignore[assignment]

    def dump(self) -> dict[str, dict[str, tuple[int, ...]]]:
        return {"first": dict(self.first), "last": dict(self.last)}

    def hit_rate(self) -> float | None:
        hits = sum(self.last[p][0] - self.first[p][0] for p in self.last)
        misses = sum(self.last[p][1] - self.first[p][1] for p in self.last)
        return round(hits / (hits + misses), 4) if hits + misses else None

    def mean_batch(self) -> float | None:
        """Texts per embedding-model call during the run (None: no batched model calls seen)."""
        batches = sum(self.last[p][2] - self.first[p][2] for p in self.last)
        texts = sum(self.last[p][3] - self.first[p][3] for p in self.last)
        return round(texts / batches, 2) if batches else None


CACHE = CacheCounts()
STAGES = StageSamples()  # the server's stage timers and the MCP + HTTP layer, per tool
_MIX: TaskMix | None = None


def _mix(env: Environment) -> TaskMix:
    global _MIX
    if _MIX is None:
        _MIX = TaskMix.from_source(
            _opt(env, "mix", "golden") or "golden",
            listing=McpUser.listing,
            seed=_opt(env, "mix_seed"),
            allow_writes=bool(_opt(env, "allow_writes", False)),
        )
        index, count = (int(n) for n in str(_opt(env, "mix_share", "0/1") or "0/1").split("/"))
        _MIX = _MIX.share(index, count)
    return _MIX


def _per_user_rate(env: Environment) -> float:
    """Paced profile: each user's calls/s, the total rate split over the users (0: unpaced)."""
    rate = float(_opt(env, "rate", 0.0) or 0.0)
    return rate / max(1, int(_opt(env, "num_users", 1) or 1)) if rate > 0 else 0.0


def _wait_time(user: Any) -> float:
    """Paced profile: constant-throughput pacing; otherwise the next call at once."""
    rate = _per_user_rate(user.environment)
    return constant_throughput(rate)(user) if rate > 0 else constant(0)(user)


_SCHEMAS_LOCK = gevent.lock.Semaphore()


class CallDeadline(Exception):
    """A request without a complete reply within the call deadline (an Exception, not
    gevent.Timeout, so the HTTP client does not take it for a retriable socket timeout)."""


class McpUser(FastHttpUser):
    """One MCP client: `initialize` (keeping `Mcp-Session-Id` if the server issues one), then calls."""

    wait_time = _wait_time
    connection_timeout = 10.0
    network_timeout = 30.0
    schemas: OutputSchemas | None = None
    listing: dict[str, Any] | None = None  # the server's tools/list result

    def on_start(self) -> None:
        require_loopback(self.host or "")
        self.path = _opt(self.environment, "mcp_path", "/mcp")
        self.mcp = McpSession(
            token=os.environ.get("EVALS_BEARER_TOKEN") or os.environ.get("OCM_BEARER_TOKEN")
        )
        self.validate_fraction = float(_opt(self.environment, "validate_fraction", 0.1))
        body = initialize_body()
        reply = self._post(body, "initialize")
        if reply is None:
            return
        self._notify(initialized_notification(), "notifications/initialized")
        self._list_tools()
        self._desynchronise()

    def _list_tools(self) -> bool:
        """The server's tools/list, once per process (not once per user spawned together)."""
        with _SCHEMAS_LOCK:
            if McpUser.listing is None:
                listing = self._post(rpc("tools/list"), "tools/list")
                if listing is not None:
                    McpUser.listing = listing
                    McpUser.schemas = OutputSchemas.from_tools_list(listing)
        return McpUser.listing is not None

    def _desynchronise(self) -> None:
        """Paced users start at a random point of their cycle, as independent clients would.

        Constant-throughput users spawned together stay in phase: 20 users at 100 calls/s in
        total, spawned 50 ms apart with a 200 ms cycle, arrive five at a time every 50 ms, and
        those bursts, not the rate, set the p95 (a cheap opa.get_section: p50 11 ms, p95 100 ms)."""
        rate = _per_user_rate(self.environment)
        if rate > 0:
            gevent.sleep(random.uniform(0, 1 / rate))

    def _send(self, body: RpcRequest | RpcNotification, name: str) -> Any:
        """POST `body` (catch_response); None after reporting a call that hit its deadline
        (a tool call's, or for the session's setup requests at least the default one: a slow
        start is not a hung tool)."""
        deadline = float(_opt(self.environment, "call_timeout", CALL_DEADLINE_S))
        if name in NON_TOOL_NAMES:
            deadline = max(deadline, CALL_DEADLINE_S)
        started = time.perf_counter()
        try:
            with gevent.Timeout(deadline, CallDeadline(f"no complete reply within {deadline:g} s")):
                return self.client.post(
                    self.path,
                    data=json.dumps(body),
                    headers=self.mcp.headers(),
                    name=name,
                    catch_response=True,
                )
        except CallDeadline as exc:
            self.client.client.close()  # the abandoned reply must not be read as the next one
            self._failed(name, started, exc)
            return None
        except gevent.GreenletExit:  # the run stopped this user while its call was in flight
            waited = time.perf_counter() - started
            if cut_short_is_a_failure(waited, deadline):
                self._failed(
                    name, started, CallDeadline(f"no reply before the run ended ({waited:.1f} s)")
                )
            raise

    def _failed(self, name: str, started: float, exc: Exception) -> None:
        self.environment.events.request.fire(
            request_type="POST",
            name=name,
            response_time=(time.perf_counter() - started) * 1000,
            response_length=0,
            exception=exc,
            context={},
        )

    def _notify(self, body: RpcNotification, name: str) -> None:
        """POST a notification: any reply below HTTP 400 takes it."""
        sent = self._send(body, name)
        if sent is None:
            return
        with sent as response:
            if (response.status_code or 0) >= 400:
                response.failure(f"HTTP {response.status_code}")
            else:
                response.success()

    def _post(self, body: RpcRequest, name: str) -> dict[str, Any] | None:
        """The result of one request, or None after reporting why there is none."""
        sent = self._send(body, name)
        if sent is None:
            return None
        with sent as response:
            try:
                headers = response.headers or {}
                result = self.mcp.read(
                    body,
                    response.status_code or 0,
                    headers.get("content-type", ""),
                    response.text or "",
                    headers.get("mcp-session-id"),
                )
                response.success()
                return result
            except McpCallError as exc:
                response.failure(str(exc))
                return None

    @task
    def call_tool(self) -> None:
        if not self._list_tools():  # every task mix needs it (schemas; the schema mix's tools)
            return
        mix = _mix(self.environment)
        call = mix.pick()
        body = call_body(call.tool, call.arguments)
        started = time.perf_counter()
        sent = self._send(body, call.tool)
        if sent is None:
            return
        with sent as response:
            try:
                result = self.mcp.read(
                    body,
                    response.status_code or 0,
                    response.headers.get("content-type", "") if response.headers else "",
                    response.text or "",
                )
                check_tool_result(
                    call.tool,
                    result,
                    self.schemas,
                    validate=random.random() < self.validate_fraction,
                    tool_errors_ok=mix.tool_errors_ok,
                )
                client_ms = (time.perf_counter() - started) * 1000
                meta = result.get("_meta") or {}
                CACHE.see(meta.get("cache"))
                STAGES.see(call.tool, client_ms, meta.get("timings_ms"))
                response.success()
            except McpCallError as exc:
                response.failure(f"{exc} [{call.scenario}]")


class StatsSnapshot(NamedTuple):
    """Locust's statistics at one moment: per tool (response-time histogram, calls, failures)."""

    t: float
    tools: dict[str, tuple[dict[int, int], int, int]]


class SaturationShape(LoadTestShape):
    """Steps the user count up; stops after a step where a tool's p95 passes the step bar or an
    error appears. Each step's calls/s and per-tool p95 come from locust's stats histogram."""

    abstract = True  # only used when the runner selects it (saturation profile)

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[int] = [2, 4, 8, 12, 16, 24, 32]
        self.step_time = 8.0
        self.step_p95_ms = 250.0
        self.index = 0
        self.results: list[SaturationStep] = []
        self._snapshot: StatsSnapshot | None = None
        self._step_started = 0.0
        self._stopped = False

    def _take_snapshot(self) -> StatsSnapshot:
        stats = self.runner.stats  # type: ignore[union-attr]
        return StatsSnapshot(
            time.monotonic(),
            {
                name: (dict(entry.response_times), entry.num_requests, entry.num_failures)
                for (name, _method), entry in stats.entries.items()
                if name not in NON_TOOL_NAMES
            },
        )

    def _close_step(self) -> bool:
        """Record the step that just ended; True if it was sustained."""
        now = self._take_snapshot()
        before = self._snapshot or StatsSnapshot(now.t, {})
        elapsed = max(now.t - before.t, 1e-6)
        calls = errors = 0
        worst_p95 = 0.0
        worst_tool = ""
        for name, (hist, n, fails) in now.tools.items():
            old_hist, old_n, old_fails = before.tools.get(name, ({}, 0, 0))
            delta = {
                k: v - old_hist.get(k, 0) for k, v in hist.items() if v - old_hist.get(k, 0) > 0
            }
            calls += n - old_n
            errors += fails - old_fails
            record = LatencyRecord.from_histogram("saturation", name, delta)
            if record.n and record.p95_ms > worst_p95:
                worst_p95, worst_tool = record.p95_ms, name
        rps = round(calls / elapsed, 2)
        sustained = errors == 0 and worst_p95 <= self.step_p95_ms and calls > 0
        self.results.append(
            SaturationStep(
                users=self.steps[self.index],
                rps=rps,
                errors=errors,
                worst_p95_ms=worst_p95,
                worst_tool=worst_tool,
                sustained=sustained,
            )
        )
        log.warning(
            "saturation step %d users: %.1f calls/s, worst p95 %.0f ms (%s), %d errors%s",
            self.steps[self.index],
            rps,
            worst_p95,
            worst_tool,
            errors,
            "" if sustained else "  <- not sustained, stopping",
        )
        self._snapshot = now
        return sustained

    def tick(self) -> tuple[int, float] | None:
        if self._stopped:
            return None
        run_time = self.get_run_time()
        if self._snapshot is None:
            self._snapshot = self._take_snapshot()
            self._step_started = run_time
        if run_time - self._step_started >= self.step_time:
            sustained = self._close_step()
            self.index += 1
            self._step_started = run_time
            if not sustained or self.index >= len(self.steps):
                self._stopped = True
                return None
        users = self.steps[self.index]
        return users, float(users)


NON_TOOL_NAMES = {"initialize", "notifications/initialized", "tools/list", "Aggregated"}


def saturation_rps(results: list[SaturationStep]) -> float:
    """The highest calls/s over the sustained steps (0 if none was)."""
    return max((r.rps for r in results if r.sustained), default=0.0)


@events.init.add_listener
def _on_init(environment: Environment, **_: Any) -> None:
    # The event loop caches its clock and has not run since gevent started; locust's run-time
    # timer is armed next, so a stale clock (seconds of imports on a busy machine) would end
    # the run that much early.
    gevent.get_hub().loop.update_now()
    shape = environment.shape_class
    if isinstance(shape, SaturationShape):
        if _opt(environment, "steps"):
            shape.steps = [int(s) for s in str(_opt(environment, "steps")).split(",") if s]
        shape.step_time = float(_opt(environment, "step_time", 8.0))
        slo = load_slo(
            Path(_opt(environment, "slo_file")) if _opt(environment, "slo_file") else None
        )
        shape.step_p95_ms = slo.saturation.step_p95_ms


@events.test_start.add_listener
def _start_warmup(environment: Environment, **_: Any) -> None:
    """After the warm-up, forget what was measured so far (master or local runner only: workers
    report to the master, whose statistics are the run's)."""
    warmup = float(_opt(environment, "warmup", 0.0) or 0.0)
    if warmup <= 0 or isinstance(environment.runner, WorkerRunner):
        return

    def reset() -> None:
        gevent.sleep(warmup)
        if environment.runner is not None:
            environment.runner.stats.reset_all()  # the cache hit rate keeps the warm-up
            STAGES.clear()  # (a worker's samples of the last ~3 s before this may still arrive)

    gevent.spawn(reset)


@events.report_to_master.add_listener
def _send_cache(client_id: str, data: dict[str, Any], **_: Any) -> None:
    data["ocm_cache"] = CACHE.dump()
    data["ocm_stages"] = STAGES.drain()


@events.worker_report.add_listener
def _receive_cache(client_id: str, data: dict[str, Any], **_: Any) -> None:
    CACHE.merge(data.get("ocm_cache") or {})
    STAGES.merge(data.get("ocm_stages") or {})


@events.quitting.add_listener
def _verdict(environment: Environment, **_: Any) -> None:
    """Per-tool records -> latency.jsonl; SLO misses -> table and exit code (master/local only)."""
    if isinstance(environment.runner, WorkerRunner) or environment.runner is None:
        return
    profile = str(_opt(environment, "load_profile", "latency"))
    stats = environment.runner.stats
    duration = max((stats.last_request_timestamp or 0) - (stats.start_time or 0), 1e-6)
    records = [
        LatencyRecord.from_histogram(
            profile,
            name,
            entry.response_times,
            duration_s=duration,
            errors=entry.num_failures,
        )
        for (name, _method), entry in sorted(stats.entries.items())
        if name not in NON_TOOL_NAMES
    ]
    setup_failures = sum(
        e.num_failures for (n, _m), e in stats.entries.items() if n in NON_TOOL_NAMES
    )
    slo = load_slo(Path(_opt(environment, "slo_file")) if _opt(environment, "slo_file") else None)
    misses = evaluate(records, slo)
    shape = environment.shape_class
    steps = shape.results if isinstance(shape, SaturationShape) else []
    summary = LocustResult(
        profile=profile,
        calls=sum(r.n for r in records),
        errors=sum(r.errors for r in records) + setup_failures,
        rps=round(sum(r.n for r in records) / duration, 2),
        cache_hit_rate=CACHE.hit_rate(),
        embed_mean_batch=CACHE.mean_batch(),
        stages={
            tool: {stage: StageFigure.model_validate(f) for stage, f in stages.items()}
            for tool, stages in STAGES.summary().items()
        },
        tools={
            r.tool: ToolFigures.model_validate(r.model_dump(exclude={"profile", "tool", "source"}))
            for r in records
        },
        failures=[
            CallFailure(name=e.name, error=str(e.error), count=e.occurrences)
            for e in list(stats.errors.values())[:20]
        ],
    )
    if isinstance(shape, SaturationShape):
        summary.steps = steps
        summary.saturation_rps = saturation_rps(steps)
        misses += evaluate_saturation(summary.saturation_rps, slo)
    if setup_failures:
        misses.append(
            Miss(profile, "initialize/tools/list", "errors", setup_failures, slo.max_errors)
        )
    if not records:
        misses.append(Miss(profile, "all tools", "min_calls", 0, 1))
    summary.misses = [m.text for m in misses]
    summary.slo_pass = not misses
    out = _opt(environment, "out_dir")
    if out:
        out_dir = Path(out)
        write_records(out_dir / RECORDS_FILE, records)
        written = json.dumps(summary.model_dump(mode="json"), indent=2)
        (out_dir / f"{profile}.json").write_text(written, encoding="utf-8")
    print(
        f"\n{profile}: {summary.calls} calls, {summary.rps} calls/s, "
        f"{summary.errors} errors, server cache hit rate {summary.cache_hit_rate}, "
        f"mean embedding batch {summary.embed_mean_batch}"
    )
    if isinstance(shape, SaturationShape):
        print(f"saturation: highest sustained {summary.saturation_rps} calls/s")
    print(miss_table(misses, title=f"SLO ({profile})"))
    environment.process_exit_code = 1 if misses else 0
