"""`make bench SCALE=10` (or `ocm scale --factors 1,10`): how latency, throughput
and index size grow with the corpus.

For each factor it builds (or reuses) the synthetic index (`index.synthetic`), starts one HTTP
server process per factor on a free loopback port (all at once, so the single-client rounds
interleave factors and machine noise hits them alike), and measures over MCP streamable HTTP:

- single client, sequential: every golden call that expects an answer, `--rounds` times,
  alternating factors call by call -> per tool p50/p95;
- saturation: per tool, `--clients` concurrent clients for `--seconds` on one factor's server
  at a time -> calls/s and errors.

It writes `scale.record.json` (the run record; its body the figures, index sizes and verdict),
`scale.md` and `scale.png` to `--out`, adds `"scale"` to the bench record named by `--summary`
(`{"<factor>": {"<tool>": {"p50_ms", "p95_ms"}}}`, "1" always measured in the same run), prints the table, stops every server it started, and exits 1 when
a tool misses its ratio target (p95 at 10x <= 2x its 1x figure, at 100x <= 4x). Each ratio
comes with a 95 % bootstrap interval, so a miss within the noise of the measurement reads as one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

import httpx
from rich.console import Console

from ocm_common import golden
from ocm_common.bench_summary import BenchSummary
from ocm_common.durations import duration_arg
from ocm_common.json_types import Arguments
from ocm_common.launcher import running_server
from ocm_common.mcp_http_async import AsyncMcpClient
from ocm_common.percentiles import pct
from ocm_common.run_record import Clock, header, locate, read_record, write_record
from reference_server.config import Settings
from reference_server.index.synthetic import build_scaled, default_out_dir, dir_bytes
from scale.bench_render import plot, render
from scale.bench_targets import (
    TARGETS,
    IndexInfo,
    LatencyRow,
    ScaleFigures,
    ScaleResult,
    verdict,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
Call = tuple[str, Arguments]


def golden_calls() -> list[Call]:
    return [(c.tool, c.arguments) for c in golden.golden_calls(GOLDEN)]


async def single_client(
    urls: dict[int, str], calls: list[Call], rounds: int
) -> dict[int, dict[str, LatencyRow]]:
    """Per factor and tool: sequential latencies, factors alternating call by call."""
    samples: dict[int, dict[str, list[float]]] = {f: defaultdict(list) for f in urls}
    errors: dict[int, dict[str, int]] = {f: defaultdict(int) for f in urls}
    sizes: dict[int, dict[str, list[int]]] = {f: defaultdict(list) for f in urls}
    async with httpx.AsyncClient(timeout=30) as http:
        clients = {f: AsyncMcpClient(url, http) for f, url in urls.items()}
        for client in clients.values():
            await client.initialize()
            for tool, args in calls:  # warm-up pass: caches, lazy collections
                await client.call(tool, args)
        for _ in range(rounds):
            for tool, args in calls:
                for factor, client in clients.items():
                    reply = await client.call(tool, args)
                    samples[factor][tool].append(reply.latency_ms)
                    sizes[factor][tool].append(reply.size)
                    if reply.error:
                        errors[factor][tool] += 1
    return {
        f: {
            tool: {
                "p50_ms": round(pct(xs, 50), 2),
                "p95_ms": round(pct(xs, 95), 2),
                "calls": len(xs),
                "errors": errors[f][tool],
                "answer_bytes": round(statistics.mean(sizes[f][tool])),
                "samples_ms": [round(x, 2) for x in xs],
            }
            for tool, xs in sorted(samples[f].items())
        }
        for f in urls
    }


class SaturationRow(TypedDict):
    """One tool's saturation step: calls/s over the step and the calls that failed."""

    rps: float
    errors: int


async def saturation(
    url: str, calls: list[Call], clients: int, seconds: float
) -> dict[str, SaturationRow]:
    """Per tool: `clients` concurrent callers of that tool's golden calls for `seconds`."""
    by_tool: dict[str, list[Call]] = defaultdict(list)
    for tool, args in calls:
        by_tool[tool].append((tool, args))
    out: dict[str, SaturationRow] = {}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=30, limits=limits) as http:
        for tool, mix in sorted(by_tool.items()):
            done, failed = 0, 0
            deadline = time.perf_counter() + seconds

            async def worker(
                offset: int, mix: list[Call] = mix, deadline: float = deadline
            ) -> None:
                nonlocal done, failed
                client = await AsyncMcpClient(url, http).initialize()
                i = offset
                while time.perf_counter() < deadline:
                    name, args = mix[i % len(mix)]
                    i += 1
                    if (await client.call(name, args)).error:
                        failed += 1
                    done += 1

            started = time.perf_counter()
            await asyncio.gather(*(worker(i) for i in range(clients)))
            elapsed = time.perf_counter() - started
            out[tool] = {"rps": round(done / elapsed, 1), "errors": failed}
    return out


@contextlib.contextmanager
def servers(dirs: dict[int, Path], workers: int, logs: Path) -> Iterator[dict[int, str]]:
    """One HTTP server per factor, each on its own free loopback port; all stopped on exit."""
    with contextlib.ExitStack() as stack:
        urls = {}
        for factor, index_dir in dirs.items():
            urls[factor] = str(
                stack.enter_context(
                    running_server(
                        workers=workers,
                        env={"OCM_INDEX_DIR": str(index_dir)},
                        log_path=logs / f"server-x{factor}.log",
                        timeout_s=600,
                    )
                )
            )
        yield urls


