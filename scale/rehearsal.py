"""`make rehearsal`: several replicas behind a load balancer, sharing one Chroma server.

On this machine, all on loopback ports: `chroma run` (loaded with the built collections),
two stateless server replicas (`python -m reference_server --transport http`, each with
`OCM_CHROMA_URL`), and Debian's nginx as the load balancer (run as our own process with a
generated config, never the system service). Load goes through nginx: `--clients`
concurrent MCP clients over the golden calls for `--seconds`; halfway through, replica A is
stopped (SIGTERM, as a deploy or scale-down would). nginx passes a request that fails on a
stopped upstream to the other one (`proxy_next_upstream ... non_idempotent`: every tool is
read-only, so a retried call is safe).

It prints the client's table (per tool calls, failures, p50/p95) and which replica answered
how many requests before and after the stop (from nginx's access log), writes
`rehearsal.json` to `--out`, stops everything it started, and exits 1 if the client saw
any failed call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from ocm_common.durations import duration_arg
from ocm_common.latency_records import RECORDS_FILE, read_records
from ocm_common.launcher import free_port, http_ok, mcp_ready, running, server_command
from ocm_common.mcp_http_async import AsyncMcpClient
from ocm_common.percentiles import pct
from reference_server.config import Settings
from reference_server.index.chroma_load import load_collections
from scale.bench import Call, golden_calls
from scale.procs import chroma_server
from scale.rehearsal_shapes import LoadResult, RehearsalResult, ToolLoad, UpstreamCounts

NGINX_CONF = """
{user}worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
daemon off;
events {{ worker_connections 512; }}
http {{
  log_format upstream '$msec|$status|$upstream_addr|$upstream_status|$request_time';
  access_log {tmp}/access.log upstream;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  upstream mcp_replicas {{
{servers}
    keepalive 32;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://mcp_replicas;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_buffering off;
      proxy_read_timeout 30s;
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
      proxy_next_upstream_tries 2;
    }}
  }}
}}
"""


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None
    )


def write_nginx_conf(tmp: Path, port: int, upstreams: list[int]) -> Path:
    servers = "\n".join(
        f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=10s;" for p in upstreams
    )
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = tmp / "nginx.conf"
    conf.write_text(NGINX_CONF.format(user=user, tmp=tmp, servers=servers, port=port))
    return conf


async def drive(
    url: str,
    calls: list[Call],
    clients: int,
    seconds: float,
    stop_at: float,
    stop: Callable[[], None],
) -> LoadResult:
    """`clients` concurrent callers for `seconds`; `stop()` runs once at `stop_at` seconds."""
    latencies: dict[str, list[float]] = defaultdict(list)
    failures: dict[str, Counter[str]] = defaultdict(Counter)
    started = time.perf_counter()
    deadline = started + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=30, limits=limits) as http:

        async def worker(offset: int) -> None:
            client = await AsyncMcpClient(url, http).initialize()
            i = offset
            while time.perf_counter() < deadline:
                tool, args = calls[i % len(calls)]
                i += 1
                reply = await client.call(tool, args)
                latencies[tool].append(reply.latency_ms)
                if reply.error:
                    failures[tool][reply.error[:120]] += 1

        async def stopper() -> float:
            await asyncio.sleep(stop_at)
            await asyncio.get_running_loop().run_in_executor(None, stop)
            return time.time()

        stop_task = asyncio.create_task(stopper())
        await asyncio.gather(*(worker(i) for i in range(clients)))
        stopped_at = await stop_task
    elapsed = time.perf_counter() - started
    tools: dict[str, ToolLoad] = {
        tool: {
            "calls": len(xs),
            "failures": sum(failures[tool].values()),
            "failure_kinds": dict(failures[tool]),
            "p50_ms": round(pct(xs, 50), 1),
            "p95_ms": round(pct(xs, 95), 1),
        }
        for tool, xs in sorted(latencies.items())
    }
    total = sum(r["calls"] for r in tools.values())
    return {
        "tools": tools,
        "calls": total,
        "failures": sum(r["failures"] for r in tools.values()),
        "rps": round(total / elapsed, 1),
        "seconds": round(elapsed, 1),
        "stopped_at_epoch": stopped_at,
    }


def locust_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("locust") is not None


def drive_locust(
    url: str, users: int, seconds: float, stop_at: float, stop: Callable[[], None], out: Path
) -> LoadResult:
    """`make load`'s runner (load.run's `paced` profile) through nginx; `stop()` runs at
    `stop_at` seconds. Per tool requests and failures come from locust's own CSV, p50/p95 from
    the run's latency records (the one percentile definition, ocm_common.percentiles)."""
    import csv
    import threading

    from load.profiles import LocustProfile, load_profiles
    from load.run import run_profile

    paced = load_profiles().locust_settings("paced")
    if not isinstance(paced, LocustProfile):
        raise TypeError("the paced profile is not a locust user profile")
    settings = paced.model_copy(update={"users": users, "time_s": seconds})
    started = time.time()
    stopped: list[float] = []

    def stop_and_note() -> None:
        stop()
        stopped.append(time.time())

    timer = threading.Timer(stop_at, stop_and_note)
    timer.start()
    try:
        run = run_profile("paced", url, out, settings, quiet=True)
    finally:
        timer.cancel()
    tools: dict[str, ToolLoad] = {}
    stats = out / "paced_stats.csv"
    rows = list(csv.DictReader(stats.open())) if stats.exists() else []
    records = out / RECORDS_FILE
    latency = {r.tool: r for r in read_records(records)} if records.exists() else {}
    for row in rows:
        if row["Name"] == "Aggregated":
            continue
        tools[row["Name"]] = {
            "calls": int(row["Request Count"]),
            "failures": int(row["Failure Count"]),
            "failure_kinds": {},
            "p50_ms": latency[row["Name"]].p50_ms if row["Name"] in latency else 0.0,
            "p95_ms": latency[row["Name"]].p95_ms if row["Name"] in latency else 0.0,
        }
    total = sum(r["calls"] for r in tools.values())
    failures_csv = out / "paced_failures.csv"
    if failures_csv.exists():
        for row in csv.DictReader(failures_csv.open()):
            if row["Name"] in tools:
                tools[row["Name"]]["failure_kinds"][row["Error"][:120]] = int(row["Occurrences"])
    return {
        "runner": "locust (load.run, profile paced)",
        "exit_code": run.exit_code,
        "tools": tools,
        "calls": total,
        "failures": sum(r["failures"] for r in tools.values()) if rows else -1,
        "rps": round(total / max(1.0, seconds), 1),
        "seconds": round(time.time() - started, 1),
        "stopped_at_epoch": stopped[0] if stopped else started + stop_at,
    }


