"""How golden scenarios are run, as the `run` and `compare` commands take it: the options
(`add_run_options`) and the RunRequest they describe (`run_request`). Kept apart from
cli_options.py, which the run side imports too: this one reaches evals/steps.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from evals.run.runner import RunOptions
from evals.steps import RunRequest


def run_request(args: argparse.Namespace, *, ablation: bool) -> RunRequest:
    """The run request the `run` and `compare` options describe."""
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
