"""Property-based contract tests of any MCP backend, from the schemas it publishes.

Strategies are derived from each tool's published ``inputSchema`` (hypothesis-jsonschema for
valid arguments; invalid ones are valid arguments with one or two schema-driven mutations,
each confirmed invalid by a JSON Schema validator), so nothing is written twice by hand and any
backend a :mod:`evals.targets` spec names can be tested (in-process, stdio, HTTP).

Every case runs a fixed list of named checks (schemathesis' shape: a failure names the check,
the tool, the case and the arguments that reproduce it):

- valid arguments: no protocol error, not refused as invalid input (a not-found for a generated
  id is fine), no internal error, ``structuredContent`` valid against ``outputSchema``, the text
  content mirrors it;
- invalid arguments (wrong types, missing required fields, out-of-range numbers, unknown enum
  values, extra fields, blank and whitespace-only text, 1 MB strings, control characters, too
  many items, two problems at once): ``isError`` with every broken field named, the allowed
  values where the schema has some, no stack trace, within the time limit;
- hostile text (right-to-left text, emoji, SQL and FTS5 syntax, path traversal) put into string
  fields: judged as valid or invalid by the schema, like any other case;
- after every case (every Nth in the large profile, and after every failure) the backend still
  answers ``tools/list``; after each tool its first answered valid call is repeated and must
  still answer.

Each (tool, family) is one hypothesis property: the cases are generated and run inside
``@given``, so a failing case is shrunk to a minimal one, saved in the example database
(``.hypothesis/fuzz``, replayed first by the next run) and reported with the run's seed and a
one-line command that reproduces it. A tool without arguments is called with ``{}``.

``python -m evals.run.fuzz --target inprocess --profile large`` prints a per-tool table (examples
tried, failures, slowest case), writes ``fuzz.json`` (the run log) and exits 1 on any failure.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import os
import random
import re
import secrets
import shlex
import threading
import time
import warnings
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
from hypothesis import HealthCheck, Phase, Verbosity, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    InMemoryExampleDatabase,
)
from hypothesis.errors import HypothesisWarning, Unsatisfiable
from hypothesis_jsonschema import from_schema

from evals.run.fuzz_checks import (
    GRADES,
    RULES,
    STILL_SERVING,
    Context,
    classify,
    ending,
    fails,
    rule_named,
    run_checks,
)
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.schema_edges import DroppedEdge, schema_edges
from evals.run.security.sandbox import CANARY_ENV
from evals.run.targets import Target, TargetError
from ocm_common.run_record import Clock, header, write_record
from ocm_common.tool_safety import write_risk

T = TypeVar("T")

PROFILES: dict[str, dict[str, int]] = {
    # inside `make test`: a smoke run of every mutation family on every tool, health-checked
    # after every case
    "default": {"valid": 8, "invalid": 40, "health_every": 1},
    # `make fuzz`: health-checked after every 10th case and after every case that failed
    # (tools/list costs ~5x an input error in process, so this keeps the run near 25 minutes)
    "large": {"valid": 200, "invalid": 1000, "health_every": 10},
}
HOSTILE_TEXT = [
    "\u202eevil\u202c \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",  # RTL override, Hebrew, Arabic
    "\U0001f489\U0001f3e5 \U0001f468\u200d\u2695\ufe0f vaccine \U0001f9ea",  # emoji, ZWJ sequence
    "' OR 1=1; DROP TABLE opa_sections; --",
    '"unbalanced quote',
    "*",
    "consent NEAR(",
    "care OR",
    "-screening",
    "NOT AND OR",
    "../../../../etc/passwd",
    "..\\..\\windows\\system32",
    "%00%2e%2e%2f",
]
CONTROL_TEXT = ["abc\x00def", "\x00", "line\x07bell", "esc\x1b[31m", "del\x7f"]
BLANK_TEXT = ["", " ", "   ", "\t\n", "\u00a0\u2003"]
ONE_MB = "a" * (1 << 20)


# ----------------------------------------------------------------------------- cases and results


@dataclass
class Case:
    tool: str
    kind: str  # "valid" or "invalid"
    family: str  # how the case was made: "generated", "wrong_type", "hostile_text", ...
    args: dict[str, Any]
    fields: list[str] = field(default_factory=list)  # broken fields the error must name
    edge: str = ""  # a boundary case's label ("query: maxLength 1000 words"), else ""

    def short_args(self, limit: int = 300) -> str:
        def shrink(v: Any) -> Any:
            if isinstance(v, str) and len(v) > 60:
                return f"{v[:20]}...<{len(v)} chars>"
            if isinstance(v, list):
                return [shrink(x) for x in v[:5]] + (["..."] if len(v) > 5 else [])
            if isinstance(v, dict):
                return {k: shrink(x) for k, x in v.items()}
            return v

        text = json.dumps(shrink(self.args), ensure_ascii=True)
        return text if len(text) <= limit else text[:limit] + "..."


@dataclass
class Failure:
    """One broken rule: which, its grade and source (fuzz_checks.py), and how to see it again."""

    check: str
    tool: str
    kind: str
    family: str
    message: str
    args: str  # the shrunk case's arguments
    seed: int | None = None
    reproduce: str = ""  # one command line that runs this tool and family again with the seed
    grade: str = ""
    reference: str = ""
    call: str = ""  # how the call ended: answered, tool-error, crash, protocol-error, no-answer

    def __post_init__(self) -> None:
        if not self.grade:
            found = rule_named(self.check)
            self.grade, self.reference = found.grade, found.reference

    def describe(self) -> str:
        return (
            f"[{self.grade}: {self.check}] {self.tool} ({self.kind}/{self.family}, {self.call or 'call'}): "
            f"{self.message}; args={self.args}; seed={self.seed}; reproduce: {self.reproduce}"
        )


@dataclass(frozen=True)
class SkippedTool:
    tool: str
    reason: str


class CaseFailed(AssertionError):
    """Raised inside the property so hypothesis shrinks the case: every failed check's message."""

    def __init__(self, case: Case, problems: list[tuple[str, str]], call: str = ""):
        super().__init__("; ".join(f"[{name}] {message}" for name, message in problems))
        self.case = case
        self.problems = problems
        self.call = call


