"""The task mix: which calls a load run makes, for the reference server or any other.

Three sources (`--mix`): `golden` (default; every tool with arguments from the golden scenarios
that expect a result), `examples:<file>` (known-good arguments per tool from a JSON/YAML file,
for any server), and `schema` (arguments generated from each tool's published inputSchema, for
a server nobody wrote examples for). Only tools that say they are read-only are called unless
writes are allowed; a generated mix counts a tool error as an answer (the arguments are
schema-valid, not meaningful), the others expect results.

Free-text arguments (`query`, `q`, `question`) get generated variants (neutral lead-ins and
tails that keep the question's meaning) so a run is not a handful of strings the server's
query-embedding cache has already seen; the cache hit rate the server reports shows how well
that worked. Tools are drawn uniformly so each one gets its share of calls. An examples mix
(such as the distinct-query mix, `load/distinct_mix.py`) is walked, not drawn: each tool's calls
in order from a seeded starting point, none repeated before all were made, and each load process
takes its own share (`share`).
"""

from __future__ import annotations

import os
import random
from collections import defaultdict
from pathlib import Path

from ocm_common.golden import GOLDEN_DIR, example_calls, golden_calls
from ocm_common.golden import GoldenCall as Call
from ocm_common.json_types import Arguments, JsonObject
from ocm_common.tool_safety import write_risk

__all__ = ["FREE_TEXT_ARGS", "GOLDEN_DIR", "Call", "TaskMix", "variants"]
FREE_TEXT_ARGS = ("query", "q", "question")
LEAD_INS = (
    "",
    "Question: ",
    "Please advise: ",
    "A clinician asks: ",
    "In Ontario, ",
    "Quick check: ",
)
TAILS = (
    "",
    " Thanks.",
    " (Ontario)",
    " Please cite the source.",
    " What applies?",
    " Details please.",
)


def variants(text: str) -> list[str]:
    """Every lead-in x tail combination of one free-text argument, the original first."""
    return [f"{lead}{text}{tail}" for lead in LEAD_INS for tail in TAILS]


ID_CALLS_PER_TOOL = 40


def default_index() -> Path:
    return Path(os.environ.get("OCM_INDEX_DIR") or GOLDEN_DIR.parent / "build" / "index")


def index_id_calls(index: Path, present: set[str], seed: int | None) -> list[Call]:
    """Calls of opa.get_section and source.passages by ids the built index holds, for those of
    the two that the golden calls lack (none without an index)."""
    if not (index / "opa.db").is_file() or not (index / "ohip.db").is_file():
        return []
    from load.distinct_mix import IndexIds  # distinct_mix imports this module

    ids = IndexIds.read(index)
    rng = random.Random(seed or 0)
    pools = {
        "opa.get_section": ("section_id", ids.section_ids, False),
        "source.passages": ("chunk_ids", ids.passage_ids, True),
    }
    calls: list[Call] = []
    for tool, (arg, pool, as_list) in pools.items():
        if tool in present or not pool:
            continue
        for one in rng.sample(pool, min(ID_CALLS_PER_TOOL, len(pool))):
            calls.append(Call(tool, {arg: [one] if as_list else one}, f"index:{one}"))
    return calls


