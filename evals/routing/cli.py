"""`ocm routing --catalogue SPEC... --cases FILE` and `ocm
routing-cases --out FILE` (the source-derived cases written once, since deriving takes a
minute)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

EXIT_OK, EXIT_FAIL, EXIT_HARNESS = 0, 1, 2
FLOORS_HEADER = """\
# Routing floors the gate applies (`ocm routing ... --gate`): step name -> mode -> metric ->
# minimum share of cases, for the case set named under `cases` (another set is not judged: the
# gate exits 2 and says so). `top1`/`top3`/`mrr` are accepting (any tool the tools' specs say
# answers the case counts, evals/routing/acceptable.py); `strict_*` count only the case's own
# tool. Written by `make routing-floors` one point under the values measured, so a description
# or ranking change that loses routing accuracy fails the gate.
"""


def cmd_routing(args: argparse.Namespace) -> int:
    from evals.routing.cases import load_cases
    from evals.routing.report import write
    from evals.routing.run import evaluate, record_body_of
    from ocm_common.machine import one_line
    from ocm_common.run_record import Clock, header, write_record
    from tool_search.sources import SourceError

    clock = Clock()
    try:
        cases = load_cases(args.cases, per_family=args.per_family, seed=args.seed)
        record = evaluate(
            args.catalogue,
            cases,
            modes=args.mode or ("hybrid", "keyword", "semantic"),
            distractors=args.distractors,
            seed=args.seed,
            llm=args.llm_host,
            progress=print,
        )
    except (SourceError, OSError, ValueError) as exc:
        print(f"error: {exc}")
        return EXIT_HARNESS
    record["machine_line"] = one_line(record["machine"])
    failures, not_applied = write(record, Path(args.out), Path(args.floors))
    if args.write_floors:
        from evals.routing.report import measured_floors

        Path(args.write_floors).write_text(
            FLOORS_HEADER + yaml.safe_dump(measured_floors(record), sort_keys=False),
            encoding="utf-8",
        )
        print(f"floors written: {args.write_floors}")
    for step in record["steps"]:
        body = step["modes"].get("hybrid", next(iter(step["modes"].values())))
        o, st = body["overall"], body["strict"]
        print(
            f"{step['name']:>20} {step['tools']:>5} tools  top-1 {o['top1']:.3f}  top-3 {o['top3']:.3f}  MRR {o['mrr']:.3f}"
            f"  strict {st['top1']:.3f} / {st['top3']:.3f} / {st['mrr']:.3f}  ({o['cases']} cases)"
        )
        if "llm_host" in step:
            print(
                f"{'':>20} LLM host: {step['llm_host'].get('skipped') or step['llm_host']['overall']}"
            )
    for failure in failures:
        print(f"floor failed: {failure}")
    if not_applied:
        print(f"floors not applied: {not_applied}")
    print(f"report: {args.out}/routing.html")
    if args.gate and not_applied:
        code = EXIT_HARNESS  # nothing judged the search: neither red nor green
    else:
        code = EXIT_FAIL if failures and args.gate else EXIT_OK
    settings = {k: getattr(args, k) for k in ("cases", "distractors", "mode", "seed", "gate")}
    head = header("routing", clock, code, target=" + ".join(args.catalogue), settings=settings)
    write_record(
        Path(args.out),
        head,
        record_body_of(record, failures, not_applied),
        ["routing.json", "routing.md", "routing.html"],
    )
    return code


def cmd_routing_cases(args: argparse.Namespace) -> int:
    from evals.routing.cases import load_cases, write_jsonl

    cases = load_cases(args.cases, per_family=args.per_family, seed=args.seed)
    write_jsonl(cases, Path(args.out))
    print(f"{len(cases)} cases -> {args.out}")
    return EXIT_OK


def cmd_routing_propose(args: argparse.Namespace) -> int:
    """A tool-definition file of the source's tools with proposed descriptions swapped in."""
    import json

    import yaml

    from tool_search.sources import read_sources

    proposed = yaml.safe_load(Path(args.descriptions).read_text(encoding="utf-8")) or {}
    catalogue = read_sources([args.source])[0]
    unknown = sorted(set(proposed) - {t.name for t in catalogue.tools})
    if unknown:
        print(f"error: no tool named {unknown} in {args.source}")
        return EXIT_HARNESS
    tools = [
        {
            "name": t.name,
            "title": t.title,
            "description": proposed.get(t.name, t.description),
            "inputSchema": t.input_schema,
        }
        for t in catalogue.tools
    ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"server": catalogue.server, "tools": tools}, indent=1) + "\n")
    print(f"{len(proposed)} descriptions replaced -> {out}")
    return EXIT_OK


def cmd_routing_tune(args: argparse.Namespace) -> int:
    from evals.routing.tune import main

    return main(args.catalogue, args.cases, args.distractors, args.seed, Path(args.out))


def add_parsers(sub: Any) -> None:
    run = sub.add_parser("routing", help="how often tool search ranks the right tool first")
    run.add_argument(
        "--catalogue",
        action="append",
        required=True,
        metavar="SPEC",
        help="catalogue spec (as tool_search serve --from); repeat: each adds a scale step",
    )
    run.add_argument(
        "--cases",
        default="sources",
        help="cases: sources (golden + derived + seed003), golden, derived, seed003, a .yaml or .jsonl file",
    )
    run.add_argument(
        "--distractors", type=int, default=0, help="add a last step with N generated tools"
    )
    run.add_argument("--mode", action="append", choices=("hybrid", "keyword", "semantic"))
    run.add_argument("--per-family", type=int, default=20, help="derived cases sampled per family")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--floors", default=str(Path(__file__).with_name("floors.yaml")))
    run.add_argument(
        "--llm-host",
        action="store_true",
        help="also let an OpenAI model pick among search's top 5 (skipped offline, with the reason)",
    )
    run.add_argument(
        "--gate",
        action="store_true",
        help="exit 1 when a floor is not met (2 when the floors were measured on other cases)",
    )
    run.add_argument(
        "--write-floors",
        metavar="FILE",
        help="write floors one point under this run's values, for these cases, to FILE",
    )
    run.add_argument("--out", default="reports/routing")
    run.set_defaults(func=cmd_routing)
    cases = sub.add_parser(
        "routing-cases", help="write the source-derived routing cases to a .jsonl file"
    )
    cases.add_argument("--cases", default="sources")
    cases.add_argument("--per-family", type=int, default=20)
    cases.add_argument("--seed", type=int, default=0)
    cases.add_argument("--out", required=True)
    cases.set_defaults(func=cmd_routing_cases)
    propose = sub.add_parser(
        "routing-propose", help="a tool-definition file with proposed descriptions swapped in"
    )
    propose.add_argument("--source", default="inprocess", help="catalogue spec whose tools to copy")
    propose.add_argument(
        "--descriptions", default=str(Path(__file__).with_name("proposed_descriptions.yaml"))
    )
    propose.add_argument("--out", required=True)
    propose.set_defaults(func=cmd_routing_propose)
    tune = sub.add_parser(
        "routing-tune",
        help="ranking variants chosen on one half of the cases, reported on the other",
    )
    tune.add_argument("--catalogue", action="append", required=True, metavar="SPEC")
    tune.add_argument("--cases", default="sources")
    tune.add_argument("--distractors", type=int, default=1000)
    tune.add_argument("--seed", type=int, default=0, help="seed of the split into halves")
    tune.add_argument("--out", default="reports/routing/tune.json")
    tune.set_defaults(func=cmd_routing_tune)