@dataclass
class EdgeOutcome:
    """One boundary case and how it ended (fuzz_checks.ending), with the checks it broke."""

    edge: str
    ended: str
    failed: list[str] = field(default_factory=list)


@dataclass
class ToolStats:
    tool: str
    valid: int = 0
    invalid: int = 0
    failures: int = 0
    slowest_ms: float = 0.0
    slowest_case: str = ""
    families: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)  # how calls ended (fuzz_checks.Kind)
    edge_summary: str = ""  # per field, the edges exercised (schema_edges.SchemaEdges.summary)
    edges: list[EdgeOutcome] = field(default_factory=list)
    edges_dropped: list[DroppedEdge] = field(default_factory=list)

    def edge_counts(self) -> dict[str, int]:
        """How the boundary cases ended: {"answered": n, "not-found": n, "failed": n, ...}."""
        counts: dict[str, int] = {}
        for e in self.edges:
            key = "failed" if e.failed else e.ended
            counts[key] = counts.get(key, 0) + 1
        return counts

    @property
    def tried(self) -> int:
        return self.valid + self.invalid

    def record(self, case: Case, latency_ms: float) -> None:
        if case.kind == "valid":
            self.valid += 1
        else:
            self.invalid += 1
        self.families[case.family] = self.families.get(case.family, 0) + 1
        if latency_ms > self.slowest_ms:
            self.slowest_ms = latency_ms
            self.slowest_case = f"{case.kind}/{case.family} {case.short_args(120)}"


@dataclass
class FuzzReport:
    target: str
    profile: str
    tools: list[ToolStats]
    failures: list[Failure]
    seconds: float
    seed: int | None = None
    databases_unchanged: bool | None = None
    database_note: str = ""
    house_rules: bool = True
    skipped: list[SkippedTool] = field(default_factory=list)

    @property
    def failing(self) -> list[Failure]:
        """The findings that fail the run (warnings and, for other backends, house rules don't)."""
        return [f for f in self.failures if fails(f.grade, house_rules=self.house_rules)]

    @property
    def ok(self) -> bool:
        return not self.failing and self.databases_unchanged is not False

    def counts(self) -> dict[str, int]:
        return {g: sum(f.grade == g for f in self.failures) for g in GRADES}

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "fuzz",
            "target": self.target,
            "profile": self.profile,
            "seed": self.seed,
            "ok": self.ok,
            "seconds": round(self.seconds, 1),
            "databases_unchanged": self.databases_unchanged,
            "database_note": self.database_note,
            "house_rules": self.house_rules,
            "findings_by_grade": self.counts(),
            "rules": {
                r.name: {"grade": r.grade, "enforces": r.enforces, "reference": r.reference}
                for r in [*RULES.values(), STILL_SERVING]
                if self.house_rules or r.grade != "house"
            },
            "skipped": [asdict(t) for t in self.skipped],
            "tools": [
                {
                    **asdict(t),
                    "tried": t.tried,
                    "slowest_ms": round(t.slowest_ms, 1),
                    "edge_counts": t.edge_counts(),
                }
                for t in self.tools
            ],
            "failures": [asdict(f) for f in self.failures],
        }


# ----------------------------------------------------------------------------- strategies


def _type_of(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, list):
        return set(kind)
    if kind:
        return {kind}
    if "enum" in node:
        return ({type(v).__name__ for v in node["enum"]} & {"str"} and {"string"}) or set()
    return set()


WRONG_VALUES: dict[str, list[Any]] = {
    "string": [12345, 3.5, True, ["a"], {"a": 1}],
    "integer": ["5", 2.5, True, [1], {"n": 1}],
    "number": ["5", True, [1.0], {"n": 1}],
    "boolean": ["true", 1, 0, ["x"], {"b": True}],
    "array": ['["a"]', 7, True, {"a": 1}],
    "object": ["{}", 7, True, ["a"]],
}


