"""`ocm query-audit --factor 10`: which queries get slower as the corpus grows.

Runs every golden call that expects an answer in-process against the real index and the
`factor`x synthetic index (same process, alternating, so machine noise hits both alike),
records every SQL statement the tools execute and every vector-store call, and prints:

- per tool: median latency at 1x and at `factor`x, the ratio, and the handler stages that grew
  most (the stage times each answer's `_meta.timings_ms` carries);
- per SQL statement: calls, mean time at both scales, the ratio, and its `EXPLAIN QUERY
  PLAN` when it scans a table (a `SCAN` without an index);
- per vector-store method: mean time at both scales.

A JSON copy goes to `--out`. This is the tool behind the corpus-growth fixes; it measures,
it does not assert.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from fastmcp import Client
from rich.console import Console
from rich.table import Table

from ocm_common import golden
from ocm_common.client_session import record_results_as_they_come
from reference_server.config import Settings
from reference_server.index.synthetic import build_scaled, default_out_dir
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient
from reference_server.server import ReferenceServer, build_server

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
VECTOR_METHODS = ("search", "get", "get_where", "ids_by", "search_many")
Samples = dict[str, list[float]]
# the audit's JSON rows carry the factor in their keys (`p50_10x`, `mean_ms_10x`)
SqlRowJson = dict[str, str | int | float | list[str]]


@dataclass(frozen=True)
class ScaleSamples:
    """What one scale's server did over the timed passes: ms per tool call, per handler stage of
    each tool, per SQL statement and per vector-store call, and each statement's database and
    first parameters."""

    tools: Samples
    stages: dict[str, Samples]
    sql: Samples
    vector: Samples
    sql_args: dict[str, tuple[str, Any]]


@dataclass(frozen=True)
class ToolRow:
    """One tool's median latency over the golden calls at 1x and at the factor, and each
    handler stage's median at both (over the calls that ran it), most growth first."""

    p50_1x: float
    p50_big: float
    stages: dict[str, tuple[float, float]]

    def grew_most(self, n: int = 2) -> str:
        return ", ".join(
            f"{name} {a:.2f}->{b:.2f}" for name, (a, b) in list(self.stages.items())[:n]
        )


@dataclass(frozen=True)
class SqlRow:
    """One SQL statement at the factor: calls, mean ms at both scales, total ms, the lines of
    its query plan that scan a whole table, and the plan."""

    sql: str
    db: str
    calls: int
    mean_ms_1x: float
    mean_ms_big: float
    total_ms_big: float
    full_scan: list[str]
    plan: list[str]

    def to_json(self, factor: int) -> SqlRowJson:
        return {
            "sql": self.sql,
            "db": self.db,
            "calls": self.calls,
            "mean_ms_1x": self.mean_ms_1x,
            f"mean_ms_{factor}x": self.mean_ms_big,
            f"total_ms_{factor}x": self.total_ms_big,
            "full_scan": self.full_scan,
            "plan": self.plan,
        }


@dataclass(frozen=True)
class VectorRow:
    """One vector-store method (and collection): calls at the factor, mean ms at both scales."""

    calls: int
    mean_ms_1x: float
    mean_ms_big: float


class AuditJson(TypedDict):
    """The audit as `--out` holds it."""

    factor: int
    tools: dict[str, dict[str, Any]]
    sql: list[SqlRowJson]
    vector: dict[str, dict[str, int | float]]


@dataclass(frozen=True)
class Audit:
    """Which queries got slower at `factor`x: per tool, per SQL statement (most total time
    first) and per vector-store call."""

    factor: int
    tools: dict[str, ToolRow]
    sql: list[SqlRow]
    vector: dict[str, VectorRow]

    def to_json(self) -> AuditJson:
        f = self.factor
        return {
            "factor": f,
            "tools": {
                tool: {
                    "p50_1x": row.p50_1x,
                    f"p50_{f}x": row.p50_big,
                    "stages": {
                        name: {"p50_1x": a, f"p50_{f}x": b} for name, (a, b) in row.stages.items()
                    },
                }
                for tool, row in self.tools.items()
            },
            "sql": [row.to_json(f) for row in self.sql],
            "vector": {
                name: {
                    "calls": row.calls,
                    "mean_ms_1x": row.mean_ms_1x,
                    f"mean_ms_{f}x": row.mean_ms_big,
                }
                for name, row in self.vector.items()
            },
        }


