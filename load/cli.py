"""`ocm load` (and `ocm bench`): load profiles against a loopback MCP server, SLO checks, the bench.

  run       one profile (latency | paced | saturation | parallel); starts the reference server
            with all workers unless --url names a running loopback server or --target a
            server to start over stdio (served to locust through a loopback HTTP proxy)
  slo       check recorded statistics (latency.jsonl) against load/slo.yaml
  aa-spread the run-to-run spread of the calibrated bars over bench folders of unchanged code
            (load/aa_spread.py): exit 1 when a bar sits too near its A/A readings
  bench     the whole `make bench` sequence (see load/bench.py); with --base REV the
            regression verdict against that revision instead (load/against_base.py)

Every call ends within --call-timeout (a call without a complete reply by then is a failed
call), the warm-up within --warm-up-timeout, and the locust run within its time plus a fixed
margin, so a hung tool never hangs the run; over all of it (after the server started) runs
--deadline: whatever still runs then is stopped and load.record.json is written with status
cut_short, naming what it was doing and what was not done (exit 2). The warm-up names only
the tools whose own call failed or went unanswered; when the server stops answering
altogether after one, the run is not started (exit 2).

Exit codes: 0 every target met, 1 a target missed, 2 the run itself failed, was aborted after
the warm-up or was cut short at --deadline.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from load.client import WARM_UP_DEADLINE_S
from load.profiles import LocustProfile, SaturationProfile, load_profiles
from load.safety import NotLoopbackError, require_loopback
from load.slo import evaluate, load_slo, miss_table
from load.stdio_proxy import STDIO_PREFIX
from ocm_common.cli_errors import usage_error
from ocm_common.durations import duration_arg
from ocm_common.latency_records import RECORDS_FILE, read_records
from ocm_common.launcher import running_server
from ocm_common.mcp_http import CALL_DEADLINE_S
from ocm_common.run_record import Clock, Status, header, write_record
from reference_server.config import default_http_workers

if TYPE_CHECKING:
    from load.bench import BenchSteps


def _run(args: argparse.Namespace) -> int:
    clock = Clock()
    profiles = load_profiles()
    out = Path(args.out or f"reports/load/{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    workers = args.server_workers or default_http_workers()
    url = args.url
    if args.target:
        if args.url:
            print("give --url or --target, not both", file=sys.stderr)
            return 2
        if not args.target.startswith(STDIO_PREFIX):
            url = args.target  # an HTTP URL, as --url
    if url:
        require_loopback(url)

    def go(url: str) -> tuple[int, dict[str, Any], Status | None]:
        """The profile's exit code, its summary (the body of the load record) and a status
        other than the exit code's (cut_short)."""
        if profiles[args.profile].kind == "parallel":
            from load.parallel import run_parallel

            def factory(env: dict[str, str]):  # type: ignore[no-untyped-def]
                return running_server(workers=1, env=env)

            report = run_parallel(factory, healthy_url=url, profile=profiles.parallel)
            print(report.table())
            return (0 if report.passed else 1), report.result().model_dump(mode="json"), None
        from load.run import run_profile

        settings: LocustProfile | SaturationProfile = profiles.locust_settings(args.profile)
        if isinstance(settings, LocustProfile):
            settings = settings.model_copy(
                update={
                    k: v
                    for k, v in {
                        "users": args.users,
                        "rate": args.rate,
                        "time_s": args.time,
                    }.items()
                    if v is not None
                }
            )
        elif args.time is not None:
            settings = settings.model_copy(
                update={"step_time_s": max(1.0, args.time / len(settings.steps))}
            )
        run = run_profile(
            args.profile,
            url,
            out,
            settings,
            workers=args.workers,
            mix=args.mix,
            allow_writes=args.allow_writes,
            slo_file=Path(args.slo) if args.slo else None,
            call_deadline_s=args.call_timeout,
            warm_up_deadline_s=args.warm_up_timeout,
            deadline_s=args.deadline,
        )
        print(f"records and locust CSV/HTML: {out}")
        status: Status | None = "cut_short" if run.cut_short else None
        return run.exit_code, {"profile": args.profile, **run.summary}, status

    def recorded(url: str, target: str | None = None) -> int:
        code, body, status = go(url)
        settings = {
            k: getattr(args, k)
            for k in (
                "profile",
                "users",
                "rate",
                "time",
                "workers",
                "mix",
                "slo",
                "allow_writes",
                "call_timeout",
                "warm_up_timeout",
                "deadline",
            )
        }
        head = header(
            "load",
            clock,
            code,
            target=target or url,
            settings=settings | {"server": workers},
            status=status,
        )
        write_record(out, head, body, [RECORDS_FILE] if (out / RECORDS_FILE).exists() else [])
        return code

    if url:
        return recorded(url)
    if args.target:
        from load.stdio_proxy import serving

        print(f"serving {args.target} on a loopback port through fastmcp's proxy ...")
        try:
            with serving(args.target, log=out / "stdio-proxy.log") as proxy_url:
                return recorded(proxy_url, args.target)
        except (RuntimeError, TimeoutError, ValueError) as exc:
            print(f"the stdio target did not start: {exc}", file=sys.stderr)
            return 2
    print(f"starting the reference server ({workers} workers) on a free loopback port ...")
    with running_server(workers=workers) as url:
        return recorded(url)


def _slo(args: argparse.Namespace) -> int:
    records = read_records(Path(args.records))
    if args.profile:
        records = [r for r in records if r.profile == args.profile]
    if not records:
        print(f"no latency records in {args.records}", file=sys.stderr)
        return 2
    misses = evaluate(records, load_slo(Path(args.slo) if args.slo else None))
    print(miss_table(misses))
    return 1 if misses else 0