def _string_fields(
    schema: dict[str, Any], prefix: str = ""
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every string-valued place (top-level fields, nested object fields, array items)."""
    for name, node in (schema.get("properties") or {}).items():
        path = f"{prefix}{name}"
        kinds = _type_of(node)
        if "string" in kinds:
            yield path, node
        if "object" in kinds:
            yield from _string_fields(node, f"{path}.")
        if "array" in kinds and "string" in _type_of(node.get("items") or {}):
            yield f"{path}[0]", node["items"]


def _set_path(args: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(args)
    parts = [p for p in re.split(r"(\.|\[0\])", path) if p and p != "."]
    node: Any = out
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "[0]":
            continue
        nxt = parts[i + 1] if not last else None
        if last:
            node[part] = value
        elif nxt == "[0]":
            items = node.get(part)
            if not isinstance(items, list) or not items:
                items = node[part] = [None]
            if i + 1 == len(parts) - 1:
                items[0] = value
                return out
            if not isinstance(items[0], dict):
                items[0] = {}
            node = items[0]
        else:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
    return out


class Mutations:
    """Schema-driven ways to break a valid argument object; each returns (family, args, fields)
    or None when the schema gives it nothing to break."""

    def __init__(self, schema: dict[str, Any]):
        self.schema = schema
        self.props: dict[str, dict[str, Any]] = schema.get("properties") or {}
        # formats (date, uri, ...) are asserted: a value breaking its format is no valid case
        self.validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )

    def is_valid(self, args: dict[str, Any]) -> bool:
        return self.validator.is_valid(args)

    def families(self) -> list[str]:
        """The families this schema can refuse. A text family needs a string field whose
        schema limits it (a huge string needs `maxLength`; blank text and control characters a
        `pattern` or `minLength`): without one every such case is valid, and hypothesis would
        spend its whole budget drawing cases it must throw away."""
        limits = {k for _, node in _string_fields(self.schema) for k in node}
        text = {
            "huge_string": "maxLength" in limits,
            "control_chars": "pattern" in limits,
            "blank_text": bool({"pattern", "minLength"} & limits),
        }
        # extra arguments are an error only where the schema says so (additionalProperties)
        closed = self.schema.get("additionalProperties") is False
        out = [
            "wrong_type",
            *(["extra_field"] if closed else []),
            *(family for family, applies in text.items() if applies),
            *(["two_problems"] if closed else []),
        ]
        if self.schema.get("required") or self.schema.get("anyOf"):
            out.append("missing_required")
        if any({"integer", "number"} & _type_of(n) for n in self.props.values()):
            out.append("out_of_range")
        if any("enum" in n or "enum" in (n.get("items") or {}) for n in self.props.values()):
            out.append("unknown_enum")
        if any("maxItems" in n for n in self.props.values()):
            out.append("too_many_items")
        if not self.props:
            out = [*(["extra_field"] if closed else []), "wrong_type_arguments"]
        return out

    def apply(
        self, family: str, base: dict[str, Any], draw: Any
    ) -> tuple[dict[str, Any], list[str]] | None:
        props = sorted(self.props)
        if family == "wrong_type":
            name = draw(st.sampled_from(props))
            kinds = _type_of(self.props[name]) or {"string"}
            value = draw(st.sampled_from(WRONG_VALUES[sorted(kinds)[0]]))
            return {**base, name: value}, [name]
        if family == "wrong_type_arguments":
            return {"arguments": draw(st.sampled_from([[1], "x", 3]))}, ["arguments"]
        if family == "extra_field":
            name = "zz_" + draw(st.text("abcdefghij_", min_size=1, max_size=8))
            return {**base, name: draw(st.sampled_from([1, "x", None, [1]]))}, [name]
        if family == "missing_required":
            required = list(self.schema.get("required") or [])
            if required:
                name = draw(st.sampled_from(required))
                return {k: v for k, v in base.items() if k != name}, [name]
            names = {f for alt in self.schema.get("anyOf", []) for f in alt.get("required", [])}
            return {k: v for k, v in base.items() if k not in names}, sorted(names)[:1]
        if family == "out_of_range":
            numeric = [p for p in props if {"integer", "number"} & _type_of(self.props[p])]
            name = draw(st.sampled_from(numeric))
            node = self.props[name]
            options = []
            if "maximum" in node:
                options += [node["maximum"] + 1, node["maximum"] * 1000 + 7]
            if "minimum" in node:
                options += [node["minimum"] - 1, -(10**12)]
            if not options:
                return None
            value = draw(st.sampled_from(options))
            if "integer" in _type_of(node):
                value = int(value)
            return {**base, name: value}, [name]
        if family == "unknown_enum":
            enums = [
                p
                for p in props
                if "enum" in self.props[p] or "enum" in (self.props[p].get("items") or {})
            ]
            name = draw(st.sampled_from(enums))
            bad = draw(st.sampled_from(["not-a-value", "ALL", "", "drop table", "\u00e9"]))
            if "enum" in self.props[name]:
                return {**base, name: bad}, [name]
            return {**base, name: [bad]}, [name]
        if family == "too_many_items":
            arrays = [p for p in props if "maxItems" in self.props[p]]
            name = draw(st.sampled_from(arrays))
            node = self.props[name]
            item = _sample_item(node.get("items") or {})
            return {**base, name: [item] * (int(node["maxItems"]) + 1)}, [name]
        if family in ("huge_string", "control_chars", "blank_text"):
            places = list(_string_fields(self.schema))
            if not places:
                return None
            path, _node = draw(st.sampled_from(places))
            pool = {
                "huge_string": [ONE_MB],
                "control_chars": CONTROL_TEXT,
                "blank_text": BLANK_TEXT,
            }[family]
            return _set_path(base, path, draw(st.sampled_from(pool))), [path]
        if family == "two_problems":
            first = draw(
                st.sampled_from(
                    [f for f in self.families() if f not in ("two_problems", "missing_required")]
                )
            )
            one = self.apply(first, base, draw)
            if one is None:
                return None
            args, fields = one
            extra = "zz_also_unknown"
            return {**args, extra: 1}, [*fields, extra]
        return None


def _sample_item(node: dict[str, Any]) -> Any:
    if "enum" in node:
        return node["enum"][0]
    kinds = _type_of(node)
    if "integer" in kinds or "number" in kinds:
        return node.get("minimum", 1)
    if "string" in kinds:
        return "C124" if node.get("pattern", "").startswith("^[A-Z]") else "item"
    return "item"


def valid_strategy(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Valid arguments from the published schema, plus the same with hostile text put into a
    string field (kept as a valid case only when the schema still accepts it)."""
    if not schema.get("properties"):
        return st.just({})  # a tool without arguments has one valid call
    base: st.SearchStrategy[dict[str, Any]] = from_schema(schema)  # type: ignore[assignment]
    places = list(_string_fields(schema))
    if not places:
        return base

    @st.composite
    def hostile(draw: Any) -> dict[str, Any]:
        args = draw(base)
        path, _ = draw(st.sampled_from(places))
        return _set_path(args, path, draw(st.sampled_from(HOSTILE_TEXT)))

    return st.one_of(base, hostile())


# ----------------------------------------------------------------------------- the runner


class _LoopThread:
    """An event loop in a thread, so hypothesis (synchronous) can drive an async target."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@dataclass
class FuzzConfig:
    valid: int
    invalid: int
    error_limit_ms: float = 10_000.0
    call_timeout_s: float = 30.0
    seed: int | None = None  # None: a random one, reported with every failure
    tools: list[str] | None = None
    families: list[str] | None = None  # only these case families ("generated" for valid ones)
    health_every: int = 1
    database: str | None = None  # example database directory; None keeps it in memory
    # this project's conventions (fuzz_checks.py, grade "house"): on for the reference server,
    # opt-in for any other backend
    house_rules: bool = True
    allow_writes: bool = False  # call tools that do not say they are read-only
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # known-good inputs
    canary: str | None = None  # a secret planted in the server's environment (stdio, inprocess)
    edges: bool = True  # boundary cases from the schema first (schema_edges.py)


VALID_FAMILY = "generated"
KNOWN_FAMILY = "known_good"  # an input from the examples file or a golden scenario
EDGE_FAMILY = "schema_edge"  # a boundary case from the published schema (schema_edges.py)


class Fuzzer:
    """Runs every tool's properties against one connected target.

    A property is one tool and one case family; hypothesis draws each case and runs it on the
    target's event loop inside the property, one at a time, so a failing case is shrunk (each
    smaller case is called again) and saved in the example database. Every Nth passing case,
    and every property that failed, is followed by a `tools/list` health check."""

    def __init__(self, target: Target, runner: _LoopThread, config: FuzzConfig):
        self.target = target
        self.runner = runner
        self.config = config
        self.seed = config.seed if config.seed is not None else random.randrange(2**32)
        self.failures: list[Failure] = []
        self._cases_run = 0

    def reproduce(self, tool: str, family: str) -> str:
        kind = "valid" if family in (VALID_FAMILY, EDGE_FAMILY) else "invalid"
        counts = (
            f"--valid {self.config.valid} --invalid 0"
            if kind == "valid"
            else (f"--valid 0 --invalid {self.config.invalid}")
        )
        return (
            f"python -m evals.run.fuzz --target {shlex.quote(self.target.spec)} "
            f"--tool {tool} --family {family} --seed {self.seed} {counts}"
        )

    def run_case(self, tool: ToolInfo, case: Case, stats: ToolStats) -> CallOutcome | None:
        """Call the target with one case; raises CaseFailed naming every check it failed."""
        limit = self.config.call_timeout_s
        out: CallOutcome | None = None
        error: BaseException | None = None
        try:
            out = self.runner.run(
                self.target.call_tool(tool.name, case.args, timeout_s=limit), limit + 10
            )
        except (TargetError, TimeoutError) as exc:
            error = exc
        # The periodic tools/list follows random cases only: a boundary case that breaks the
        # server fails the next one (answers), and one that fails is health-checked anyway.
        if not case.edge:
            self._cases_run += 1
        stats.record(case, out.latency_ms if out is not None else limit * 1000)
        call = classify(out, error)
        stats.calls[call.kind] = stats.calls.get(call.kind, 0) + 1
        context = Context(
            case.kind,
            case.fields,
            tool,
            self.config.error_limit_ms,
            self.config.canary,
            case.family,
            case.args,
            str(getattr(self.target, "protocol_version", "") or ""),
        )
        broken = run_checks(call, context, house_rules=self.config.house_rules)
        problems = [(r.name, message) for r, message in broken]
        # A failing case is checked once its property has shrunk it (`check_property`), not
        # at every shrinking step: the step is already a failure, and the call count doubles.
        due = not case.edge and self._cases_run % max(1, self.config.health_every) == 0
        if not problems and due:
            problem = self._still_serving()
            if problem:
                problems.append(("still_serving", problem))
        if case.edge:
            stats.edges.append(EdgeOutcome(case.edge, ending(call), [name for name, _ in problems]))
        if problems:
            raise CaseFailed(case, problems, call.kind)
        return out

    def _still_serving(self) -> str | None:
        try:
            self.runner.run(self.target.list_tools(), self.config.call_timeout_s + 10)
            return None
        except Exception as exc:
            return f"tools/list failed after this case: {exc}"[:300]

    def _database(self, tool: str, family: str) -> ExampleDatabase:
        # One directory per property: the properties share their source, so hypothesis would
        # otherwise key every tool's saved cases alike.
        if self.config.database is None:
            return InMemoryExampleDatabase()
        return DirectoryBasedExampleDatabase(str(Path(self.config.database) / tool / family))

    def check_property(
        self,
        tool: ToolInfo,
        family: str,
        cases: st.SearchStrategy[Case],
        examples: int,
        stats: ToolStats,
        known: list[Case] | None = None,
        *,
        generate: bool = True,
    ) -> list[dict[str, Any]]:
        """Run one property; the arguments of the valid calls that answered (for the replay).

        ``known`` cases run first, in hypothesis' explicit phase (known-good inputs, then the
        schema's boundary cases). A boundary case that fails is recorded and the phase goes on,
        so every edge is tried and reported, and random generation still follows; any other
        failing case stops the property and is shrunk. ``generate=False``: the explicit phase
        alone."""
        answered: list[dict[str, Any]] = []
        phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink]

        @settings(
            max_examples=max(1, examples),
            database=self._database(tool.name, family),
            deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=phases if generate else [Phase.explicit],
            report_multiple_bugs=False,
            print_blob=False,
            verbosity=Verbosity.quiet,
        )
        def holds(case: Case) -> None:
            try:
                out = self.run_case(tool, case, stats)
            except CaseFailed as failed:
                if not case.edge:
                    raise
                self._record(tool, failed, family, f"{case.edge}: ", stats)
                return
            if case.kind == "valid" and out is not None and not out.is_error:
                answered.append(case.args)

        for case in reversed(known or []):  # hypothesis runs the last-applied example first
            holds = example(case)(holds)
        holds = seed(self.seed)(given(cases)(holds))

        try:
            with warnings.catch_warnings():  # the repr of a 1 MB case, noted for the report
                warnings.simplefilter("ignore", HypothesisWarning)
                holds()
        except Unsatisfiable:
            pass  # the schema gives this family nothing to break
        except Exception as exc:
            failed = _case_failed(exc)
            if failed is None:
                raise
            self._record(tool, failed, family, "", stats)
        return answered

    def _record(
        self, tool: ToolInfo, failed: CaseFailed, family: str, prefix: str, stats: ToolStats
    ) -> None:
        """One failing case's findings (after a tools/list health check)."""
        stats.failures += 1
        serving = self._still_serving()
        problems = [*failed.problems, *([("still_serving", serving)] if serving else [])]
        for name, message in problems:
            self.failures.append(
                Failure(
                    name,
                    tool.name,
                    failed.case.kind,
                    failed.case.family,
                    prefix + message,
                    failed.case.short_args(),
                    self.seed,
                    self.reproduce(tool.name, EDGE_FAMILY if failed.case.edge else family),
                    call=failed.call,
                )
            )

    def edge_cases(
        self, name: str, schema: dict[str, Any], stats: ToolStats, known: list[Case]
    ) -> list[Case]:
        """The schema's boundary cases, each a change to the first known-good input (when
        there is one); what was exercised and what was dropped is kept for the report."""
        made = schema_edges(schema, known[0].args if known else None)
        stats.edge_summary = made.summary()
        stats.edges_dropped = made.dropped
        return [Case(name, "valid", EDGE_FAMILY, e.args, edge=e.label) for e in made.edges]

    def fuzz_tool(self, tool: ToolInfo) -> ToolStats:
        """Invalid families first, then the valid calls, then one answered call once more."""
        stats = ToolStats(tool.name)
        schema = tool.input_schema or {"type": "object"}
        mutations = Mutations(schema)
        wanted = set(self.config.families or [])
        families = [f for f in mutations.families() if not wanted or f in wanted]
        if self.config.invalid and families:
            valid_args = from_schema(schema)  # canonicalising a schema is slow: once per tool
            each = math.ceil(self.config.invalid / len(mutations.families()))
            for family in families:
                self.check_property(
                    tool,
                    family,
                    invalid_cases(tool.name, mutations, family, valid_args),
                    each,
                    stats,
                )
        answered: list[dict[str, Any]] = []
        generate = bool(self.config.valid) and (not wanted or VALID_FAMILY in wanted)
        edges_only = EDGE_FAMILY in wanted and not generate
        if generate or edges_only:
            known = [
                Case(tool.name, "valid", KNOWN_FAMILY, dict(args))
                for args in self.config.examples.get(tool.name, [])
                if mutations.is_valid(args)
            ]
            edges = self.edge_cases(tool.name, schema, stats, known) if self.config.edges else []
            answered = self.check_property(
                tool,
                VALID_FAMILY,
                valid_cases(tool.name, schema, mutations),
                max(self.config.valid, 1),
                stats,
                [*([] if edges_only else known), *edges],
                generate=not edges_only,
            )
        if answered:  # the server still answers a normal call after all of it
            replay = Case(tool.name, "valid", "replay_after_fuzzing", answered[0])
            try:
                self.run_case(tool, replay, stats)
            except CaseFailed as failed:
                stats.failures += 1
                for name, message in failed.problems:
                    self.failures.append(
                        Failure(
                            name,
                            tool.name,
                            "valid",
                            replay.family,
                            message,
                            replay.short_args(),
                            call=failed.call,
                        )
                    )
        return stats


