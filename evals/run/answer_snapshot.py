"""Answer snapshots: every scenario's call recorded against the in-process reference server,
so a refactoring can show that no answer changed.

``record`` calls each scenario once (the golden set plus a seeded derived sample), in the
gate's settings and one named configuration, and writes one JSON line per call: the scenario
id, the tool, the arguments, and the ``structuredContent`` (or the error text) with wall-clock
values removed (keys ending in ``_ms`` and timestamps with a time of day), since those differ
between any two runs. ``--compare BEFORE AFTER`` prints the calls whose answers differ, with a
short diff, and their count; it exits 1 when any differ.

    ocm snapshot --config mode=keyword --out build/snap/before-keyword.jsonl
    ocm snapshot --compare build/snap/before-keyword.jsonl build/snap/after-keyword.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from evals.run.outcome import Overrides
from ocm_common.json_types import Arguments

GATE_SETTINGS: Overrides = {
    "as_of_date": "2026-11-25",
    "sql_timeout_ms": 5000,
    "vector_timeout_ms": 5000,
    "tool_timeout_ms": 10000,
}
CALL_TIMEOUT_S = 30.0
DERIVED_PER_FAMILY = 64
DERIVED_SEED = 1
WALL_CLOCK_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")


class SnapshotRecord(TypedDict):
    """One call of a snapshot (a line of its JSONL file): the case and the arguments it sent,
    then the answer, or the tool error's text, or the target's error."""

    id: str
    tool: str
    args: Arguments
    asked: NotRequired[Arguments]  # the arguments sent, when ids came from the backend's search
    target_error: NotRequired[str]
    is_error: NotRequired[bool]
    text: NotRequired[str]
    answer: NotRequired[Any]  # the structured answer without its wall-clock fields


def without_wall_clock(value: Any) -> Any:
    """``value`` with every field that measures the run rather than the answer removed:
    keys ending in ``_ms`` (durations, start offsets) and strings holding a time of day
    (a look-up's own timestamp). Plain dates stay: they are facts of the corpus."""
    if isinstance(value, dict):
        return {
            key: without_wall_clock(item)
            for key, item in value.items()
            if not key.endswith("_ms")
            and not (isinstance(item, str) and WALL_CLOCK_TIME.match(item))
        }
    if isinstance(value, list):
        return [without_wall_clock(item) for item in value]
    return value


def _derived_cases(folder: Path) -> Path:
    """The seeded derived sample under ``folder``, derived once and reused, so the before and
    after snapshots call the same cases."""
    if not any(folder.glob("*.jsonl")):
        from evals.derive.build import derive, write
        from evals.derive.corpus import Corpus

        write(derive(Corpus(), per_family=DERIVED_PER_FAMILY, seed=DERIVED_SEED), folder)
    return folder


async def _record(config: str, case_dirs: Sequence[Path], out: Path) -> int:
    from evals.run.id_lookup import answers_of, resolve_args
    from evals.run.scenario import load_scenarios
    from evals.run.targets import TargetError, inprocess_target, parse_overrides

    overrides = {**GATE_SETTINGS, **parse_overrides(config)} if config else dict(GATE_SETTINGS)
    scenarios = [s for folder in case_dirs for s in load_scenarios(folder)]
    out.parent.mkdir(parents=True, exist_ok=True)
    async with inprocess_target(overrides, CALL_TIMEOUT_S) as target:
        with out.open("w", encoding="utf-8") as fh:
            for scenario in scenarios:
                record: SnapshotRecord = {
                    "id": scenario.id,
                    "tool": scenario.tool,
                    "args": scenario.args,
                }
                try:
                    args = await resolve_args(
                        answers_of(target.call_tool), scenario.lookups, dict(scenario.args)
                    )
                    if args is None:  # its id lookup found nothing: recorded as such
                        record["text"] = "the scenario's id lookup found nothing"
                        fh.write(json.dumps(record, sort_keys=True) + "\n")
                        continue
                    if scenario.lookups:
                        record["asked"] = args  # with the ids its search gave
                    outcome = await target.call_tool(scenario.tool, args)
                except TargetError as exc:
                    record["target_error"] = str(exc)
                else:
                    record["is_error"] = outcome.is_error
                    if outcome.is_error or outcome.structured is None:
                        record["text"] = _without_error_id(outcome.text)
                    else:
                        record["answer"] = without_wall_clock(outcome.structured)
                fh.write(json.dumps(record, sort_keys=True) + "\n")
    return len(scenarios)


ERROR_ID = re.compile(r"error id [0-9a-f]{12}")


def _without_error_id(text: str) -> str:
    """An internal error's id is new on every call; the message around it is the answer."""
    return ERROR_ID.sub("error id <id>", text)


def read_snapshot(path: Path, ignore: Iterable[str] = ()) -> dict[str, SnapshotRecord]:
    """Records by scenario id (the arguments join the key, so a changed case never pairs);
    answer fields named in ``ignore`` are left out (a field added on purpose)."""
    records: dict[str, SnapshotRecord] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if "answer" in record and ignore:
                record["answer"] = _without(record["answer"], frozenset(ignore))
            records[f"{record['id']} {json.dumps(record['args'], sort_keys=True)}"] = record
    return records


def _without(value: Any, names: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, names) for k, v in value.items() if k not in names}
    if isinstance(value, list):
        return [_without(v, names) for v in value]
    return value


