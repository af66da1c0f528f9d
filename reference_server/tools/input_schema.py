"""The `inputSchema` a tool publishes, and the input error of a call that breaks it: every
problem, each naming its field and what the schema allows, in words a client can act on.
"""

from __future__ import annotations

from fastmcp.utilities.json_schema import dereference_refs
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ocm_common.json_types import Arguments, JsonObject, JsonValue
from reference_server.errors import Problem, ToolInputError
from reference_server.tools.request_model import (
    NON_BLANK,
    NON_BLANK_PROBLEM,
    missing_required_set,
)

# ----------------------------------------------------------------------------- published schema
#
# The schema is handled as the JSON object it is published as (fastmcp's `parameters`, and
# tool_search's tools, hold it as such); each keyword read from it is narrowed to what the
# JSON Schema vocabulary says it holds.


def _drop_null_option(node: JsonValue) -> JsonValue:
    """`anyOf: [X, null]` (an optional parameter) becomes X: clients that fill parameters by
    type (the MCP Inspector CLI parses array/object values only when `type` says so) can then
    send lists and objects. Omitting the parameter is how a client says 'not given'."""
    if isinstance(node, list):
        return [_drop_null_option(v) for v in node]
    if not isinstance(node, dict):
        return node
    return _drop_null_options_in(node)


def _drop_null_options_in(schema: JsonObject) -> JsonObject:
    """`_drop_null_option` of a schema object (every node below it too)."""
    node = {k: _drop_null_option(v) for k, v in schema.items()}
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1 and isinstance(rest[0], dict):
            outer = {k: v for k, v in node.items() if k != "anyOf"}
            if outer.get("default", 0) is None:
                del outer["default"]
            node = {**rest[0], **outer}
    return node


def published_input_schema(request: type[BaseModel]) -> JsonObject:
    """The `inputSchema` a tool publishes: self-contained (no `$ref`), optional parameters as
    their plain type, and rules between fields as `anyOf` of required sets."""
    raw = request.model_json_schema()
    schema = _drop_null_options_in(dereference_refs(raw))
    sets = getattr(request, "required_any_of", ())
    if sets:
        schema["anyOf"] = [{"required": list(s)} for s in sets]
    return schema


# ----------------------------------------------------------------------------- input errors


def _object(value: JsonValue) -> JsonObject | None:
    return value if isinstance(value, dict) else None


def _property_names(node: JsonObject) -> list[str]:
    """The names a schema node's `properties` declares, sorted."""
    return sorted(_object(node.get("properties")) or {})


def _schema_at(schema: JsonObject, loc: tuple[int | str, ...]) -> JsonObject | None:
    """The published (inlined) schema node for an error location."""
    node: JsonObject | None = schema
    for part in loc:
        if node is None:
            return None
        if isinstance(part, int):
            node = _object(node.get("items"))
        else:
            node = _object((_object(node.get("properties")) or {}).get(part))
    return node


def _bound(value: JsonValue) -> int | float | None:
    """A numeric keyword's value (`minimum`, `maximum`), or None when absent."""
    return value if isinstance(value, int | float) else None


def _number(x: int | float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def allowed_values(node: JsonObject | None) -> list[JsonValue] | str | None:
    """What a schema node accepts, in words a client can act on."""
    if not node:
        return None
    if "x-allowed" in node:  # a field's own wording for what it accepts (e.g. an alias pattern)
        return str(node["x-allowed"])
    if isinstance(enum := node.get("enum"), list):
        return list(enum)
    if "const" in node:
        return [node["const"]]
    kind = node.get("type")
    if kind in ("integer", "number"):
        lo, hi = _bound(node.get("minimum")), _bound(node.get("maximum"))
        noun = "an integer" if kind == "integer" else "a number"
        if lo is not None and hi is not None:
            return f"{noun} from {_number(lo)} to {_number(hi)}"
        if lo is not None:
            return f"{noun} >= {_number(lo)}"
        if hi is not None:
            return f"{noun} <= {_number(hi)}"
        return noun
    if kind == "string":
        if node.get("pattern") == NON_BLANK:
            lo_len, hi_len = node.get("minLength", 1), node.get("maxLength")
            size = f"{lo_len} to {hi_len}" if hi_len else f"at least {lo_len}"
            return f"text of {size} characters with a visible character and no control characters"
        if "pattern" in node:
            return f"text matching the pattern {node['pattern']}"
        if "maxLength" in node:
            return f"text of {node.get('minLength', 0)} to {node['maxLength']} characters"
        return "text"
    if kind == "array":
        items = allowed_values(_object(node.get("items")))
        bounds = (
            f"{node.get('minItems', 0)} to {node['maxItems']}"
            if "maxItems" in node
            else "any number of"
        )
        what = f"a list of {bounds} items"
        if isinstance(items, list):
            return f"{what}, each one of {', '.join(repr(i) for i in items)}"
        return f"{what}, each {items}" if items else what
    if kind == "boolean":
        return "true or false"
    if kind == "object":
        names = _property_names(node)
        return f"an object with fields {', '.join(names)}" if names else "an object"
    return None


def _field_name(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "arguments"


def _problem(err: ErrorDetails, schema: JsonObject) -> Problem:
    loc = tuple(err.get("loc", ()))
    field_name = _field_name(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = _schema_at(schema, loc[:-1]) or {}
        return Problem(field_name, "unknown argument", _property_names(parent))
    node = _schema_at(schema, loc)
    if kind == "missing":
        return Problem(field_name, "this argument is required", allowed_values(node))
    if kind == "string_pattern_mismatch" and node:
        problem = (
            NON_BLANK_PROBLEM if node.get("pattern") == NON_BLANK else "not in the accepted form"
        )
        return Problem(field_name, problem, allowed_values(node))
    message = str(err["msg"]).rstrip(".")
    allowed = allowed_values(node)
    if isinstance(allowed, list) and all(repr(a) in message for a in allowed):
        allowed = None  # pydantic's message already lists them
    return Problem(field_name, message, allowed)


def input_error(
    exc: ValidationError,
    schema: JsonObject,
    request: type[BaseModel] | None = None,
    arguments: Arguments | None = None,
) -> ToolInputError:
    """Every validation problem of the call, each naming its field and what is allowed."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for err in exc.errors():
        if err["type"] == "value_error" and not err.get("loc"):
            continue  # the cross-field rule, reported from the arguments below
        problem = _problem(err, schema)
        if problem.field not in seen:
            seen.add(problem.field)
            problems.append(problem)
    if request is not None:
        rule = missing_required_set(request, arguments or {})
        if rule:
            problems.append(rule)
    if not problems:  # a model-level rule of a tool's own: name it as the call's problem
        problems.append(
            Problem("arguments", str(exc.errors()[0]["msg"]).removeprefix("Value error, "))
        )
    return ToolInputError.from_problems(problems)