def _case_failed(exc: BaseException) -> CaseFailed | None:
    """The CaseFailed inside what hypothesis raised (itself, or within a flaky-failure group)."""
    if isinstance(exc, CaseFailed):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _case_failed(inner)
        if found is not None:
            return found
    return None


def valid_cases(name: str, schema: dict[str, Any], mutations: Mutations) -> st.SearchStrategy[Case]:
    """Schema-valid calls; hostile text the schema refuses is no valid case (the invalid
    families cover it), so hypothesis draws again."""

    def case(args: dict[str, Any]) -> Case:
        text = json.dumps(args, ensure_ascii=False)
        family = "hostile_text" if any(h in text for h in HOSTILE_TEXT) else VALID_FAMILY
        return Case(name, "valid", family, args)

    return valid_strategy(schema).filter(mutations.is_valid).map(case)


def invalid_cases(
    name: str, mutations: Mutations, family: str, valid_args: st.SearchStrategy[Any]
) -> st.SearchStrategy[Case]:
    """Valid arguments broken by one family's mutation, each confirmed invalid by the schema."""

    @st.composite
    def made(draw: Any) -> Case | None:
        broken = mutations.apply(family, draw(valid_args), draw)
        if broken is None or mutations.is_valid(broken[0]):
            return None
        return Case(name, "invalid", family, broken[0], broken[1])

    return made().filter(lambda c: c is not None)  # type: ignore[return-value]


