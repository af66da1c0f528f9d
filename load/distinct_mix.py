"""The distinct-query task mix: every tool's calls drawn from the derived cases, not repeated.

The golden mix is about 180 calls, repeated; the server's query-embedding cache then answers
half of them and every other per-process cache is warm. This mix is what clinicians' traffic
looks like instead: for each of the twelve tools, `per_tool` distinct argument sets, from the
derived cases (`ocm derive`) and the golden calls first, then, for tools whose
cases are fewer than that, more calls of the same shapes:

- free text (`query`, `q`, `question`): the golden mix's neutral lead-ins and tails
  (`taskmix.variants`), so each is a text the embedding cache has not seen;
- ids (`opa.get_section`, `source.passages`, `opa.freshness_probe`): every id the built index
  holds (OPA sections and documents, Dr. OFF passages), alone or two or three together;
- structured requests (`opa.program_lookup`, `opa.ipac_guidance`, `opa.clinical_tools`): the
  derived requests at every age, setting and option the schema allows, and the IPAC section
  headings as the specific item.

Seeded: the same inputs and seed give the same file. Each tool's list is shuffled, so any
stretch of it is a sample of the whole. The file is the examples format
(`{tool: [arguments, ...]}`, compact JSON), loaded with `--mix examples:<file>`; its statistics
go beside it (`<name>.stats.json`). Generated on demand under build/, never committed.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from pydantic import JsonValue

from load.taskmix import FREE_TEXT_ARGS, variants
from ocm_common.golden import GOLDEN_DIR, golden_calls

DEFAULT_CALLS = 30_000
# Arguments whose text a tool embeds or matches as words (the distinct-text count is an upper
# bound on the query embeddings the mix can make).
TEXT_ARGS = (*FREE_TEXT_ARGS, "specific_item", "condition", "tool_name", "program", "drug")
IPAC_TOPICS = ("reprocessing", "ppe", "hand_hygiene", "environmental")
IPAC_SETTINGS = ("office", "clinic", "procedure_room")
PROGRAM_QUERY_TYPES = (None, "intervals", "eligibility", "pathway", "referral")
CEP_FEATURES = (None, "algorithm", "calculator", "checklist")

# One call's arguments, as JSON (what the examples file holds per call)
Arguments = dict[str, JsonValue]
# The mix: {tool: [arguments, ...]}, the examples format
Mix = dict[str, list[Arguments]]


class ToolMixStats(TypedDict):
    """One tool's part of the mix: calls, distinct argument sets, how many came from the derived
    cases and golden calls (and how many those held), distinct texts."""

    calls: int
    distinct_arguments: int
    from_cases_and_golden: int
    cases_and_golden_available: int
    distinct_texts: int


class MixStats(TypedDict, total=False):
    """The mix's statistics (`<name>.stats.json`), in the order they are written; `bytes` is
    added when the file is."""

    seed: int
    per_tool_target: int
    tools: dict[str, ToolMixStats]
    calls: int
    distinct_arguments: int
    bytes: int


def canonical(args: Arguments) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class IndexIds:
    """The ids and headings the built index holds (read-only), for the id-shaped tools."""

    section_ids: list[str]
    document_ids: list[str]
    ipac_items: list[str]  # the equipment and procedures the IPAC sections name
    passage_ids: list[str]

    @classmethod
    def read(cls, index: Path) -> IndexIds:
        def rows(db: str, sql: str) -> list[str]:
            with sqlite3.connect(f"file:{index / db}?mode=ro", uri=True) as conn:
                return [str(r[0]) for r in conn.execute(sql)]

        return cls(
            section_ids=rows("opa.db", "SELECT section_id FROM opa_sections ORDER BY section_id"),
            document_ids=rows(
                "opa.db", "SELECT document_id FROM opa_documents ORDER BY document_id"
            ),
            ipac_items=ipac_items(
                rows("opa.db", "SELECT ipac FROM opa_sections WHERE ipac IS NOT NULL")
            ),
            passage_ids=rows("ohip.db", "SELECT chunk_id FROM off_passages ORDER BY chunk_id"),
        )


def ipac_items(blocks: list[str]) -> list[str]:
    items = {str(i) for block in blocks for i in json.loads(block).get("items") or []}
    return sorted(i for i in items if 0 < len(i.strip()) <= 200)


# ----------------------------------------------------------------------------- expansions
# Each yields more calls of a tool's shape, given its distinct originals; duplicates are dropped
# by the caller, so an expansion may repeat itself.

Expansion = Callable[[list[Arguments], IndexIds, random.Random], Iterator[Arguments]]


def text_variants(
    originals: list[Arguments], ids: IndexIds, rng: random.Random
) -> Iterator[Arguments]:
    """Each original's free text with a lead-in and a tail (variant k of every call, then k+1)."""
    texts = [(args, key) for args in originals for key in FREE_TEXT_ARGS if key in args]
    for k in range(1, len(variants("x"))):
        for args, key in texts:
            yield {**args, key: variants(str(args[key]))[k]}


