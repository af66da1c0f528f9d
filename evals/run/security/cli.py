"""The ``security`` and ``contract`` subcommands of ``ocm`` (parsers and
commands), kept here so the main command line only registers them."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from evals.cli_options import out_dir, output_parent, spec, target_parent
from evals.conformance.grading import table_text
from evals.console import log_console
from ocm_common.run_record import Clock, header

if TYPE_CHECKING:
    from evals.run.security.findings import ReachRow

SECURITY_HELP = (
    "security checks against any MCP target: tool poisoning, cross-tool shadowing, rug pull, "
    "secret leaks, path escapes (absolute, ../, ~, $HOME, ${VAR}, encoded, symlinked), what "
    "tools can be made to do (run commands, fetch caller-chosen URLs, send to recipients "
    "nobody named), unbounded work, what every answer says (instructions to the model, "
    "internals, destinations nobody named, size, text that is not UTF-8), files a call writes, "
    "HTTP transport rules; every tool reached with schema-valid arguments, every enum value"
)
SECURITY_DESCRIPTION = (
    SECURITY_HELP + ". Read-only tools only unless --allow-writes, loopback targets only "
    "unless --allow-remote, every call and the whole run bounded in time. Writes "
    "security.json and security.md (default: reports/security/<UTC timestamp>)."
)
SECURITY_EXIT = (
    "exit status: 0 no finding at error level; 1 findings at error level; 2 harness error; "
    "3 no family made a call (every tool skipped) and nothing was found."
)


def _families_text() -> str:
    from evals.run.security.registry import select

    return "\n".join(
        f"  {f.name} ({f.phase}): {' '.join(f.doc.split()).split('. ')[0].rstrip('.')}. "
        f"Checks: {', '.join(f.checks)}"
        for f in select(None)
    )


def cmd_security(args: argparse.Namespace) -> int:
    from evals.run.security.report import write_report
    from evals.run.security.runner import Options, run_security

    options = Options(
        allow_writes=args.allow_writes,
        allow_remote=args.allow_remote,
        call_timeout_s=args.call_timeout,
        deadline_s=args.deadline,
        memory_limit_mb=args.memory_limit,
        max_result_bytes=args.max_result_bytes,
        sweep_limit=args.sweep_limit,
        families=tuple(args.family or ()),
    )
    clock = Clock()
    report = asyncio.run(run_security(args.target, options))
    out = out_dir(args.out, "reports/security")
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
        console.print(f"  skipped {s.tool}: {s.reason}", soft_wrap=True)
    for line in reach_lines(report):
        console.print(line, soft_wrap=True)
    for name in report.families_without_calls:
        console.print(f"  {name}: made no calls, so its checks checked nothing (not 0 findings)")
    if report.calls == 0 and report.skipped:
        console.print(f"  0 calls: {report.skipped_line()}", soft_wrap=True)
    console.print(
        f"security: {len(report.errors)} error(s), {len(report.findings)} finding(s), "
        f"{report.calls} call(s); report {paths['markdown']} (and security.json)",
        soft_wrap=True,
    )
    return report.exit_code


def reach_lines(report: Any) -> list[str]:
    """Per tool, the probes that reached it (and those that could not, with the reason)."""
    by_tool: dict[str, list[ReachRow]] = {}
    for row in report.reach:
        by_tool.setdefault(row["tool"], []).append(row)
    lines = []
    for tool, rows in by_tool.items():
        probes = ", ".join(
            f"{r['probe']} {r['reached'] + r['refused']}/{r['reached'] + r['refused'] + r['unreached']}"
            for r in rows
        )
        lines.append(f"  {tool}: probes that reached it: {probes}")
        for r in rows:
            for reason in r["could_not_reach"]:
                lines.append(f"    {r['probe']}: {reason}")
    return lines


def cmd_contract(args: argparse.Namespace) -> int:
    from evals.run.contract_live import diff_targets, write_report

    clock = Clock()
    diff = asyncio.run(diff_targets(spec(args.a), spec(args.b), timeout_s=args.timeout))
    out = out_dir(args.out, "reports/contract")
    target = f"{spec(args.a)} -> {spec(args.b)}"
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
        parents=[
            target_parent(default=None),
            output_parent("security.json and security.md", "reports/security/<UTC timestamp>"),
        ],
        help=SECURITY_HELP + " (exit 0/1/2/3)",
        description=SECURITY_DESCRIPTION,
        epilog=f"{SECURITY_EXIT}\n\nfamilies (--family):\n{_families_text()}\n\n"
        f"the one grading table (evals/conformance/grading.py):\n{table_text()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sec.add_argument(
        "--allow-writes",
        action="store_true",
        help="also call tools that may change state (no readOnlyHint: true, or destructiveHint)",
    )
    sec.add_argument("--allow-remote", action="store_true", help="allow a non-loopback HTTP target")
    sec.add_argument(
        "--family",
        action="append",
        metavar="NAME",
        help="only this check family (repeatable; the families are listed below)",
    )
    sec.add_argument("--call-timeout", type=float, default=10.0, help="seconds per call (10)")
    sec.add_argument("--deadline", type=float, default=600.0, help="seconds for the run (600)")
    sec.add_argument(
        "--memory-limit", type=float, default=256.0, help="MB a call may grow a stdio server (256)"
    )
    sec.add_argument(
        "--max-result-bytes",
        type=int,
        default=1_000_000,
        help="bytes an answer may have before result_too_large (1000000)",
    )
    sec.add_argument(
        "--sweep-limit",
        type=int,
        default=40,
        help="schema-valid boundary calls per tool, every enum value first (40)",
    )
    sec.set_defaults(func=cmd_security)

    con = sub.add_parser(
        "contract",
        parents=[
            output_parent("contract.json and contract.md", "reports/contract/<UTC timestamp>")
        ],
        help="contract diff of two live targets' tool surfaces (exit 1 on a breaking change)",
        description="Contract diff of two live targets' tool surfaces (titles, descriptions, "
        "annotations, schemas). Exit 0 no breaking change, 1 breaking changes, 2 harness error.",
    )
    con.add_argument("--a", required=True, help="target A (spec or configuration name)")
    con.add_argument("--b", required=True, help="target B (as --a)")
    con.add_argument("--timeout", type=float, default=60.0, help="seconds to connect and list")
    con.set_defaults(func=cmd_contract)