def not_callable(tool: ToolInfo, *, allow_writes: bool) -> str | None:
    """Why the run must not call ``tool``: a tool that runs only as a task (not checked), or
    one that may change state (destructive, or not declared read-only) without --allow-writes."""
    if tool.execution.get("taskSupport") == "required":
        return "runs only as a task (taskSupport: required); task calls are not checked"
    if allow_writes:
        return None
    reason = write_risk(tool.annotations)
    return f"{reason}; pass --allow-writes to call it" if reason else None


@contextmanager
def planted(name: str, value: str | None) -> Iterator[None]:
    """``name=value`` in this process's environment while a target connects: a stdio server
    inherits it, the in-process server reads it."""
    if value is None:
        yield
        return
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def database_checksums(index_dir: Any) -> dict[str, str]:
    """sha256 of every file under the index directory (SQLite files and the Chroma store)."""
    import hashlib
    from pathlib import Path

    root = Path(index_dir)
    sums: dict[str, str] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        sums[str(path.relative_to(root))] = digest.hexdigest()
    return sums


def run_fuzz(
    target: Target,
    config: FuzzConfig,
    *,
    profile: str = "custom",
    index_dir: Any = None,
    progress: Callable[[ToolStats, list[Failure]], None] | None = None,
) -> FuzzReport:
    """Fuzz every tool the target lists (or `config.tools`); compare database checksums when
    `index_dir` is given (before and after the whole run)."""
    started = time.perf_counter()
    before = database_checksums(index_dir) if index_dir else None
    runner = _LoopThread()
    skipped: list[SkippedTool] = []
    with planted(CANARY_ENV, config.canary):
        runner.run(target.__aenter__(), timeout=300)
    try:
        try:
            tools = runner.run(target.list_tools(), timeout=60)
            fuzzer = Fuzzer(target, runner, config)
            all_stats = []
            for tool in tools:
                if config.tools and tool.name not in config.tools:
                    continue
                reason = not_callable(tool, allow_writes=config.allow_writes)
                if reason:
                    skipped.append(SkippedTool(tool.name, reason))
                    continue
                stats = fuzzer.fuzz_tool(tool)
                all_stats.append(stats)
                if progress:
                    progress(stats, [f for f in fuzzer.failures if f.tool == tool.name])
        finally:
            runner.run(target.__aexit__(None, None, None), timeout=60)
    finally:
        runner.close()
    report = FuzzReport(
        target.spec,
        profile,
        all_stats,
        fuzzer.failures,
        time.perf_counter() - started,
        seed=fuzzer.seed,
        house_rules=config.house_rules,
        skipped=skipped,
    )
    if before is not None:
        after = database_checksums(index_dir)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        report.databases_unchanged = not changed
        report.database_note = (
            f"{len(before)} files checksummed, unchanged"
            if not changed
            else f"changed: {', '.join(changed[:10])}"
        )
    return report