def build_parser(prog: str = "ocm load") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one load profile")
    run.add_argument(
        "--profile",
        choices=load_profiles().of_kind("locust", "saturation", "parallel"),
        default="latency",
        help="an entry of load/profiles.yaml (LOAD_PROFILES: another file)",
    )
    run.add_argument("--url", help="a running loopback MCP endpoint (default: start one)")
    run.add_argument(
        "--target",
        help="stdio:<command line> (a server started over stdio, proxied to a loopback HTTP "
        "port) or a loopback http(s)://.../mcp URL (as --url)",
    )
    run.add_argument(
        "--call-timeout",
        type=duration_arg,
        default=CALL_DEADLINE_S,
        help=f"a call without a complete reply by then has failed (default {CALL_DEADLINE_S:g}s)",
    )
    run.add_argument(
        "--warm-up-timeout",
        type=duration_arg,
        default=WARM_UP_DEADLINE_S,
        help=f"the whole warm-up's deadline (default {WARM_UP_DEADLINE_S:g}s)",
    )
    run.add_argument(
        "--deadline",
        type=duration_arg,
        help="the run's overall deadline once the server is up (warm-up, locust, results); "
        "then it is stopped and recorded as cut_short, exit 2 (default: the warm-up timeout "
        "+ the profile's time + locust's stop timeout + 60 s)",
    )
    run.add_argument("--users", type=int)
    run.add_argument("--rate", type=float, help="total calls/s (paced)")
    run.add_argument("--time", type=duration_arg, help="how long: 20s, 1m30s, 2h or bare seconds")
    run.add_argument(
        "--workers", type=int, default=0, help="locust worker processes (0: one process)"
    )
    run.add_argument(
        "--server-workers", type=int, default=0, help="default: the server's (two per core)"
    )
    run.add_argument("--out", help=f"directory for {RECORDS_FILE}, locust CSV and HTML")
    run.add_argument(
        "--mix",
        default="golden",
        help="task mix: golden (the reference's scenarios), examples:<file> (known-good "
        "arguments per tool, any server) or schema (generated from each tool's inputSchema)",
    )
    run.add_argument("--slo", help="the SLO file to judge against (default load/slo.yaml)")
    run.add_argument(
        "--allow-writes",
        action="store_true",
        help="schema mix: also call tools that do not say they are read-only",
    )
    slo = sub.add_parser("slo", help="check recorded statistics against the SLO file")
    slo.add_argument("--records", required=True)
    slo.add_argument("--profile")
    slo.add_argument("--slo")
    spread = sub.add_parser(
        "aa-spread", help="A/A spread of the calibrated bars over benches of unchanged code"
    )
    spread.add_argument("folders", nargs="+", type=Path, help="bench folders (reports/bench/<ts>)")
    spread.add_argument("--slo", help="the SLO file whose bars are checked (default load/slo.yaml)")
    spread.add_argument("--recorded", default="", help="what the runs were, for the yaml block")
    bench = sub.add_parser("bench", help="the full benchmark (make bench)")
    bench.add_argument("--out-root", default="reports")
    bench.add_argument(
        "--base", help="a git revision: judge the working tree against it (make bench BASE=)"
    )
    bench.add_argument(
        "--rounds", type=int, default=0, help="with --base: calls per tool and side (default 100)"
    )
    bench.add_argument(
        "--conditions",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --base: also judge both sides under the concurrency conditions (delay on "
        "both paths, a cheap call beside slow ones, calls near the whole-tool budget)",
    )
    bench.add_argument(
        "--condition-rounds",
        type=int,
        default=0,
        help="with --base: calls per tool and side under each condition (default 20)",
    )
    bench.add_argument(
        "--mix",
        default="golden",
        help="with --base: the task mix (golden, or examples:<file> such as the distinct-query "
        "mix, each of its calls made once per side)",
    )
    bench.add_argument(
        "--saturation",
        action="store_true",
        help="with --base: also the saturation profile on each side, one side at a time in "
        "ABBA order, the same worker count on both (load/saturation_pair.py)",
    )
    bench.add_argument(
        "--saturation-pairs",
        type=int,
        default=0,
        help="with --saturation: working/base pairs of runs (default 2)",
    )
    parser.set_defaults(func=dispatch)
    return parser


def dispatch(args: argparse.Namespace) -> int:
    """Run the parsed subcommand (`args.command`); a non-loopback target is exit 2. The bench
    takes the eval harness's steps from `args.bench_steps` (a factory `ocm bench` sets)."""
    factory = getattr(args, "bench_steps", None)
    steps: BenchSteps | None = factory() if args.command == "bench" and factory else None
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "slo":
            return _slo(args)
        if args.command == "aa-spread":
            from load.aa_spread import main as aa_spread

            return aa_spread(
                args.folders, load_slo(Path(args.slo) if args.slo else None), args.recorded
            )
        if args.base:
            from load.against_base import ROUNDS, run_against_base
            from load.base_conditions import CONDITION_ROUNDS
            from load.saturation_pair import PAIRS

            return run_against_base(
                args.base,
                Path(args.out_root),
                rounds=args.rounds or ROUNDS,
                conditions=args.conditions,
                condition_rounds=args.condition_rounds or CONDITION_ROUNDS,
                mix=args.mix,
                saturation_pairs=(args.saturation_pairs or PAIRS) if args.saturation else 0,
                render_report=steps.render_report if steps else None,
            )
        from load.bench import run_bench

        if steps is None:
            return usage_error(
                "the full bench runs the golden eval and the gate too: run it as `ocm bench` "
                "(make bench), which gives it the eval harness's steps"
            )
        return run_bench(Path(args.out_root), steps)
    except NotLoopbackError as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; servers stopped", file=sys.stderr)
        return 130