class Recorder:
    """Collects durations per scale label (1x / Nx) while active; wraps the clients' methods."""

    def __init__(self) -> None:
        self.label = ""
        self.sql: dict[str, Samples] = defaultdict(lambda: defaultdict(list))
        self.sql_args: dict[str, dict[str, tuple[str, Any]]] = defaultdict(dict)
        self.vector: dict[str, Samples] = defaultdict(lambda: defaultdict(list))

    @contextmanager
    def patched(self) -> Iterator[None]:
        originals: list[tuple[type, str, Callable[..., Any]]] = []
        for name in ("query", "one"):
            originals.append((SqlClient, name, getattr(SqlClient, name)))
            setattr(SqlClient, name, self._wrap_sql(getattr(SqlClient, name)))
        for name in VECTOR_METHODS:
            originals.append((VectorClient, name, getattr(VectorClient, name)))
            setattr(VectorClient, name, self._wrap_vector(name, getattr(VectorClient, name)))
        try:
            yield
        finally:
            for owner, name, fn in originals:
                setattr(owner, name, fn)

    def _wrap_sql(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def wrapped(client: SqlClient, sql: str, params: Any = ()) -> Any:
            started = time.perf_counter()
            try:
                return fn(client, sql, params)
            finally:
                key = " ".join(sql.split())
                recorder.sql[recorder.label][key].append((time.perf_counter() - started) * 1000)
                recorder.sql_args[recorder.label].setdefault(key, (str(client.path), params))

        return wrapped

    def _wrap_vector(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def wrapped(client: VectorClient, collection: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(client, collection, *args, **kwargs)
            finally:
                label = f"{name}({collection if isinstance(collection, str) else 'many'})"
                elapsed = (time.perf_counter() - started) * 1000
                recorder.vector[recorder.label][label].append(elapsed)

        return wrapped


def golden_calls() -> list[tuple[str, str, dict[str, Any]]]:
    return [(c.scenario, c.tool, c.arguments) for c in golden.golden_calls(GOLDEN)]


async def _time_interleaved(
    servers: dict[str, ReferenceServer],
    calls: list[tuple[str, str, dict[str, Any]]],
    repeat: int,
    recorder: Recorder | None,
) -> tuple[dict[str, Samples], dict[str, dict[str, Samples]]]:
    """Each call on every server in turn, so machine noise hits all scales alike: ms per call
    and, per tool, ms per handler stage as the answer's `_meta` reports it."""
    per_tool: dict[str, Samples] = {label: defaultdict(list) for label in servers}
    per_stage: dict[str, dict[str, Samples]] = {
        label: defaultdict(lambda: defaultdict(list)) for label in servers
    }
    clients = {label: Client(server) for label, server in servers.items()}
    for client in clients.values():
        await client.__aenter__()
        record_results_as_they_come(client)  # the server's time, not the client's schema check
    try:
        for _ in range(repeat):
            for _, tool, args in calls:
                for label, client in clients.items():
                    if recorder:
                        recorder.label = label
                    started = time.perf_counter()
                    result = await client.call_tool_mcp(tool, args)
                    per_tool[label][tool].append((time.perf_counter() - started) * 1000)
                    timings = (result.meta or {}).get("timings_ms") or {}
                    for stage, ms in (timings.get("stages") or {}).items():
                        per_stage[label][tool][stage].append(ms)
    finally:
        for client in clients.values():
            await client.__aexit__(None, None, None)
    return per_tool, per_stage


def explain(db: str, sql: str, params: Any) -> list[str]:
    """EXPLAIN QUERY PLAN lines of one statement with the parameters it ran with."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    except sqlite3.Error as exc:
        return [f"(cannot explain: {exc})"]
    finally:
        conn.close()


FULL_SCAN = re.compile(r"^SCAN (?!.*VIRTUAL TABLE)(?!.*USING (COVERING )?INDEX)")


def audit(factor: int, repeat: int) -> Audit:
    base = Settings.from_env(sql_timeout_ms=60000, vector_timeout_ms=60000, tool_timeout_ms=120000)
    build_scaled(base.index_dir, factor)
    dirs = {"1": base.index_dir, str(factor): default_out_dir(base.index_dir, factor)}
    servers = {}
    for label, index_dir in dirs.items():
        servers[label] = build_server(base.model_copy(update={"index_dir": index_dir}))
        servers[label].runtime.warm_up()
    calls = golden_calls()
    asyncio.run(_time_interleaved(servers, calls, 1, None))  # load caches and collections
    recorder = Recorder()
    with recorder.patched():
        tools, stages = asyncio.run(_time_interleaved(servers, calls, repeat, recorder))
    results = {
        label: ScaleSamples(
            tools=tools[label],
            stages=stages[label],
            sql=recorder.sql[label],
            vector=recorder.vector[label],
            sql_args=recorder.sql_args[label],
        )
        for label in dirs
    }
    return summarise(results, str(factor))


def summarise(results: dict[str, ScaleSamples], factor: str) -> Audit:
    one, big = results["1"], results[factor]

    def mean(xs: list[float]) -> float:
        return statistics.fmean(xs) if xs else float("nan")

    def stage_growth(tool: str) -> dict[str, tuple[float, float]]:
        both = set(one.stages[tool]) & set(big.stages[tool])
        medians = {
            name: (
                statistics.median(one.stages[tool][name]),
                statistics.median(big.stages[tool][name]),
            )
            for name in both
        }
        return dict(sorted(medians.items(), key=lambda kv: kv[1][0] - kv[1][1]))

    tools = {
        tool: ToolRow(
            p50_1x=statistics.median(one.tools[tool]),
            p50_big=statistics.median(big.tools[tool]),
            stages=stage_growth(tool),
        )
        for tool in sorted(one.tools)
    }
    sql = []
    for stmt, samples in big.sql.items():
        db, params = big.sql_args[stmt]
        plan = explain(db, stmt, params)
        sql.append(
            SqlRow(
                sql=stmt,
                db=Path(db).name,
                calls=len(samples),
                mean_ms_1x=mean(one.sql.get(stmt, [])),
                mean_ms_big=mean(samples),
                total_ms_big=sum(samples),
                full_scan=[line for line in plan if FULL_SCAN.search(line)],
                plan=plan,
            )
        )
    sql.sort(key=lambda r: -r.total_ms_big)
    vector = {
        name: VectorRow(
            calls=len(xs), mean_ms_1x=mean(one.vector.get(name, [])), mean_ms_big=mean(xs)
        )
        for name, xs in sorted(big.vector.items())
    }
    return Audit(factor=int(factor), tools=tools, sql=sql, vector=vector)


def render(report: Audit, console: Console, top: int) -> None:
    f = report.factor
    table = Table(title=f"tool latency, median over golden calls: 1x vs {f}x")
    for col in ("tool", "1x ms", f"{f}x ms", "ratio", "stages that grew most (median ms)"):
        table.add_column(col, justify="left" if col[0].isalpha() and col != "ratio" else "right")
    for tool, row in report.tools.items():
        a, b = row.p50_1x, row.p50_big
        table.add_row(tool, f"{a:.1f}", f"{b:.1f}", f"{b / a:.2f}", row.grew_most())
    console.print(table)
    table = Table(title=f"SQL statements by total time at {f}x (top {top})")
    for col in ("db", "calls", "1x ms", f"{f}x ms", "ratio", "full scan", "statement"):
        table.add_column(col, overflow="fold")
    for srow in report.sql[:top]:
        a, b = srow.mean_ms_1x, srow.mean_ms_big
        table.add_row(
            srow.db,
            str(srow.calls),
            f"{a:.2f}",
            f"{b:.2f}",
            f"{b / a:.1f}" if a else "-",
            "; ".join(srow.full_scan),
            srow.sql[:160],
        )
    console.print(table)
    table = Table(title=f"vector-store calls: 1x vs {f}x")
    for col in ("call", "calls", "1x ms", f"{f}x ms", "ratio"):
        table.add_column(col)
    for name, vrow in report.vector.items():
        a, b = vrow.mean_ms_1x, vrow.mean_ms_big
        table.add_row(name, str(vrow.calls), f"{a:.2f}", f"{b:.2f}", f"{b / a:.1f}" if a else "-")
    console.print(table)


def build_parser(prog: str = "ocm query-audit") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--factor", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="timed passes over the calls")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, default=Path("reports/scale/query_audit.json"))
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Audit the queries at 1x and `--factor`x, write the JSON copy, print the tables."""
    report = audit(args.factor, args.repeat)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report.to_json(), indent=2, default=str))
    render(report, Console(), args.top)
    print(f"written {args.out}")
    return 0
