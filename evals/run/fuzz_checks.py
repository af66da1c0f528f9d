"""The fuzz run's checks, each stating what it enforces and where the rule comes from.

A check has a grade:

- ``spec-must`` / ``spec-should``: the MCP specification (2025-11-25) or JSON-RPC 2.0 says MUST /
  SHOULD, and the check names the section;
- ``security``: a threat the specification leaves to implementers (a stack trace, a leaked
  secret) that the harness treats as a defect;
- ``house``: this project's own conventions (error wording, the text content being exactly the
  JSON of ``structuredContent``, every broken field named). They hold for the reference server
  and are opt-in for any other backend (``--house-rules``);
- ``warning``: worth a look, never a failure (a call that hangs past the client's limit).

Every call is first classified (answered, tool error, crash, protocol error, no answer), so a
crash (an internal JSON-RPC error, an error text that is an exception's, a server that stops
answering) is never mistaken for an ordinary tool error, and vice versa.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema

from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.security.secrets_leak import exception_signs, key_matches

Grade = Literal["spec-must", "spec-should", "security", "house", "warning"]
FAILING_GRADES: frozenset[Grade] = frozenset({"spec-must", "spec-should", "security"})
GRADES: tuple[Grade, ...] = ("spec-must", "spec-should", "security", "house", "warning")

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"
TOOL_ERRORS = f"{SPEC}/server/tools#error-handling"
OUTPUT_SCHEMA = f"{SPEC}/server/tools#output-schema"
STRUCTURED = f"{SPEC}/server/tools#structured-content"
TOOLS_SECURITY = f"{SPEC}/server/tools#security-considerations"
JSONRPC_RESPONSE = "https://www.jsonrpc.org/specification#response_object"
HOUSE = "ARCHITECTURE.md (this project's tool conventions)"

INTERNAL_ERROR = -32603
# the MCP SDK client's own codes for a closed connection and for no answer in time
CONNECTION_CLOSED, REQUEST_TIMEOUT = -32000, -32001
INPUT_ERRORS_AS_RESULTS = "2025-11-25"  # the first version asking for them (SEP-1303)
STACK_TRACE = re.compile(
    r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|^\s+at [\w.$]+\(", re.M
)
NOT_FOUND = re.compile(r"^\s*not found\b", re.I)
INPUT_ERROR = re.compile(r"invalid argument", re.I)

Kind = Literal["answered", "tool-error", "crash", "protocol-error", "no-answer"]
# How frameworks word an exception the tool did not handle (FastMCP: "Error calling tool 'x'",
# with or without the exception's message); a deliberate tool error keeps its own text.
UNHANDLED = re.compile(r"^Error calling tool '[^']*'", re.M)


def crash_signs(text: str) -> list[str]:
    signs = exception_signs(text)
    if UNHANDLED.search(text):
        signs.append("the framework's wording for an unhandled exception")
    return signs


@dataclass(frozen=True)
class Classified:
    """One call as the checks see it: the outcome (None without an answer), how it ended, and
    for a JSON-RPC error its code and message."""

    kind: Kind
    outcome: CallOutcome | None
    error_code: int | None = None
    error_text: str = ""
    timed_out: bool = False

    @property
    def text(self) -> str:
        return self.outcome.text if self.outcome is not None else self.error_text


def classify(outcome: CallOutcome | None, error: BaseException | None) -> Classified:
    """Answered, tool error, crash (internal error, or an error text showing an exception's
    internals), protocol error (another JSON-RPC error), or no answer (dropped, timed out)."""
    if outcome is not None:
        if not outcome.is_error:
            return Classified("answered", outcome)
        return Classified("crash" if crash_signs(outcome.text) else "tool-error", outcome)
    cause = error.__cause__ if error is not None and error.__cause__ is not None else error
    code = getattr(getattr(cause, "error", None), "code", None)
    text = str(cause or error or "")
    if code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):  # made up by the client: no answer came
        return Classified("no-answer", None, None, text, code == REQUEST_TIMEOUT)
    if isinstance(code, int):
        kind: Kind = "crash" if code == INTERNAL_ERROR or crash_signs(text) else "protocol-error"
        return Classified(kind, None, code, text)
    timed_out = isinstance(cause, TimeoutError) or "timed out" in text.lower()
    return Classified("no-answer", None, None, text, timed_out)


def ending(call: Classified) -> str:
    """How a call ended, for the report: its kind, with a tool error that says 'not found' (an
    id the corpus lacks, the one failure a schema-valid call may have) told apart."""
    if call.kind == "tool-error" and NOT_FOUND.search(call.text):
        return "not-found"
    return call.kind


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
    args: dict[str, Any] | None = None
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


RULES: dict[str, Rule] = {}


def rule(
    name: str, grade: Grade, enforces: str, reference: str, applies_to: tuple[str, ...]
) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        RULES[name] = Rule(name, grade, enforces, reference, applies_to, fn)
        return fn

    return register


BOTH = ("valid", "invalid")


# ----------------------------------------------------------------------------- the protocol


@rule(
    "answers",
    "spec-must",
    "every request gets a response (a result or a JSON-RPC error); the connection stays up",
    JSONRPC_RESPONSE,
    BOTH,
)
def _answers(call: Classified, ctx: Context) -> str | None:
    if call.kind == "no-answer" and not call.timed_out:
        return f"no response, the connection failed: {call.error_text[:300]}"
    return None


@rule(
    "no_hang",
    "warning",
    "a call answers within the client's time limit",
    f"{SPEC}/basic/lifecycle#timeouts",
    BOTH,
)
def _no_hang(call: Classified, ctx: Context) -> str | None:
    if call.kind == "no-answer" and call.timed_out:
        return f"no answer within the time limit: {call.error_text[:200]}"
    return None


@rule(
    "no_crash",
    "spec-should",
    "a failure inside a tool is reported as a tool result with isError (not an internal "
    "JSON-RPC error, not an exception's text)",
    TOOL_ERRORS,
    BOTH,
)
def _no_crash(call: Classified, ctx: Context) -> str | None:
    if call.kind != "crash":
        return None
    if call.error_code is not None:
        return f"JSON-RPC error {call.error_code}: {call.error_text[:300]}"
    signs = ", ".join(crash_signs(call.text))
    return f"the error text is an unhandled exception's ({signs}): {call.text[:300]!r}"


@rule(
    "output_schema",
    "spec-must",
    "a tool that publishes an outputSchema returns structuredContent that conforms to it",
    OUTPUT_SCHEMA,
    ("valid",),
)
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


@rule(
    "text_for_structured",
    "spec-should",
    "a result with structuredContent also carries it as text (its JSON; a wrapped single "
    "value may be its plain text)",
    STRUCTURED,
    ("valid",),
)
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


@rule(
    "input_refused",
    "spec-must",
    "arguments that break the published inputSchema are refused (servers must validate inputs)",
    TOOLS_SECURITY,
    ("invalid",),
)
def _input_refused(call: Classified, ctx: Context) -> str | None:
    if call.kind == "answered" and not coerced(ctx):
        names = ", ".join(repr(f) for f in ctx.fields) or "the call"
        return f"accepted without an error: {names}"
    return None


@rule(
    "strict_types",
    "warning",
    "a value of the wrong JSON type is refused even when it reads as the right one ('5' for 5)",
    TOOLS_SECURITY,
    ("invalid",),
)
def _strict_types(call: Classified, ctx: Context) -> str | None:
    if call.kind == "answered" and coerced(ctx):
        return f"converted a string to the declared type instead of refusing it: {ctx.fields}"
    return None


def coerced(ctx: Context) -> bool:
    """The case only gave a number or boolean as its text ("5", "true"): validators in lax
    mode (pydantic's default, the official SDKs) convert it, which validates the input."""
    if ctx.family != "wrong_type" or not ctx.args or len(ctx.fields) != 1:
        return False
    value = ctx.args.get(ctx.fields[0])
    node = schema_node(ctx.tool.input_schema, ctx.fields[0]) or {}
    kinds = node.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    if not isinstance(value, str):
        return isinstance(value, bool) and bool({"integer", "number"} & kinds)
    text = value.strip().lower()
    if "boolean" in kinds:
        return text in ("true", "false", "1", "0")
    try:
        number = float(text)
    except ValueError:
        return False
    return "number" in kinds or ("integer" in kinds and number.is_integer())


@rule(
    "input_error_as_result",
    "spec-should",
    "an input validation failure is a tool result with isError, so the model can correct it",
    TOOL_ERRORS,
    ("invalid",),
)
def _input_error_as_result(call: Classified, ctx: Context) -> str | None:
    # Before 2025-11-25 the specification asked for a JSON-RPC error here (invalid arguments
    # were a protocol error), so a server speaking an older version is judged by it.
    if ctx.protocol_version and ctx.protocol_version < INPUT_ERRORS_AS_RESULTS:
        return None
    if call.kind == "protocol-error":
        return f"refused with JSON-RPC error {call.error_code}, not a tool result: {call.error_text[:200]}"
    return None


# ----------------------------------------------------------------------------- security


@rule(
    "no_stack_trace",
    "security",
    "no stack trace reaches the client (tool outputs are sanitised)",
    TOOLS_SECURITY,
    BOTH,
)
def _no_stack_trace(call: Classified, ctx: Context) -> str | None:
    if STACK_TRACE.search(call.text):
        return f"stack trace in the response: {call.text[:200]!r}"
    return None


@rule(
    "no_secret_leak",
    "security",
    "no secret from the server's environment (the planted canary) or credential-shaped string "
    "in a result or error",
    TOOLS_SECURITY,
    BOTH,
)
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


@rule(
    "text_mirrors_structured",
    "house",
    "the text content is exactly the JSON of structuredContent",
    HOUSE,
    ("valid",),
)
def _text_mirrors(call: Classified, ctx: Context) -> str | None:
    out = call.outcome
    if call.kind != "answered" or out is None or out.structured is None:
        return None
    return (
        None
        if _same_json(out.text, out.structured)
        else "text content is not the JSON of structuredContent"
    )


@rule(
    "not_refused",
    "house",
    "a schema-valid call is never refused as invalid input (the schema states every constraint)",
    HOUSE,
    ("valid",),
)
def _not_refused(call: Classified, ctx: Context) -> str | None:
    if call.kind in ("tool-error", "protocol-error") and INPUT_ERROR.search(call.text):
        return f"schema-valid call refused as invalid input: {call.text[:300]!r}"
    return None


@rule(
    "no_internal_error",
    "house",
    "a schema-valid call fails only as 'not found' (an id the corpus lacks)",
    HOUSE,
    ("valid",),
)
def _no_internal_error(call: Classified, ctx: Context) -> str | None:
    if call.kind in ("tool-error", "protocol-error", "crash") and not (
        INPUT_ERROR.search(call.text) or NOT_FOUND.search(call.text)
    ):
        return f"schema-valid call failed: {call.text[:300]!r}"
    return None


@rule(
    "names_every_field",
    "house",
    "an input error names every broken field",
    HOUSE,
    ("invalid",),
)
def _names_fields(call: Classified, ctx: Context) -> str | None:
    if call.kind == "answered":
        return None
    missing = [f for f in ctx.fields if not mentions(call.text, f)]
    if missing:
        return f"error does not name {', '.join(repr(m) for m in missing)}: {call.text[:300]!r}"
    return None


@rule(
    "allowed_values",
    "house",
    "an input error lists a broken enum field's allowed values",
    HOUSE,
    ("invalid",),
)
def _allowed_values(call: Classified, ctx: Context) -> str | None:
    if call.kind == "answered":
        return None
    for name in ctx.fields:
        node = schema_node(ctx.tool.input_schema, name)
        enum = (node or {}).get("enum") or ((node or {}).get("items") or {}).get("enum")
        if enum and not any(str(v) in call.text for v in enum):
            return (
                f"error for {name!r} does not list its allowed values {enum}: {call.text[:200]!r}"
            )
    return None


@rule(
    "error_in_time",
    "house",
    "an input error comes back within the error time limit",
    HOUSE,
    ("invalid",),
)
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


def schema_node(schema: dict[str, Any], field_path: str) -> dict[str, Any] | None:
    node: Any = schema
    for part in re.split(r"\.|(?=\[)", field_path):
        if not part:
            continue
        if part.isdigit() or re.fullmatch(r"\[\d+\]", part):
            node = node.get("items") if isinstance(node, dict) else None
            continue
        node = (node.get("properties") or {}).get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


# ----------------------------------------------------------------------------- running them

STILL_SERVING = Rule(
    "still_serving",
    "spec-must",
    "after a case the server still answers tools/list",
    JSONRPC_RESPONSE,
    BOTH,
    lambda call, ctx: None,
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


def fails(grade: str, *, house_rules: bool) -> bool:
    """Whether a finding of this grade fails the run."""
    return grade in FAILING_GRADES or (house_rules and grade == "house")