def id_groups(pool: list[str], key: str, rng: random.Random) -> Iterator[Arguments]:
    """Every id alone (in a seeded order), then seeded pairs and triples."""
    alone = list(pool)
    rng.shuffle(alone)
    for one in alone:
        yield {key: [one]}
    while True:
        yield {key: rng.sample(pool, rng.choice((2, 3)))}


def section_reads(
    originals: list[Arguments], ids: IndexIds, rng: random.Random
) -> Iterator[Arguments]:
    """Every section of the index, then with its parent, children or document metadata."""
    options: tuple[Arguments, ...] = (
        {},
        {"include_children": True},
        {"include_parent": True},
        {"include_document_metadata": False},
    )
    for extra in options:
        order = list(ids.section_ids)
        rng.shuffle(order)
        for section_id in order:
            yield {"section_id": section_id, **extra}


def passage_reads(
    originals: list[Arguments], ids: IndexIds, rng: random.Random
) -> Iterator[Arguments]:
    """Dr. OFF passages and OPA sections by chunk id, alone and two or three together."""
    yield from id_groups(ids.passage_ids + ids.section_ids, "chunk_ids", rng)


def freshness_checks(
    originals: list[Arguments], ids: IndexIds, rng: random.Random
) -> Iterator[Arguments]:
    """Documents by id, alone and two or three together."""
    yield from id_groups(ids.document_ids, "document_ids", rng)


def program_questions(
    originals: list[Arguments], ids: IndexIds, rng: random.Random
) -> Iterator[Arguments]:
    """Each program asked about at every age and with every question type."""
    programs = sorted({str(args["program"]) for args in originals if "program" in args})
    for age in range(121):
        for program in programs:
            for query_type in PROGRAM_QUERY_TYPES:
                args: Arguments = {"program": program, "patient_age": age}
                if query_type:
                    args["query_type"] = query_type
                yield args


def ipac_questions(
    originals: list[Arguments], ids: IndexIds, rng: random.Random
) -> Iterator[Arguments]:
    """Every topic and setting, about each item the golden calls or IPAC sections name."""
    items = sorted(
        {str(a["specific_item"]) for a in originals if "specific_item" in a} | set(ids.ipac_items)
    )
    rng.shuffle(items)
    for item in [None, *items]:
        for topic in IPAC_TOPICS:
            for setting in IPAC_SETTINGS:
                args: Arguments = {"topic": topic, "setting": setting}
                if item:
                    args["specific_item"] = item
                yield args
                yield {**args, "include_checklists": False}


def cep_questions(
    originals: list[Arguments], ids: IndexIds, rng: random.Random
) -> Iterator[Arguments]:
    """Each CEP question with every feature type, with and without the tool's sections, for
    more results."""
    for n_results in (None, 10, 20):
        for feature in CEP_FEATURES:
            for sections in (False, True):
                for args in originals:
                    extra: Arguments = {"feature_type": feature} if feature else {}
                    if sections:
                        extra["include_sections"] = True
                    if n_results:
                        extra["n_results"] = n_results
                    yield {**args, **extra}


# One entry per tool: the tools of the mix are this mapping's keys (in name order).
EXPANSIONS: dict[str, Expansion] = {
    "adp.get": text_variants,
    "coverage.answer": text_variants,
    "odb.get": text_variants,
    "opa.clinical_tools": cep_questions,
    "opa.freshness_probe": freshness_checks,
    "opa.get_section": section_reads,
    "opa.ipac_guidance": ipac_questions,
    "opa.policy_check": text_variants,
    "opa.program_lookup": program_questions,
    "opa.search_sections": text_variants,
    "schedule.get": text_variants,
    "source.passages": passage_reads,
}
TOOLS: tuple[str, ...] = tuple(sorted(EXPANSIONS))


