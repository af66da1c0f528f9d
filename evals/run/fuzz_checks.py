"""The fuzz run's checks: each names a rule of the one grading table
(evals/conformance/grading.py), which gives its grade, the sentence it enforces and where the
rule comes from, and says which case kinds (valid, invalid) it applies to. Calls are first
classified by the one classifier (evals/conformance/calls.py), so a crash is never mistaken
for an ordinary tool error, and vice versa. House rules hold for the reference server and are
opt-in for any other backend (``--house-rules``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema

from evals.conformance.calls import (
    STACK_TRACE,
    Classified,
    classify,
    crash_signs,
    ending,
)
from evals.conformance.canary import key_matches
from evals.conformance.grading import TABLE
from evals.run.outcome import ToolInfo
from evals.run.target_contract import UNREADABLE_REPLY
from ocm_common.findings import FAILING_GRADES, GRADES, Grade, fails
from ocm_common.json_types import Arguments, JsonSchema
from ocm_common.registry import Registry

__all__ = [
    "FAILING_GRADES",
    "GRADES",
    "RULES",
    "STILL_SERVING",
    "Classified",
    "Context",
    "Grade",
    "Rule",
    "classify",
    "ending",
    "fails",
    "rule_named",
    "run_checks",
]

INPUT_ERRORS_AS_RESULTS = "2025-11-25"  # the first version asking for them (SEP-1303)
NOT_FOUND = re.compile(r"^\s*not found\b", re.I)
INPUT_ERROR = re.compile(r"invalid argument", re.I)


@dataclass(frozen=True)
class Context:
    """What a check may read besides the call: the case kind, the fields broken on purpose, the
    tool, the time limit for an input error, and the canary planted in the server's environment."""

    kind: str  # "valid" or "invalid"
    fields: list[str]
    tool: ToolInfo
    error_limit_ms: float
    canary: str | None = None
    family: str = ""
    args: Arguments | None = None
    protocol_version: str = ""  # as negotiated; "" when unknown


CheckFn = Callable[[Classified, Context], str | None]


@dataclass(frozen=True)
class Rule:
    name: str
    grade: Grade
    enforces: str  # the rule in one sentence
    reference: str
    applies_to: tuple[str, ...]  # case kinds: "valid", "invalid"
    fn: CheckFn


RULES: Registry[Rule] = Registry("fuzz rule", entry_point_group="ocm.fuzz_rules")


def rule(name: str, applies_to: tuple[str, ...]) -> Callable[[CheckFn], CheckFn]:
    """Register a check for the graded rule ``name`` (its grade is the table's)."""
    graded = TABLE[name]
    return RULES.decorator(
        name,
        lambda fn: Rule(name, graded.grade, graded.enforces, graded.reference, applies_to, fn),
    )


BOTH = ("valid", "invalid")


# ----------------------------------------------------------------------------- the protocol


@rule("answers", BOTH)
def _answers(call: Classified, ctx: Context) -> str | None:
    if call.kind == "no-answer" and not call.timed_out:
        return f"no response, the connection failed: {call.error_text[:300]}"
    return None


@rule("no_hang", ("invalid",))
def _no_hang(call: Classified, ctx: Context) -> str | None:
    if call.kind == "no-answer" and call.timed_out:
        return f"no answer within the time limit: {call.error_text[:200]}"
    return None


@rule("answers_in_time", ("valid",))
def _answers_in_time(call: Classified, ctx: Context) -> str | None:
    if call.kind == "no-answer" and call.timed_out:
        return f"no answer within the time limit to a schema-valid input: {call.error_text[:200]}"
    return None


@rule("readable_reply", BOTH)
def _readable_reply(call: Classified, ctx: Context) -> str | None:
    # the stdio transport's own error for a reply it could not read (evals/run/stdio_process.py)
    if call.error_code == UNREADABLE_REPLY:
        return call.error_text[:400]
    return None


@rule("no_crash", BOTH)
def _no_crash(call: Classified, ctx: Context) -> str | None:
    if call.kind != "crash":
        return None
    if call.error_code is not None:
        return f"JSON-RPC error {call.error_code}: {call.error_text[:300]}"
    signs = ", ".join(crash_signs(call.text))
    return f"the error text is an unhandled exception's ({signs}): {call.text[:300]!r}"