class TaskMix:
    def __init__(
        self,
        calls: dict[str, list[Call]],
        seed: int | None = None,
        *,
        tool_errors_ok: bool = False,
        source: str = "golden",
    ):
        if not calls:
            raise ValueError(f"the task mix ({source}) has no calls to make")
        self.calls = calls
        self.tools = sorted(calls)
        self._rng = random.Random(seed)
        self.tool_errors_ok = tool_errors_ok  # a tool error is an answer, not a failure
        self.source = source
        self._next: dict[str, int] = {}  # examples mixes: each tool's next position

    @classmethod
    def from_source(
        cls,
        source: str,
        *,
        listing: JsonObject | None = None,
        seed: int | None = None,
        allow_writes: bool = False,
    ) -> TaskMix:
        """`golden`, `examples:<file>` or `schema` (which needs the server's tools/list result)."""
        if source == "golden":
            return cls.from_golden(seed=seed)
        if source.startswith("examples:"):
            return cls.from_examples(Path(source.split(":", 1)[1]), seed=seed)
        if source == "schema":
            if listing is None:
                raise ValueError("the schema mix needs the server's tools/list")
            return cls.from_schemas(listing, seed=seed, allow_writes=allow_writes)
        raise ValueError(f"unknown task mix {source!r}: golden, examples:<file> or schema")

    @classmethod
    def from_examples(cls, path: Path, seed: int | None = None) -> TaskMix:
        """`{tool: [arguments, ...]}` or `[{tool, args}, ...]`, JSON or YAML."""
        by_tool: dict[str, list[Call]] = defaultdict(list)
        for call in example_calls(path):
            by_tool[call.tool].append(call)
        return cls(dict(by_tool), seed, source=f"examples:{path}")

    @classmethod
    def from_schemas(
        cls,
        listing: JsonObject,
        seed: int | None = None,
        per_tool: int = 20,
        allow_writes: bool = False,
    ) -> TaskMix:
        """`per_tool` arguments drawn from each callable tool's inputSchema (seeded, so every
        locust process draws the same mix). An entry that is not an object with a string
        `name` is no tool that can be called; an `annotations`, `execution` or `inputSchema`
        that is not an object counts as absent."""
        by_tool: dict[str, list[Call]] = {}
        tools = listing.get("tools") or []
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict):
                continue
            annotations = tool.get("annotations")
            if not allow_writes and write_risk(
                annotations if isinstance(annotations, dict) else None
            ):
                continue
            execution = tool.get("execution") or {}
            if isinstance(execution, dict) and execution.get("taskSupport") == "required":
                continue
            schema = tool.get("inputSchema") or {}
            name = tool["name"]
            if not isinstance(name, str):
                continue
            drawn = generated_arguments(
                schema if isinstance(schema, dict) else {}, per_tool, seed or 0
            )
            by_tool[name] = [Call(name, args, f"generated#{n}") for n, args in enumerate(drawn)]
        return cls(by_tool, seed, tool_errors_ok=True, source="schema")

    @classmethod
    def from_golden(
        cls, golden: Path = GOLDEN_DIR, seed: int | None = None, index: Path | None = None
    ) -> TaskMix:
        """The golden calls; the id-shaped tools whose golden scenarios take their ids from the
        backend (``ids_from``, so no call is written out) get calls by the ids the built index
        holds, read-only (``index``, default ``$OCM_INDEX_DIR`` or ``build/index``)."""
        by_tool: dict[str, list[Call]] = defaultdict(list)
        for call in golden_calls(golden):
            by_tool[call.tool].append(call)
        for call in index_id_calls(index or default_index(), set(by_tool), seed):
            by_tool[call.tool].append(call)
        return cls(dict(by_tool), seed)

    def share(self, index: int, count: int) -> TaskMix:
        """This process's share of an examples mix: every `count`-th call of each tool from
        `index`, so `count` load processes never make the same call (tools with fewer calls
        than processes keep them all). The golden mix is drawn at random, not walked: whole."""
        if count <= 1 or self.source == "golden":
            return self
        if not 0 <= index < count:
            raise ValueError(f"share {index}/{count}: the index must be below the count")
        calls = {t: c[index::count] or c for t, c in self.calls.items()}
        mix = TaskMix(calls, tool_errors_ok=self.tool_errors_ok, source=self.source)
        mix._rng = self._rng
        return mix

    def originals(self) -> list[Call]:
        return [c for tool in self.tools for c in self.calls[tool]]

    def pick(self, tool: str | None = None, vary: bool = True) -> Call:
        """A random call (uniform over tools), free text varied unless `vary` is off."""
        tool = tool or self._rng.choice(self.tools)
        if self.source != "golden":
            return self._walk(tool)
        call = self._rng.choice(self.calls[tool])
        if not vary:
            return call
        args = dict(call.arguments)
        for key in FREE_TEXT_ARGS:
            text = args.get(key)
            if isinstance(text, str):
                args[key] = self._rng.choice(variants(text))
        return Call(tool, args, call.scenario)

    def _walk(self, tool: str) -> Call:
        """An examples or schema mix's calls in the file's order from a seeded starting point,
        each once before any comes again (a distinct-query mix stays distinct for its length)."""
        calls = self.calls[tool]
        position = self._next.get(tool)
        if position is None:
            position = self._rng.randrange(len(calls))
        self._next[tool] = (position + 1) % len(calls)
        return calls[position]


def generated_arguments(schema: JsonObject, count: int, seed: int) -> list[Arguments]:
    """`count` argument objects valid against `schema` (formats asserted), drawn by
    hypothesis-jsonschema under a fixed seed; `[{}]` for a tool without arguments."""
    if not schema.get("properties"):
        return [{}]
    import jsonschema
    from hypothesis import HealthCheck, Phase, given
    from hypothesis import seed as hypothesis_seed
    from hypothesis import settings as hypothesis_settings
    from hypothesis_jsonschema import from_schema

    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    drawn: list[Arguments] = []

    @hypothesis_settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(seed)
    @given(from_schema(schema))
    def collect(args: Arguments) -> None:
        if validator.is_valid(args) and args not in drawn:
            drawn.append(args)

    collect()
    return drawn or [{}]
