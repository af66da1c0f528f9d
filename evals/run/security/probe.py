"""How every family calls a tool: the probe's own values on top of schema-valid arguments,
and, when the server refuses the arguments the probe did not choose, the call again with
other valid ones, so the probe reaches the code behind the argument it tests.

- :func:`valid_args`: the smallest plausible value of every required argument
  (:func:`.inputs.base_args`) when that satisfies the published schema; otherwise the
  schema-valid call the boundary-case builder makes (:mod:`evals.run.schema_edges`: ``pattern``,
  ``format``, bounds, ``anyOf`` sets honoured), as fuzz does;
- :func:`probe_call`: one probe; an error that refuses the input (:mod:`.refusal`) and names an
  argument the probe did not set, or names none, is retried (at most ``MAX_RETRIES`` times)
  with that argument given another valid value: what the error says a valid value looks like
  (a pattern it quotes, values it lists), the schema's examples, default and enum values,
  values the description quotes, the boundary builder's values, plain candidates. The call
  that ends the probe carries ``reach``: ``reached`` (an answer, a tool error from the tool's
  own code, a timeout or a crash), ``refused`` (the server refused the probe's own value:
  checked, and the server said no) or ``unreached`` with ``could not reach: <reason>``; the
  attempts before it carry ``retried``.
"""

from __future__ import annotations

import json
import random
import re
from functools import lru_cache

import jsonschema

from evals.json_pointer import resolve
from evals.run.edge_text import anchored_width, fitted
from evals.run.schema_edges import SchemaEdges, schema_edges
from evals.run.security.findings import ReachRow
from evals.run.security.inputs import STRING_CANDIDATES, base_args, kind, plain
from evals.run.security.refusal import Refusal, refusal
from evals.run.security.session import Call, Session
from evals.run.security.surface import ToolSurface
from ocm_common.json_types import Arguments, JsonSchema, JsonValue

MAX_RETRIES = 4
REACHED, REFUSED, RETRIED, UNREACHED = "reached", "refused", "retried", "unreached"
COUNTED = (REACHED, REFUSED)  # a probe that ended so checked something
DESCRIBED = re.compile(
    r"(?:e\.g\.|eg\.|for example|such as|like)\s*:?\s*['\"`]?([\w.:@/+\-]{1,40})"
)
QUOTED_IN_TEXT = re.compile(r"['\"`]([\w.:@/+\-]{1,40})['\"`]")


def _key(schema: JsonSchema) -> str:
    return json.dumps(schema, sort_keys=True, default=str)


@lru_cache(maxsize=256)
def _validator(key: str) -> jsonschema.protocols.Validator | None:
    try:
        schema = json.loads(key)
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        return cls(schema, format_checker=cls.FORMAT_CHECKER)  # type: ignore[no-any-return]
    except (jsonschema.exceptions.SchemaError, ValueError, TypeError):
        return None


def problems(schema: JsonSchema, args: Arguments) -> list[str]:
    """The top-level argument names (or ``(arguments)``) the schema refuses in ``args``."""
    validator = _validator(_key(schema))
    if validator is None:
        return []
    try:
        errors = list(validator.iter_errors(args))
    except Exception:  # an unresolvable $ref, a cycle: the schema cannot judge the call
        return []
    return [str(e.absolute_path[0]) if e.absolute_path else "(arguments)" for e in errors]


@lru_cache(maxsize=256)
def _edges(key: str) -> SchemaEdges:
    try:
        return schema_edges(json.loads(key))
    except Exception:  # a schema the edge builder cannot walk: no edges, minimal values stay
        return SchemaEdges()


def edges(schema: JsonSchema) -> SchemaEdges:
    """The boundary calls of the schema (each schema-valid), built once per schema."""
    return _edges(_key(schema))


def valid_args(schema: JsonSchema) -> Arguments:
    """Every required argument with a value the published schema accepts (see the module)."""
    minimal = base_args(schema)
    if not problems(schema, minimal):
        return minimal
    built = edges(schema).edges
    plain_call = next((e for e in built if e.field == "(optional)" and e.what == "none"), None)
    if plain_call is not None:
        return dict(plain_call.args)
    return dict(built[0].args) if built else minimal


def _typed(value: str, schema: JsonSchema) -> JsonValue:
    t = kind(schema)
    try:
        if t == "integer":
            return int(value)
        if t == "number":
            return float(value)
        if t == "boolean":
            return {"true": True, "false": False}[value.lower()]
    except (ValueError, KeyError):
        return None
    return value


def _from_pattern(pattern: str) -> list[str]:
    width = anchored_width(pattern)
    lengths = [width[0], min(width[1], width[0] + 8)] if width else [3, 8, 1, 16]
    out = []
    for n, length in enumerate(dict.fromkeys(lengths)):
        made = fitted(pattern, "words", length, random.Random(n))
        if made is not None:
            out.append(made[0])
    return out