# ----------------------------------------------------------------------------- the mix


def originals_by_tool(cases: Path, golden: Path) -> Mix:
    """Each tool's distinct arguments: derived cases first, then golden calls, first seen kept."""
    seen: dict[str, dict[str, Arguments]] = {tool: {} for tool in TOOLS}
    for root in (cases, golden):
        for call in golden_calls(root):
            if call.tool in seen:
                seen[call.tool].setdefault(canonical(call.arguments), call.arguments)
    return {tool: list(by_key.values()) for tool, by_key in seen.items()}


def tool_calls(
    tool: str,
    originals: list[Arguments],
    ids: IndexIds,
    per_tool: int,
    rng: random.Random,
) -> tuple[list[Arguments], int]:
    """`per_tool` distinct calls (fewer only when the expansions run out), shuffled; and how
    many of them are originals."""
    if len(originals) >= per_tool:
        chosen = rng.sample(originals, per_tool)
        return chosen, per_tool
    keys = {canonical(a) for a in originals}
    chosen = list(originals)
    expansion = EXPANSIONS[tool]
    extra: list[Arguments] = []
    limit = 20 * per_tool  # candidates considered (the id groups never end)
    for n, args in enumerate(expansion(originals, ids, rng)):
        if n >= limit:
            break
        key = canonical(args)
        if key not in keys:
            keys.add(key)
            extra.append(args)
            if len(extra) >= 4 * (per_tool - len(originals)):
                break
    chosen += rng.sample(extra, min(len(extra), per_tool - len(originals)))
    rng.shuffle(chosen)
    return chosen, len(originals)


def distinct_texts(calls: Iterable[Arguments]) -> int:
    return len({str(a[k]) for a in calls for k in TEXT_ARGS if isinstance(a.get(k), str)})


def build(
    cases: Path, golden: Path, index: Path, calls: int = DEFAULT_CALLS, seed: int = 0
) -> tuple[Mix, MixStats]:
    """The mix (`{tool: [arguments, ...]}`) and its statistics."""
    per_tool = -(-calls // len(TOOLS))
    ids = IndexIds.read(index)
    originals = originals_by_tool(cases, golden)
    mix: Mix = {}
    tools: dict[str, ToolMixStats] = {}
    stats: MixStats = {"seed": seed, "per_tool_target": per_tool, "tools": tools}
    for tool in TOOLS:
        rng = random.Random(f"{seed}:{tool}")
        mix[tool], from_cases = tool_calls(tool, originals[tool], ids, per_tool, rng)
        tools[tool] = {
            "calls": len(mix[tool]),
            "distinct_arguments": len({canonical(a) for a in mix[tool]}),
            "from_cases_and_golden": from_cases,
            "cases_and_golden_available": len(originals[tool]),
            "distinct_texts": distinct_texts(mix[tool]),
        }
    stats["calls"] = sum(len(v) for v in mix.values())
    stats["distinct_arguments"] = sum(t["distinct_arguments"] for t in tools.values())
    return mix, stats


def write(mix: Mix, stats: MixStats, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(mix, separators=(",", ":")), encoding="utf-8")
    stats = {**stats, "bytes": out.stat().st_size}
    stats_path = out.with_suffix(".stats.json")
    stats_path.write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    return stats_path


def build_parser(prog: str = "ocm mix") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--cases", type=Path, required=True, help="`evals derive --out` folder")
    parser.add_argument("--golden", type=Path, default=GOLDEN_DIR)
    parser.add_argument("--index", type=Path, default=Path("build/index"))
    parser.add_argument("--out", type=Path, default=Path("build/mix/distinct.json"))
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument("--seed", type=int, default=0)
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Build the mix, write it and its statistics, print a line per tool."""
    mix, stats = build(args.cases, args.golden, args.index, args.calls, args.seed)
    stats_path = write(mix, stats, args.out)
    print(f"{stats['calls']} calls ({stats['distinct_arguments']} distinct) in {args.out}")
    for tool, row in stats["tools"].items():
        short = (
            " (fewer than asked: the expansions ran out)"
            if row["calls"] < stats["per_tool_target"]
            else ""
        )
        print(
            f"  {tool:22} {row['calls']:6d} calls, {row['distinct_texts']:6d} distinct texts, "
            f"{row['from_cases_and_golden']:6d} from cases/golden{short}"
        )
    print(f"statistics in {stats_path}")
    return 0
