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
import os
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import gevent
import gevent.lock
from locust import FastHttpUser, constant, constant_throughput, events, task
from locust.env import Environment
from locust.runners import WorkerRunner

from load.cache_counts import CacheCounts
from load.locust_verdict import run_verdict
from load.run_end import cut_short_is_a_failure
from load.safety import require_loopback
from load.saturation_shape import NON_TOOL_NAMES, SaturationShape
from load.slo import load_slo
from load.stage_stats import StageSamples
from load.taskmix import TaskMix
from ocm_common.durations import duration_arg
from ocm_common.json_types import JsonObject
from ocm_common.mcp_http import (
    CALL_DEADLINE_S,
    McpCallError,
    McpSession,
    OutputSchemas,
    check_tool_result,
)
from ocm_common.mcp_messages import (
    RpcNotification,
    RpcRequest,
    call_body,
    initialize_body,
    initialized_notification,
    rpc,
)


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
    listing: JsonObject | None = None  # the server's tools/list result

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

    def _post(self, body: RpcRequest, name: str) -> JsonObject | None:
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
                if not isinstance(meta, dict):  # not an object: no counts, no timings
                    meta = {}
                CACHE.see(meta.get("cache"))
                STAGES.see(call.tool, client_ms, meta.get("timings_ms"))
                response.success()
            except McpCallError as exc:
                response.failure(f"{exc} [{call.scenario}]")


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


class WorkerReport(TypedDict, total=False):
    """The keys this file adds to a worker's report to the master (locust's own are not read
    here); the tuples sent arrive as lists."""

    ocm_cache: Mapping[str, Mapping[str, Sequence[int]]]
    ocm_stages: Mapping[str, Mapping[str, Sequence[float]]]


@events.report_to_master.add_listener
def _send_cache(client_id: str, data: WorkerReport, **_: Any) -> None:
    data["ocm_cache"] = CACHE.dump()
    data["ocm_stages"] = STAGES.drain()


@events.worker_report.add_listener
def _receive_cache(client_id: str, data: WorkerReport, **_: Any) -> None:
    CACHE.merge(data.get("ocm_cache") or {})
    STAGES.merge(data.get("ocm_stages") or {})


@events.quitting.add_listener
def _verdict(environment: Environment, **_: Any) -> None:
    """Per-tool records -> latency.jsonl; SLO misses -> table and exit code (master/local only)."""
    if isinstance(environment.runner, WorkerRunner) or environment.runner is None:
        return
    environment.process_exit_code = run_verdict(
        environment.runner.stats,
        environment.shape_class,
        profile=str(_opt(environment, "load_profile", "latency")),
        slo_file=Path(_opt(environment, "slo_file")) if _opt(environment, "slo_file") else None,
        out=_opt(environment, "out_dir"),
        cache=CACHE,
        stage_samples=STAGES,
    )