def candidates(
    name: str, schema: JsonSchema, found: Refusal | None, built: SchemaEdges
) -> list[JsonValue]:
    """Other values to try for argument ``name``, most telling first (see the module)."""
    s = plain(schema)
    values: list[JsonValue] = []
    if found is not None:
        for pattern in found.patterns:
            values += _from_pattern(pattern)
        values += [_typed(v, s) for v in found.values]
    examples = s.get("examples")
    if isinstance(examples, list):
        values += examples
    if "default" in s:
        values.append(s["default"])
    if "const" in s:
        values.append(s["const"])
    values += list(s.get("enum") or [])
    text = str(s.get("description") or "")
    values += [_typed(v, s) for v in DESCRIBED.findall(text) + QUOTED_IN_TEXT.findall(text)]
    values += [e.args[name] for e in built.edges if name in e.args]
    t = kind(s)
    if t in (None, "string"):
        values += list(STRING_CANDIDATES)
    elif t in ("integer", "number"):
        values += [0, 1, 10, 100]
    elif t == "boolean":
        values += [True, False]
    seen: set[str] = set()
    out: list[JsonValue] = []
    for value in values:
        key = json.dumps(value, sort_keys=True, default=str)
        if value is not None and key not in seen:
            seen.add(key)
            out.append(value)
    return out


def alternatives(
    schema: JsonSchema, args: Arguments, fixed: Arguments, found: Refusal | None
) -> list[Arguments]:
    """Other argument sets for a refused probe: the probe's own values kept, an argument the
    refusal named (or, when it names none, any argument the probe did not set) given another
    value, each set accepted by the schema apart from the probe's own values."""
    resolved: JsonSchema = resolve(schema, schema)
    props = {k: v for k, v in (resolved.get("properties") or {}).items() if isinstance(v, dict)}
    named = [n for n in (found.names if found else ()) if n not in fixed and n in props]
    targets = (
        named
        or [n for n in props if n not in fixed and n in args]
        or [n for n in props if n not in fixed]
    )
    built = edges(schema)
    out: list[Arguments] = []
    for name in targets:
        for value in candidates(name, props[name], found, built):
            trial = {**args, name: value}
            if trial == args or trial in out:
                continue
            if any(p not in fixed for p in problems(schema, trial)):
                continue
            out.append(trial)
    if not named:  # a refusal of the call as a whole: every other valid call, the probe kept
        for edge in built.edges:
            trial = {**edge.args, **fixed}
            if trial != args and trial not in out:
                out.append(trial)
    return out


def judge(call: Call, fixed: Arguments, names: list[str]) -> tuple[str, Refusal | None]:
    """``reached``, ``refused`` (only the probe's own arguments refused) or ``unreached`` (an
    argument the probe did not choose refused, or the whole call), with the refusal."""
    if call.status not in ("tool-error", "protocol-error") or call.unparsed:
        return REACHED, None
    found = refusal(call.text, call.args, names)
    if found is None:
        return REACHED, None
    others = [n for n in call.args if n not in fixed]
    if found.names:
        return (UNREACHED if found.names - set(fixed) else REFUSED), found
    return (UNREACHED if others else REFUSED), found


async def probe_call(
    session: Session,
    tool: ToolSurface,
    fixed: Arguments,
    purpose: str,
    *,
    base: Arguments | None = None,
    timeout_s: float | None = None,
) -> Call:
    """One probe of ``tool`` with ``fixed`` on top of valid arguments (``base`` when given),
    retried with other valid arguments while the server refuses the ones the probe did not
    choose; the returned call says whether the probe reached the tool."""
    schema = tool.input_schema
    args = {**(valid_args(schema) if base is None else base), **fixed}
    names = list(tool.properties)
    tried = [args]
    call = await session.call(tool.name, args, purpose, timeout_s=timeout_s)
    for _ in range(MAX_RETRIES):
        verdict, found = judge(call, fixed, names)
        if verdict != UNREACHED:
            call.reach = verdict
            if found is not None:
                call.reach_reason = found.reason
            return call
        following = next(
            (a for a in alternatives(schema, call.args, fixed, found) if a not in tried), None
        )
        if following is None:
            break
        call.reach, call.reach_reason = RETRIED, found.reason if found else ""
        tried.append(following)
        call = await session.call(tool.name, following, purpose, timeout_s=timeout_s)
    verdict, found = judge(call, fixed, names)
    call.reach = verdict
    if verdict == UNREACHED:
        reason = found.reason if found else call.text[:160]
        call.reach_reason = f"could not reach: {reason}"
    elif found is not None:
        call.reach_reason = found.reason
    return call


def reach_rows(calls: list[Call]) -> list[ReachRow]:
    """Per tool and probe (the family or check that made the calls): probes that reached the
    tool, probes the server refused (its own value named: checked), and the reasons of those
    that could not reach it. A call made without :func:`probe_call` counts as reached unless
    it failed."""
    counts: dict[tuple[str, str], tuple[list[int], list[str]]] = {}
    for call in calls:
        if call.reach == RETRIED:
            continue
        # [reached, refused], and the reason of each call that could not reach the tool
        tally, unreached = counts.setdefault((call.tool, call.purpose), ([0, 0], []))
        if call.reach == UNREACHED:
            unreached.append(call.reach_reason or "could not reach")
        elif call.reach == REFUSED:
            tally[1] += 1
        else:
            tally[0] += 1
    rows: list[ReachRow] = []
    for (tool, probe), ((reached, refused), unreached) in counts.items():
        reasons: dict[str, int] = {}
        for reason in unreached:
            reasons[reason] = reasons.get(reason, 0) + 1
        rows.append(
            {
                "tool": tool,
                "probe": probe,
                "reached": reached,
                "refused": refused,
                "unreached": sum(reasons.values()),
                "could_not_reach": [f"{n} x {r}" if n > 1 else r for r, n in reasons.items()],
            }
        )
    return sorted(rows, key=lambda r: (r["tool"], r["probe"]))


def counted(call: Call) -> bool:
    """The call checked something: it reached the tool or the server refused the probe."""
    return call.reach in COUNTED or not call.reach