def changed_answers(
    before: dict[str, SnapshotRecord], after: dict[str, SnapshotRecord]
) -> list[tuple[str, list[str]]]:
    """(key, short unified diff) of every call whose record differs, or is on one side only."""
    changes = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        diff = list(
            difflib.unified_diff(_lines(old), _lines(new), "before", "after", n=1, lineterm="")
        )
        changes.append((key, diff))
    return changes


def _lines(record: SnapshotRecord | None) -> list[str]:
    if record is None:
        return ["<absent>"]
    return json.dumps(record, sort_keys=True, indent=1).splitlines()


def _print_changes(changes: Iterable[tuple[str, list[str]]], diff_lines: int) -> int:
    count = 0
    for key, diff in changes:
        count += 1
        print(f"== {key}")
        shown = diff[:diff_lines]
        print("\n".join(shown))
        if len(diff) > len(shown):
            print(f"... ({len(diff) - len(shown)} more diff lines)")
    return count


def build_parser(prog: str = "ocm snapshot") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument(
        "--config",
        default="",
        help="a named configuration and/or Settings overrides on top of the gate's settings "
        "(mode=keyword, faults.sql_fail=true); default: the default configuration",
    )
    parser.add_argument("--out", type=Path, help="snapshot file to write (JSON lines)")
    parser.add_argument("--golden", type=Path, default=Path("golden"))
    parser.add_argument(
        "--derived",
        type=Path,
        default=Path("build/answer-snapshot/derived"),
        help=f"derived case folder (derived here with --per-family {DERIVED_PER_FAMILY} "
        f"--seed {DERIVED_SEED} when empty)",
    )
    parser.add_argument("--no-derived", action="store_true", help="golden scenarios only")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--diff-lines", type=int, default=30, help="diff lines shown per call")
    parser.add_argument(
        "--ignore-field",
        action="append",
        default=[],
        metavar="NAME",
        help="leave answer fields of this name out of the comparison (repeatable)",
    )
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Record a snapshot (`--out`), or compare two (`--compare`: exit 1 when answers differ)."""
    from ocm_common.cli_errors import usage_error

    if args.compare:
        before, after = (read_snapshot(path, args.ignore_field) for path in args.compare)
        count = _print_changes(changed_answers(before, after), args.diff_lines)
        print(f"{count} changed answers of {len(before.keys() | after.keys())} calls")
        return 1 if count else 0
    if args.out is None:
        return usage_error("--out is required unless --compare is given")
    folders = [args.golden] + ([] if args.no_derived else [_derived_cases(args.derived)])
    total = asyncio.run(_record(args.config, folders, args.out))
    print(f"{total} calls recorded in {args.out}")
    return 0
