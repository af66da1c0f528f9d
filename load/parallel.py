"""The `parallel` profile: the dual-path and fan-out guarantees, checked from outside over HTTP.

(a) the same delay injected on both paths (server configuration): each tool's p50 stays near
    the delay, not twice it (serial paths would add the two delays);
(b) one path failing: no errors, `provenance` naming only the other path, lower confidence;
(c) `coverage.answer`: its `_meta` total within a few ms of its slowest tool in `trace`, not
    near the sum (a sequential fan-out adds them up);
(d) event-loop lag: a cheap call (`opa.get_section`) issued while slow calls run keeps its own
    latency (blocking work on the event loop would make it wait for them).

Each guarantee needs its own server configuration; `ServerFactory` starts one (tests pass a
factory that starts a deliberately defective backend). Bars live in `load/slo.yaml`.

The probes behind (a) and (d) (`interleaved_calls`, `lag_probe`) take any number of servers,
so `make bench BASE=` (load/base_conditions.py) measures the working tree's and the base's
servers with the same code, each call going to every server back to back.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from load.cache_counts import count
from load.client import McpClient
from load.one_path_failing import check_one_path_failing
from load.parallel_report import ParallelReport
from load.profiles import ParallelProfile
from load.slo import Slo, load_slo
from load.taskmix import TaskMix
from ocm_common.json_types import Arguments, JsonValue
from ocm_common.profile_results import DelayPair, LagFigures

ServerFactory = Callable[[dict[str, str]], AbstractContextManager[str]]
CHEAP_TOOL = "opa.get_section"
SLOW_TOOL = "coverage.answer"


def _ms(value: JsonValue) -> float:
    """A duration the server sent, as `float()` reads it (0 when absent or zero)."""
    if not value:
        return 0.0
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"not a duration: {value!r}")


def _p50(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else float("nan")


@dataclass
class SideCalls:
    """One server's part of `interleaved_calls`: per tool the latencies in call order, and the
    failed calls as `tool: message`."""

    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    # the server's `_meta.cache` counts (hits, misses) per server process, first and last seen
    cache_first: dict[str, tuple[int, int]] = field(default_factory=dict)
    cache_last: dict[str, tuple[int, int]] = field(default_factory=dict)

    def errors_of(self, tool: str) -> list[str]:
        return [e for e in self.errors if e.startswith(f"{tool}: ")]

    def see_cache(self, cache: JsonValue) -> None:
        if isinstance(cache, dict) and "process" in cache:
            counts = (count(cache.get("embed_hits", 0)), count(cache.get("embed_misses", 0)))
            self.cache_first.setdefault(str(cache["process"]), counts)
            self.cache_last[str(cache["process"])] = counts

    def cache_hit_rate(self) -> float | None:
        """The query-embedding cache's hit rate between the first and last answer seen (None
        when the server states no counts, or no embedding happened in between)."""
        hits = sum(self.cache_last[p][0] - self.cache_first[p][0] for p in self.cache_last)
        misses = sum(self.cache_last[p][1] - self.cache_first[p][1] for p in self.cache_last)
        return round(hits / (hits + misses), 4) if hits + misses else None


def interleaved_calls(
    urls: Mapping[str, str],
    calls: Sequence[tuple[str, Arguments]],
    *,
    validate: bool = False,
) -> dict[str, SideCalls]:
    """Each (tool, arguments) sent to every server back to back, one call at a time; which
    server goes first alternates per tool from call to call, so a drift or a cache effect in
    between falls on every side alike and the n-th latencies of a tool are a matched set.
    `validate` also checks every answer against the server's published outputSchema."""
    clients = {side: McpClient(url) for side, url in urls.items()}
    sides = list(urls)
    out = {side: SideCalls() for side in sides}
    tools = sorted({tool for tool, _ in calls})
    seen: dict[str, int] = defaultdict(int)
    try:
        schemas = {side: c.schemas() for side, c in clients.items()} if validate else {}
        for tool, arguments in calls:
            flip = (seen[tool] + tools.index(tool)) % 2
            seen[tool] += 1
            for side in sides[::-1] if flip else sides:
                reply = clients[side].call(tool, arguments, schemas.get(side))
                out[side].latencies_ms[tool].append(reply.latency_ms)
                out[side].see_cache(reply.meta.get("cache"))
                if reply.error:
                    out[side].errors.append(f"{tool}: {reply.error}")
    finally:
        for client in clients.values():
            client.close()
    return out