# ----------------------------------------------------------------------------- command line


def known_inputs(
    examples: str | None, golden: str | None, target: str
) -> dict[str, list[dict[str, Any]]]:
    """Known-good arguments per tool, from an examples file and golden scenarios (for the
    reference server, its own golden set unless told otherwise)."""
    from ocm_common.golden import GOLDEN_DIR, example_calls, golden_calls

    root = Path(golden) if golden else (GOLDEN_DIR if target.startswith("inprocess") else None)
    calls = [
        *(example_calls(Path(examples)) if examples else []),
        *(golden_calls(root) if root is not None else []),
    ]
    known: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        known.setdefault(call.tool, []).append(call.arguments)
    return known


def render_table(report: FuzzReport) -> str:
    """The per-tool table (plain text, so logs and reports quote it as is)."""
    rows: list[tuple[str, ...]] = [
        (
            "tool",
            "valid",
            "invalid",
            "tried",
            "edges ok",
            "crashes",
            "failures",
            "slowest ms",
            "slowest case",
        )
    ]
    for t in report.tools:
        rows.append(
            (
                t.tool,
                str(t.valid),
                str(t.invalid),
                str(t.tried),
                _edges_ok(t),
                str(t.calls.get("crash", 0)),
                str(t.failures),
                f"{t.slowest_ms:.0f}",
                t.slowest_case[:70],
            )
        )
    total = [
        "TOTAL",
        str(sum(t.valid for t in report.tools)),
        str(sum(t.invalid for t in report.tools)),
        str(sum(t.tried for t in report.tools)),
        f"{sum(_passed(t) for t in report.tools)}/{sum(len(t.edges) for t in report.tools)}",
        str(sum(t.calls.get("crash", 0) for t in report.tools)),
        str(sum(t.failures for t in report.tools)),
        f"{max((t.slowest_ms for t in report.tools), default=0):.0f}",
        "",
    ]
    rows.append(tuple(total))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _passed(stats: ToolStats) -> int:
    return sum(not e.failed for e in stats.edges)