@rule("output_schema", ("valid",))
def _output_schema(call: Classified, ctx: Context) -> str | None:
    out = call.outcome
    if call.kind != "answered" or out is None or ctx.tool.output_schema is None:
        return None
    if out.structured is None:
        return "no structuredContent although the tool publishes an outputSchema"
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(ctx.tool.output_schema).iter_errors(out.structured)
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"structuredContent field {where!r} violates the outputSchema: {error.message[:200]}"
    return None


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


@rule("text_for_structured", ("valid",))
def _text_for_structured(call: Classified, ctx: Context) -> str | None:
    out = call.outcome
    if call.kind != "answered" or out is None or out.structured is None:
        return None
    if _same_json(out.text, out.structured):
        return None
    # SDKs wrap a tool's single non-object value as {"result": value} and send the value as text
    wrapped = out.structured.get("result") if len(out.structured) == 1 else None
    if wrapped is not None and (_same_json(out.text, wrapped) or out.text == str(wrapped)):
        return None
    # ... and a list value as one text block per item
    if isinstance(wrapped, list) and out.text == "\n".join(
        x if isinstance(x, str) else json.dumps(x) for x in wrapped
    ):
        return None
    return "no text content carries the structuredContent"


@rule("input_refused", ("invalid",))
def _input_refused(call: Classified, ctx: Context) -> str | None:
    if call.kind == "answered" and not coerced(ctx):
        names = ", ".join(repr(f) for f in ctx.fields) or "the call"
        return f"accepted without an error: {names}"
    return None


@rule("strict_types", ("invalid",))
def _strict_types(call: Classified, ctx: Context) -> str | None:
    if call.kind == "answered" and coerced(ctx):
        return f"converted a string to the declared type instead of refusing it: {ctx.fields}"
    return None


def coerced(ctx: Context) -> bool:
    """The case gave a value of the declared type as its text ("5", "true", '["a"]', "{}"), or
    a boolean for a number: validators in lax mode (pydantic's default, the official SDKs,
    FastMCP's JSON pre-parsing) convert it, which validates the input. One rule, one grade
    (strict_types) whatever the declared type."""
    if ctx.family != "wrong_type" or not ctx.args or len(ctx.fields) != 1:
        return False
    value = ctx.args.get(ctx.fields[0])
    node = schema_node(ctx.tool.input_schema, ctx.fields[0]) or {}
    declared = node.get("type")
    kinds = set(declared) if isinstance(declared, list) else {declared}
    if not isinstance(value, str):
        return isinstance(value, bool) and bool({"integer", "number"} & kinds)
    text = value.strip().lower()
    if "boolean" in kinds:
        return text in ("true", "false", "1", "0")
    if {"array", "object"} & kinds:
        try:
            parsed = json.loads(value)
        except ValueError:
            return False
        shaped = ("array" in kinds and isinstance(parsed, list)) or (
            "object" in kinds and isinstance(parsed, dict)
        )
        return shaped and jsonschema.Draft202012Validator(node).is_valid(parsed)
    try:
        number = float(text)
    except ValueError:
        return False
    return "number" in kinds or ("integer" in kinds and number.is_integer())


@rule("input_error_as_result", ("invalid",))
def _input_error_as_result(call: Classified, ctx: Context) -> str | None:
    # Before 2025-11-25 the specification asked for a JSON-RPC error here (invalid arguments
    # were a protocol error), so a server speaking an older version is judged by it.
    if ctx.protocol_version and ctx.protocol_version < INPUT_ERRORS_AS_RESULTS:
        return None
    if call.kind == "protocol-error":
        return f"refused with JSON-RPC error {call.error_code}, not a tool result: {call.error_text[:200]}"
    return None


# ----------------------------------------------------------------------------- security


@rule("no_stack_trace", BOTH)
def _no_stack_trace(call: Classified, ctx: Context) -> str | None:
    if STACK_TRACE.search(call.text):
        return f"stack trace in the response: {call.text[:200]!r}"
    return None