def check_delay(
    healthy_url: str,
    delayed_url: str,
    mix: TaskMix,
    slo: Slo,
    prof: ParallelProfile,
    report: ParallelReport,
) -> None:
    """(a): the delay on both paths adds about one delay to each tool's p50, not two.

    The same calls go to a healthy and a delayed server of the same shape, back to back, so
    what is compared is the latency the delay added."""
    delay = slo.parallel.delay_ms
    bound = delay * slo.parallel.delay_factor_max
    calls = [(t, mix.pick(t).arguments) for t in mix.tools for _ in range(prof.calls_per_tool)]
    sides = interleaved_calls({"healthy": healthy_url, "delayed": delayed_url}, calls)
    for tool in mix.tools:
        base = _p50(sides["healthy"].latencies_ms[tool])
        p50 = _p50(sides["delayed"].latencies_ms[tool])
        errors = sides["delayed"].errors_of(tool)
        added = p50 - base
        if report.measurements.delay is None:
            report.measurements.delay = {}
        report.measurements.delay[tool] = DelayPair(healthy_p50_ms=base, delayed_p50_ms=p50)
        report.add(
            "a",
            tool,
            not errors and added <= bound,
            f"p50 {base:.0f} -> {p50:.0f} ms: +{added:.0f} ms for {delay:g} ms on both paths "
            f"(bar <= +{bound:g}; one path after the other adds ~{2 * delay:g})"
            + (f"; errors: {errors[0]}" if errors else ""),
        )


@dataclass
class LagSamples:
    """One server's part of `lag_probe`."""

    alone_ms: list[float]
    loaded_ms: list[float]
    slow_errors: list[str]


def lag_probe(
    urls: Mapping[str, str],
    mix: TaskMix,
    *,
    alone_calls: int,
    loaded_calls: int,
    slow_users: int,
) -> dict[str, LagSamples]:
    """Cheap calls (`CHEAP_TOOL`) alone, then while `slow_users` callers of `SLOW_TOOL` per
    server keep every server busy at once; the cheap calls go through `interleaved_calls`, so
    with several servers the n-th cheap calls are a matched set measured under the same load."""
    stop = threading.Event()
    slow_errors: dict[str, list[str]] = {side: [] for side in urls}

    def cheap(n: int) -> dict[str, SideCalls]:
        return interleaved_calls(
            urls, [(CHEAP_TOOL, mix.pick(CHEAP_TOOL).arguments) for _ in range(n)]
        )

    def slow_user(side: str, url: str) -> None:
        c = McpClient(url)
        try:
            while not stop.is_set():
                r = c.call(SLOW_TOOL, mix.pick(SLOW_TOOL).arguments)
                if r.error:
                    slow_errors[side].append(r.error)
        finally:
            c.close()

    threads = [
        threading.Thread(target=slow_user, args=(side, url), daemon=True)
        for side, url in urls.items()
        for _ in range(slow_users)
    ]
    try:
        alone = cheap(alone_calls)
        for t in threads:
            t.start()
        time.sleep(0.5)
        loaded = cheap(loaded_calls)
    finally:
        stop.set()
        for t in threads:
            if t.ident is not None:  # started
                t.join(timeout=30)
    return {
        side: LagSamples(
            alone[side].latencies_ms[CHEAP_TOOL],
            loaded[side].latencies_ms[CHEAP_TOOL],
            slow_errors[side],
        )
        for side in urls
    }


def check_lag(
    url: str, mix: TaskMix, slo: Slo, prof: ParallelProfile, report: ParallelReport
) -> None:
    """(d): a cheap call keeps its latency while slow calls keep the server busy."""
    half = prof.cheap_calls // 2
    lag = lag_probe(
        {"server": url}, mix, alone_calls=half, loaded_calls=half, slow_users=prof.slow_users
    )["server"]
    slow_errors = lag.slow_errors
    p_alone, p_loaded = _p50(lag.alone_ms), _p50(lag.loaded_ms)
    report.measurements.lag = LagFigures(
        alone_p50_ms=p_alone, under_slow_load_p50_ms=p_loaded, slow_users=prof.slow_users
    )
    bar = p_alone + slo.parallel.lag_slack_ms
    report.add(
        "d",
        CHEAP_TOOL,
        p_loaded <= bar and not slow_errors,
        f"p50 {p_alone:.0f} ms alone, {p_loaded:.0f} ms while {prof.slow_users} {SLOW_TOOL} "
        f"calls run (bar <= {bar:.0f})"
        + (f"; slow-call errors: {slow_errors[0]}" if slow_errors else ""),
    )