def upstream_counts(access_log: Path, stopped_at: float) -> UpstreamCounts:
    """Per upstream address: requests answered before and after the stop; retried requests."""
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    retried = 0
    for line in access_log.read_text().splitlines():
        parts = line.split("|")
        if len(parts) < 5:
            continue
        tried = [a.strip() for a in parts[2].replace(" : ", ", ").split(",") if a.strip()]
        retried += len(tried) > 1  # nginx passed the request on to the next replica
        (after if float(parts[0]) >= stopped_at else before)[tried[-1] if tried else "-"] += 1
    return {"before_stop": dict(before), "after_stop": dict(after), "retried_by_nginx": retried}


def render(result: RehearsalResult, console: Console) -> None:
    table = Table(title="client through nginx (2 replicas, replica A stopped mid-run)")
    for col in ("tool", "calls", "failures", "p50 ms", "p95 ms"):
        table.add_column(col, justify="left" if col == "tool" else "right")
    for tool, row in result["load"]["tools"].items():
        table.add_row(
            tool,
            str(row["calls"]),
            str(row["failures"]),
            f"{row['p50_ms']:.1f}",
            f"{row['p95_ms']:.1f}",
        )
    load = result["load"]
    table.add_row("all", str(load["calls"]), str(load["failures"]), "", "", style="bold")
    console.print(table)
    console.print(
        f"{load['rps']} calls/s over {load['seconds']} s; replicas "
        f"{result['replicas']}; requests per upstream {result['upstreams']}"
    )