def _edges_ok(stats: ToolStats) -> str:
    """Boundary cases that passed every check, of those run."""
    return f"{_passed(stats)}/{len(stats.edges)}"


def render_edges(report: FuzzReport) -> str:
    """Per tool: the boundary cases run and how they ended, the edges exercised per field,
    each failing or dropped edge with its reason."""
    lines = []
    for t in report.tools:
        if not t.edges and not t.edges_dropped:
            continue
        ended = ", ".join(f"{n} {kind}" for kind, n in sorted(t.edge_counts().items()))
        dropped = f", {len(t.edges_dropped)} dropped" if t.edges_dropped else ""
        lines.append(f"{t.tool}: {len(t.edges)} edge cases ({ended}){dropped}")
        lines.append(f"  {t.edge_summary}")
        for e in t.edges:
            if e.failed:
                lines.append(f"  FAILED {e.edge}: ended {e.ended}; broke {', '.join(e.failed)}")
        for d in t.edges_dropped:
            lines.append(f"  DROPPED {d.label}: {d.reason}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys
    from pathlib import Path

    from evals.run.targets import make_target

    parser = argparse.ArgumentParser(
        prog="python -m evals.run.fuzz", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--target", default="inprocess", help="inprocess[:k=v,..], stdio:<cmd> or an http(s) URL"
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default")
    parser.add_argument("--valid", type=int, help="valid examples per tool (overrides the profile)")
    parser.add_argument(
        "--invalid", type=int, help="invalid examples per tool (overrides the profile)"
    )
    parser.add_argument("--tool", action="append", help="only this tool (repeatable)")
    parser.add_argument(
        "--error-limit-ms",
        type=float,
        default=10_000.0,
        help="max time for an input error (a hang detector: speed is measured by the benchmarks)",
    )
    parser.add_argument(
        "--index-dir",
        help="checksum these databases before and after (default: the reference index for inprocess targets)",
    )
    parser.add_argument("--family", action="append", help="only this case family (repeatable)")
    parser.add_argument("--seed", type=int, help="the run's seed (default: a random one, reported)")
    parser.add_argument(
        "--database",
        default=".hypothesis/fuzz",
        help="hypothesis example database directory ('' keeps it in memory)",
    )
    parser.add_argument(
        "--health-every", type=int, help="tools/list after every Nth case (and every failure)"
    )
    parser.add_argument("--out", default="reports/runs/fuzz", help="directory for fuzz.json")
    parser.add_argument(
        "--house-rules",
        choices=["auto", "on", "off"],
        default="auto",
        help="also enforce this project's conventions (auto: on for inprocess targets only)",
    )
    parser.add_argument(
        "--allow-writes",
        action="store_true",
        help="also call tools that may change state (destructive or not declared read-only)",
    )
    parser.add_argument(
        "--examples",
        help="known-good inputs: a JSON/YAML file mapping tool name -> list of argument objects",
    )
    parser.add_argument(
        "--no-edges",
        action="store_true",
        help="skip the boundary cases from the schema (run before random generation by default)",
    )
    parser.add_argument(
        "--golden",
        help="known-good inputs from golden scenarios naming any tool (default for inprocess: golden/)",
    )
    args = parser.parse_args(argv)
    clock = Clock()

    profile = PROFILES[args.profile]
    config = FuzzConfig(
        valid=args.valid if args.valid is not None else profile["valid"],
        invalid=args.invalid if args.invalid is not None else profile["invalid"],
        error_limit_ms=args.error_limit_ms,
        seed=args.seed,
        tools=args.tool,
        families=args.family,
        database=args.database or None,
        health_every=args.health_every or profile["health_every"],
        house_rules=(
            args.target.startswith("inprocess")
            if args.house_rules == "auto"
            else args.house_rules == "on"
        ),
        allow_writes=args.allow_writes,
        edges=not args.no_edges,
        examples=known_inputs(args.examples, args.golden, args.target),
        # a stdio or in-process server inherits this process's environment; HTTP ones do not
        canary=None if args.target.startswith("http") else f"ocm-canary-{secrets.token_hex(16)}",
    )
    index_dir = args.index_dir
    if args.target.startswith("inprocess"):
        # The server runs in this process: its own log of each refused call is noise here (the
        # fuzzer judges the responses), so only its critical messages are shown.
        import logging

        logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
        logging.getLogger("reference_server").setLevel(logging.ERROR)
    if index_dir is None and args.target.startswith("inprocess"):
        from reference_server.config import Settings

        index_dir = str(Settings.from_env().index_dir)

    def progress(stats: ToolStats, failures: list[Failure]) -> None:
        print(
            f"  {stats.tool}: {stats.tried} cases, {stats.failures} failures, slowest {stats.slowest_ms:.0f} ms",
            file=sys.stderr,
            flush=True,
        )
        for failure in failures[:3]:
            verdict = "FAIL" if fails(failure.grade, house_rules=config.house_rules) else "NOTE"
            print(f"    {verdict} {failure.describe()[:400]}", file=sys.stderr, flush=True)

    if config.seed is None:
        config.seed = random.randrange(2**32)
    print(
        f"fuzzing {args.target} ({args.profile}: {config.valid} valid + {config.invalid} invalid "
        f"per tool), seed {config.seed}",
        file=sys.stderr,
    )
    report = run_fuzz(
        make_target(args.target),
        config,
        profile=args.profile,
        index_dir=index_dir,
        progress=progress,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = {
        **report.to_json(),
        "table": render_table(report),
        "edges": render_edges(report),
        "config": asdict(config),
    }
    (out / "fuzz.json").write_text(json.dumps(log, indent=1, ensure_ascii=False) + "\n")
    head = header("fuzz", clock, 0 if report.ok else 1, target=args.target, settings=log["config"])
    write_record(out, head, log, ["fuzz.json"])
    print(render_table(report))
    if report.tools and any(t.edges or t.edges_dropped for t in report.tools):
        print("\nboundary cases (from each inputSchema, before random generation):")
        print(render_edges(report))
    for skipped in report.skipped:
        print(f"SKIPPED {skipped.tool}: {skipped.reason}")
    for failure in report.failures[:50]:
        verdict = "FAIL" if fails(failure.grade, house_rules=report.house_rules) else "NOTE"
        print(f"{verdict} {failure.describe()}")
    if len(report.failures) > 50:
        print(f"... {len(report.failures) - 50} more findings in {out / 'fuzz.json'}")
    counts = ", ".join(f"{grade} {n}" for grade, n in report.counts().items())
    rules = "with" if report.house_rules else "without"
    print(f"findings by grade ({rules} house rules): {counts}")
    if report.databases_unchanged is not None:
        print(f"databases: {report.database_note}")
    print(
        f"{'OK' if report.ok else 'FAILED'}: {len(report.failing)} failing findings in {report.seconds:.0f} s "
        f"(seed {report.seed}); run log {out / 'fuzz.json'}"
    )
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
