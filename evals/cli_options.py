"""What every ``python -m evals`` command shares: the target and output options (argparse
parent parsers), the UTC timestamp of a default report directory, and reading a bare
configuration name as the in-process reference server in that configuration."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evals.steps import RunRequest

TARGET_HELP = (
    "'inprocess[:name,key=value,...]' (the reference server in a named configuration with "
    "Settings overrides), 'stdio:<command line>' or 'http(s)://host:port/mcp' (bearer token "
    "from EVALS_BEARER_TOKEN)"
)


def timestamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def spec(text: str) -> str:
    """A bare configuration name (``keyword``) means that configuration of the in-process
    reference server."""
    return text if ":" in text or text == "inprocess" else f"inprocess:{text}"


def target_parent(*, default: str | None = "inprocess") -> argparse.ArgumentParser:
    """``--target``: one backend, in the spec form every command reads."""
    parent = argparse.ArgumentParser(add_help=False)
    if default is None:
        parent.add_argument("--target", required=True, help=TARGET_HELP)
    else:
        parent.add_argument("--target", default=default, help=f"{TARGET_HELP}; default: {default}")
    return parent


def output_parent(what: str, default_dir: str) -> argparse.ArgumentParser:
    """``--out``: where the command writes ``what``; by default ``default_dir/<UTC timestamp>``
    (or ``default_dir`` itself when it names a fixed directory)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--out", default=None, help=f"directory for {what} (default: {default_dir})"
    )
    return parent


def out_dir(value: str | None, default_root: str) -> Path:
    """The ``--out`` directory, or ``default_root/<UTC timestamp>``."""
    return Path(value) if value else Path(default_root) / timestamp()


def run_request(args: argparse.Namespace, *, ablation: bool) -> RunRequest:
    """The run request the `run` and `compare` options describe."""
    from evals.run.runner import RunOptions
    from evals.steps import RunRequest

    return RunRequest(
        options=RunOptions(
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            ablation=ablation,
            depth=args.depth,
            disabled_checks=frozenset(args.disable_check or ()),
            ragas=not args.no_ragas,
            llm=False if args.no_llm else None,
        ),
        golden=args.golden,
        only=tuple(args.only or ()),
        tool_map=tuple(getattr(args, "tool_map", None) or ()),
        quiet=args.quiet,
    )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """How scenarios are run: shared by ``run`` and ``compare`` (which runs two targets)."""
    parser.add_argument(
        "--golden",
        default="golden",
        type=Path,
        help="golden scenario directory or file (default: golden)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=4, help="concurrent tool calls (default: 4)"
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="per-call timeout in seconds (default: 30)"
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=10,
        help="result depth for retrieval metrics: n_results/top_k raised to this (default: 10)",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="ID_OR_TAG",
        help="run only scenarios with this id or tag (repeatable)",
    )
    parser.add_argument(
        "--disable-check",
        action="append",
        metavar="NAME",
        help="switch a check off by name, e.g. schema_valid (repeatable)",
    )
    parser.add_argument("--no-ragas", action="store_true", help="skip ragas metrics")
    parser.add_argument(
        "--no-llm",
        action="store_true",
        help="skip LLM-judged ragas metrics even when OPENAI_API_KEY is set",
    )
    parser.add_argument("--quiet", action="store_true", help="do not print each failed check")
    parser.add_argument(
        "--tool-map",
        action="append",
        metavar="GOLDEN=THEIRS|FILE",
        help="call a golden tool by the target's own name (pairs, comma-separated, repeatable, "
        "or a YAML/JSON {golden: theirs} file); the run log keeps the golden names",
    )
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="a backend that serves only some of the golden tools: their scenarios are not run, "
        "and run (exit 0, not 3), gate and compare judge the tools it serves and list the rest "
        "as not served",
    )