def build_parser(prog: str = "ocm rehearsal") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--seconds", type=duration_arg, default=30.0, help="how long: 30s, 1m or bare seconds"
    )
    parser.add_argument("--out", type=Path, default=Path("reports/rehearsal/latest"))
    parser.add_argument(
        "--builtin-client",
        action="store_true",
        help="drive load with this module's asyncio MCP client instead of locust (`make load`)",
    )
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Replicas behind nginx sharing one Chroma server, one stopped mid-run; exit 1 on a failed
    call at the client, 2 without nginx."""
    nginx = nginx_binary()
    if nginx is None:
        print("nginx is not installed (Debian: apt-get install -y nginx)", file=sys.stderr)
        return 2
    console = Console(width=160)
    args.out.mkdir(parents=True, exist_ok=True)
    settings = Settings.from_env()
    with (
        tempfile.TemporaryDirectory(prefix="ocm-rehearsal-") as scratch,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(scratch)
        chroma_url = stack.enter_context(chroma_server(tmp / "chroma", log=args.out / "chroma.log"))
        console.print(f"Chroma server {chroma_url}: loading the collections")
        load_collections(settings.index_dir, chroma_url, quiet=True)
        ports = [free_port(), free_port()]
        replicas = {}
        for name, port in zip("AB", ports, strict=True):
            env = {
                **os.environ,
                "OCM_CHROMA_URL": chroma_url,
                "OCM_INDEX_DIR": str(settings.index_dir),
            }
            cmd = server_command(port)
            replicas[name] = stack.enter_context(
                running(
                    cmd,
                    log=args.out / f"replica-{name}.log",
                    ready=mcp_ready(f"http://127.0.0.1:{port}/mcp"),
                    what=f"replica {name}",
                    env=env,
                    timeout_s=300,
                )
            )
        lb_port = free_port()
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (tmp / sub).mkdir()
        conf = write_nginx_conf(tmp, lb_port, ports)
        stack.enter_context(
            running(
                [nginx, "-c", str(conf), "-p", str(tmp)],
                log=args.out / "nginx.log",
                ready=http_ok(f"http://127.0.0.1:{lb_port}/mcp"),
                what="nginx",
                timeout_s=30,
            )
        )
        url = f"http://127.0.0.1:{lb_port}/mcp"
        console.print(
            f"nginx {url} -> replicas A :{ports[0]}, B :{ports[1]}; "
            f"{args.clients} clients for {args.seconds:.0f} s, replica A stopped at "
            f"{args.seconds / 2:.0f} s"
        )

        def stop_replica_a() -> None:
            os.killpg(replicas["A"].pid, signal.SIGTERM)

        if locust_available() and not args.builtin_client:
            load = drive_locust(
                url,
                args.clients,
                args.seconds,
                args.seconds / 2,
                stop_replica_a,
                args.out / "locust",
            )
        else:
            load = asyncio.run(
                drive(
                    url,
                    golden_calls(),
                    args.clients,
                    args.seconds,
                    args.seconds / 2,
                    stop_replica_a,
                )
            )
        upstreams = upstream_counts(tmp / "access.log", load["stopped_at_epoch"])
        shutil.copy2(tmp / "access.log", args.out / "nginx-access.log")
    result: RehearsalResult = {
        "load": load,
        "upstreams": upstreams,
        "replicas": {"A": f"127.0.0.1:{ports[0]} (stopped mid-run)", "B": f"127.0.0.1:{ports[1]}"},
    }
    (args.out / "rehearsal.json").write_text(json.dumps(result, indent=2))
    render(result, console)
    if load["failures"]:
        console.print(f"[red]{load['failures']} calls failed at the client[/]")
        return 1
    console.print("0 failed calls at the client")
    return 0
