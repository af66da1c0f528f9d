"""The ``security`` and ``contract`` subcommands of ``python -m evals`` (parsers and
commands), kept here so the main command line only registers them."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.console import log_console
from ocm_common.run_record import Clock, header


def _timestamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def _spec(text: str) -> str:
    """A bare configuration name (``keyword``) means that configuration of the in-process
    reference server, as for ``evals compare``."""
    return text if ":" in text or text == "inprocess" else f"inprocess:{text}"


def cmd_security(args: argparse.Namespace) -> int:
    from evals.run.security.report import write_report
    from evals.run.security.runner import Options, run_security

    options = Options(
        allow_writes=args.allow_writes,
        allow_remote=args.allow_remote,
        call_timeout_s=args.call_timeout,
        deadline_s=args.deadline,
        memory_limit_mb=args.memory_limit,
        families=tuple(args.family or ()),
    )
    clock = Clock()
    report = asyncio.run(run_security(args.target, options))
    out = Path(args.out) if args.out else Path("reports/security") / _timestamp()
    head = header("security", clock, report.exit_code, target=args.target, settings=vars(options))
    paths = write_report(report, out, head)
    console = log_console(stderr=False)
    if report.error:
        console.print(f"[red]security: harness error:[/] {report.error}")
    for f in report.findings:
        colour = "red" if f.level == "error" else "yellow"
        console.print(
            f"  [{colour}]{f.level}[/] {f.check} ({f.grade}) {f.tool or ''}: {f.message}",
            soft_wrap=True,
        )
    for s in report.skipped:
        console.print(f"  skipped {s.tool}: {s.reason}")
    console.print(
        f"security: {len(report.errors)} error(s), {len(report.findings)} finding(s), "
        f"{report.calls} call(s); report {paths['markdown']} (and security.json)"
    )
    return report.exit_code


def cmd_contract(args: argparse.Namespace) -> int:
    from evals.run.contract_live import diff_targets, write_report

    clock = Clock()
    diff = asyncio.run(diff_targets(_spec(args.a), _spec(args.b), timeout_s=args.timeout))
    out = Path(args.out) if args.out else Path("reports/contract") / _timestamp()
    target = f"{_spec(args.a)} -> {_spec(args.b)}"
    head = header(
        "contract", clock, diff.exit_code, target=target, settings={"timeout_s": args.timeout}
    )
    paths = write_report(diff, out, head)
    console = log_console(stderr=False)
    if diff.error:
        console.print(f"[red]contract: harness error:[/] {diff.error}")
    for line in diff.console_lines():
        console.print(line)
    console.print(
        f"contract: {diff.summary_line()}; report {paths['markdown']} (and contract.json)"
    )
    return diff.exit_code


def add_parsers(sub: Any) -> None:
    sec = sub.add_parser(
        "security",
        help="security checks against any MCP target: tool poisoning, rug pull, secret leaks, "
        "path escapes, unbounded work, HTTP transport rules (exit 0/1/2)",
    )
    sec.add_argument("--target", required=True, help="a target spec as for 'run --target'")
    sec.add_argument(
        "--out", default=None, help="report directory (default: reports/security/<ts>)"
    )
    sec.add_argument(
        "--allow-writes",
        action="store_true",
        help="also call tools that may change state (no readOnlyHint: true, or destructiveHint)",
    )
    sec.add_argument("--allow-remote", action="store_true", help="allow a non-loopback HTTP target")
    sec.add_argument(
        "--family", action="append", metavar="NAME", help="only this check family (repeatable)"
    )
    sec.add_argument("--call-timeout", type=float, default=10.0, help="seconds per call (10)")
    sec.add_argument("--deadline", type=float, default=600.0, help="seconds for the run (600)")
    sec.add_argument(
        "--memory-limit", type=float, default=256.0, help="MB a call may grow a stdio server (256)"
    )
    sec.set_defaults(func=cmd_security)

    con = sub.add_parser(
        "contract",
        help="contract diff of two live targets' tool surfaces (exit 1 on a breaking change)",
    )
    con.add_argument("--a", required=True, help="target A (spec or configuration name)")
    con.add_argument("--b", required=True, help="target B (as --a)")
    con.add_argument(
        "--out", default=None, help="report directory (default: reports/contract/<ts>)"
    )
    con.add_argument("--timeout", type=float, default=60.0, help="seconds to connect and list")
    con.set_defaults(func=cmd_contract)