def build_indexes(
    factors: list[int], console: Console
) -> tuple[dict[int, Path], dict[int, IndexInfo]]:
    base = Settings.from_env().index_dir
    dirs: dict[int, Path] = {}
    info: dict[int, IndexInfo] = {}
    for factor in factors:
        if factor == 1:
            manifest = json.loads((base / "manifest.json").read_text())
            dirs[1] = base
            info[1] = {
                "build_s": manifest.get("seconds"),
                "bytes": dir_bytes(base),
                "chunks": sum(manifest.get("collections", {}).values()),
            }
            continue
        console.print(f"[bold]building the {factor}x synthetic index[/] (reused when current)")
        manifest = build_scaled(base, factor)
        dirs[factor] = default_out_dir(base, factor)
        info[factor] = {
            "build_s": manifest["seconds"],
            "bytes": manifest["synthetic"]["bytes"],
            "chunks": sum(manifest["collections"].values()),
            "reused": manifest["skipped"],
        }
    return dirs, info


def build_parser(prog: str = "ocm scale") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--factors", default="1,10", help="comma-separated; 1 is always added")
    parser.add_argument("--rounds", type=int, default=10, help="single-client passes")
    parser.add_argument("--clients", type=int, default=8, help="saturation concurrency")
    parser.add_argument(
        "--seconds", type=duration_arg, default=4.0, help="saturation time per tool (4s, 1m)"
    )
    parser.add_argument("--workers", type=int, default=1, help="server processes per factor")
    parser.add_argument("--out", type=Path, default=None, help="default reports/scale/<time>")
    parser.add_argument(
        "--summary",
        type=Path,
        default=None,
        help='the bench record to add "scale" to (a bench folder or its bench.record.json)',
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Build each factor's index, serve it, measure latency and saturation side by side."""
    clock = Clock()
    factors = sorted({1, *(int(f) for f in args.factors.split(",") if f.strip())})
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or Path("reports/scale") / stamp
    out.mkdir(parents=True, exist_ok=True)
    console = Console(width=200)
    dirs, index = build_indexes(factors, console)
    calls = golden_calls()
    with servers(dirs, args.workers, out) as urls:
        console.print(
            f"[bold]single client[/]: {len(calls)} golden calls x {args.rounds} rounds, "
            f"factors {factors} alternating"
        )
        latency = asyncio.run(single_client(urls, calls, args.rounds))
        sat: dict[int, dict[str, SaturationRow]] = {}
        for factor, url in urls.items():
            console.print(
                f"[bold]saturation[/] at {factor}x: {args.clients} clients, "
                f"{args.seconds:.0f} s per tool"
            )
            sat[factor] = asyncio.run(saturation(url, calls, args.clients, args.seconds))
    scale: ScaleFigures = {
        str(f): {
            tool: {
                **row,
                "rps": sat_row["rps"] if (sat_row := sat[f].get(tool)) else None,
                "saturation_errors": sat_row["errors"] if sat_row else None,
            }
            for tool, row in latency[f].items()
        }
        for f in factors
    }
    result: ScaleResult = {
        "scale": scale,
        "index": {str(f): i for f, i in index.items()},
        "targets": verdict(scale),
        "settings": vars(args) | {"out": str(out), "factors": factors},
    }
    md = render(result, console)
    plot(result, out / "scale.png")
    (out / "scale.md").write_text(md)
    added = add_to_bench(args.summary, scale) if args.summary else None
    errors = sum(
        r["errors"] + (r["saturation_errors"] or 0)
        for rows in scale.values()
        for r in rows.values()
    )
    missed = {f: v["missed"] for f, v in result["targets"].items() if v["missed"]}
    code = 1 if errors or missed else 0
    head = header(
        "scale", clock, code, target="reference server (loopback HTTP)", settings=result["settings"]
    )
    write_record(out, head, result, ["scale.md", "scale.png"])
    console.print(
        f"written {out}/scale.record.json, scale.md, scale.png"
        + (f"; scale added to {added}" if added else "")
    )
    if errors:
        console.print(f"[red]{errors} failed calls[/]")
    for f, tools in missed.items():
        unsure = [t for t in tools if t in result["targets"][f]["interval_includes_limit"]]
        console.print(
            f"[red]MISSED[/] at {f}x (p95 > {TARGETS[int(f)]}x the 1x figure): "
            + ", ".join(tools)
            + (
                f" (the 95 % interval still includes the target for: {', '.join(unsure)})"
                if unsure
                else ""
            )
        )
    return code


def add_to_bench(where: Path, scale: ScaleFigures) -> Path:
    """Put the per-factor p50/p95 into the bench record's summary (its header kept)."""
    path = locate(where, "bench")
    record = read_record(path)
    summary = BenchSummary.model_validate(record.body)
    summary.scale = {
        f: {t: {"p50_ms": r["p50_ms"], "p95_ms": r["p95_ms"]} for t, r in rows.items()}
        for f, rows in scale.items()
    }
    return write_record(path.parent, record.header, summary, record.files)