def fanout_bar(slo: Slo, others_ms: float) -> float:
    """The most coverage.answer may take beyond its slowest tool: the slack in ms, or a share of
    what the other tools took, whichever is larger. One tool after another adds all of the
    others' time (share >= 1); in parallel only the merge is added, and that costs the same share
    of the tools' own time on a slower machine, where a fixed slack alone would be a false red."""
    return max(slo.parallel.fanout_slack_ms, slo.parallel.fanout_share_max * others_ms)


def check_fanout(url: str, mix: TaskMix, slo: Slo, report: ParallelReport) -> None:
    """(c): coverage.answer's total against its slowest tool, from `trace` and `_meta`; the call
    nearest its bar is the one reported."""
    client = McpClient(url)
    worst = (-1.0, 0.0, 0.0)  # (gap / bar, gap, bar)
    detail = ""
    errors: list[str] = []
    try:
        for call in mix.calls.get(SLOW_TOOL, []):
            r = client.call(SLOW_TOOL, call.arguments)
            if r.error or not r.structured:
                errors.append(r.error or "no result")
                continue
            trace = r.structured.get("trace") or []
            if not isinstance(trace, list) or len(trace) < 2:
                continue  # one tool called: nothing ran in parallel
            timings = r.meta.get("timings_ms", {})
            total = _ms(timings.get("total") if isinstance(timings, dict) else None)
            slowest = max(_ms(t.get("duration_ms") if isinstance(t, dict) else None) for t in trace)
            total_sum = sum(
                _ms(t.get("duration_ms") if isinstance(t, dict) else None) for t in trace
            )
            gap = total - slowest
            bar = fanout_bar(slo, total_sum - slowest)
            if gap / bar >= worst[0]:
                worst = (gap / bar, gap, bar)
                detail = (
                    f"total {total:.0f} ms, slowest tool {slowest:.0f} ms, sum {total_sum:.0f} ms "
                    f"({len(trace)} tools, {call.scenario})"
                )
    finally:
        client.close()
    _, gap, bar = worst
    report.measurements.fanout_gap_ms = round(gap, 2)
    report.measurements.fanout_bar_ms = round(bar, 2)
    if not detail and not errors:
        report.add("c", SLOW_TOOL, False, "no golden question made coverage.answer call two tools")
        return
    report.add(
        "c",
        SLOW_TOOL,
        gap <= bar and not errors,
        f"worst gap {gap:.1f} ms (bar <= {bar:.1f}: the larger of "
        f"{slo.parallel.fanout_slack_ms:g} ms and {slo.parallel.fanout_share_max:g} x the other "
        f"tools' time): {detail}" + (f"; errors: {errors[0]}" if errors else ""),
    )


def run_parallel(
    factory: ServerFactory,
    *,
    healthy_url: str | None = None,
    profile: ParallelProfile | None = None,
    slo: Slo | None = None,
    checks: str = "abcd",
    progress: Callable[[str], None] = print,
) -> ParallelReport:
    """Start the server configurations the checks need and run them; the report says what held."""
    slo = slo or load_slo()
    prof = profile or ParallelProfile()
    mix = TaskMix.from_golden(seed=7)
    report = ParallelReport()
    delay = str(slo.parallel.delay_ms)

    def healthy() -> Iterator[str]:
        if healthy_url:
            yield healthy_url
        else:
            with factory({}) as url:
                yield url

    if "a" in checks or "d" in checks:
        progress(f"parallel (a)/(d): {delay} ms injected on both paths, against a healthy twin")
        faults = {"OCM_FAULT_SQL_DELAY_MS": delay, "OCM_FAULT_VECTOR_DELAY_MS": delay}
        with factory({}) as healthy_twin, factory(faults) as delayed:
            if "a" in checks:
                check_delay(healthy_twin, delayed, mix, slo, prof, report)
            if "d" in checks:
                check_lag(delayed, mix, slo, prof, report)
    if "b" in checks or "c" in checks:
        for url in healthy():
            if "c" in checks:
                progress("parallel (c): coverage.answer fan-out against its trace")
                check_fanout(url, mix, slo, report)
            if "b" in checks:
                progress("parallel (b): one path failing (sql, then vector)")
                with (
                    factory({"OCM_FAULT_SQL_FAIL": "1"}) as sql_down,
                    factory({"OCM_FAULT_VECTOR_FAIL": "1"}) as vector_down,
                ):
                    check_one_path_failing(
                        url,
                        {"sql": sql_down, "vector": vector_down},
                        mix,
                        report,
                        slo.parallel.known_gaps,
                    )
    return report