@rule("no_secret_leak", BOTH)
def _no_secret_leak(call: Classified, ctx: Context) -> str | None:
    text = call.text
    if call.outcome is not None and call.outcome.structured is not None:
        text += json.dumps(call.outcome.structured, ensure_ascii=False, default=str)
    if ctx.canary and ctx.canary in text:
        return "the canary secret planted in the server's environment came back"
    keys = key_matches(text)
    if keys:
        return f"a credential-shaped string came back ({keys[0][0]})"
    return None


# ----------------------------------------------------------------------------- house rules


@rule("text_mirrors_structured", ("valid",))
def _text_mirrors(call: Classified, ctx: Context) -> str | None:
    out = call.outcome
    if call.kind != "answered" or out is None or out.structured is None:
        return None
    return (
        None
        if _same_json(out.text, out.structured)
        else "text content is not the JSON of structuredContent"
    )


@rule("not_refused", ("valid",))
def _not_refused(call: Classified, ctx: Context) -> str | None:
    if call.kind in ("tool-error", "protocol-error") and INPUT_ERROR.search(call.text):
        return f"schema-valid call refused as invalid input: {call.text[:300]!r}"
    return None


@rule("no_internal_error", ("valid",))
def _no_internal_error(call: Classified, ctx: Context) -> str | None:
    if call.kind in ("tool-error", "protocol-error", "crash") and not (
        INPUT_ERROR.search(call.text) or NOT_FOUND.search(call.text)
    ):
        return f"schema-valid call failed: {call.text[:300]!r}"
    return None


@rule("names_every_field", ("invalid",))
def _names_fields(call: Classified, ctx: Context) -> str | None:
    if call.kind == "answered":
        return None
    missing = [f for f in ctx.fields if not mentions(call.text, f)]
    if missing:
        return f"error does not name {', '.join(repr(m) for m in missing)}: {call.text[:300]!r}"
    return None


@rule("allowed_values", ("invalid",))
def _allowed_values(call: Classified, ctx: Context) -> str | None:
    if call.kind == "answered":
        return None
    for name in ctx.fields:
        node = schema_node(ctx.tool.input_schema, name)
        items = (node or {}).get("items") or {}
        enum = (node or {}).get("enum") or (items.get("enum") if isinstance(items, dict) else None)
        if enum and not any(str(v) in call.text for v in enum):
            return (
                f"error for {name!r} does not list its allowed values {enum}: {call.text[:200]!r}"
            )
    return None


@rule("error_in_time", ("invalid",))
def _in_time(call: Classified, ctx: Context) -> str | None:
    out = call.outcome
    if out is not None and out.latency_ms > ctx.error_limit_ms:
        return f"error took {out.latency_ms:.0f} ms (limit {ctx.error_limit_ms:.0f} ms)"
    return None


def mentions(text: str, field_path: str) -> bool:
    """The error names the field: its full path, or (for list items and nested fields) the
    top-level name, quoted or bare."""
    top = field_path.split(".")[0].split("[")[0]
    return field_path in text or top in text


def schema_node(schema: JsonSchema, field_path: str) -> JsonSchema | None:
    node: JsonSchema | list[JsonSchema] | bool | None = schema
    for part in re.split(r"\.|(?=\[)", field_path):
        if not part:
            continue
        if part.isdigit() or re.fullmatch(r"\[\d+\]", part):
            node = node.get("items") if isinstance(node, dict) else None
            continue
        node = (node.get("properties") or {}).get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


# ----------------------------------------------------------------------------- running them

_SERVING = TABLE["still_serving"]
# Checked by the fuzzer itself (a tools/list after the case), so it has no function here.
STILL_SERVING = Rule(
    _SERVING.name, _SERVING.grade, _SERVING.enforces, _SERVING.reference, BOTH, lambda c, x: None
)


def rules_for(kind: str, *, house_rules: bool) -> list[Rule]:
    return [
        r for r in RULES.values() if kind in r.applies_to and (house_rules or r.grade != "house")
    ]


def run_checks(call: Classified, ctx: Context, *, house_rules: bool) -> list[tuple[Rule, str]]:
    """(rule, message) for every rule the call breaks."""
    broken = []
    for r in rules_for(ctx.kind, house_rules=house_rules):
        message = r.fn(call, ctx)
        if message:
            broken.append((r, message))
    return broken


def rule_named(name: str) -> Rule:
    return STILL_SERVING if name == "still_serving" else RULES[name]
