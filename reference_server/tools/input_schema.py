"""The `inputSchema` a tool publishes, and the input error of a call that breaks it: every
problem, each naming its field and what the schema allows, in words a client can act on.
"""

from __future__ import annotations

from typing import Any

from fastmcp.utilities.json_schema import dereference_refs
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from reference_server.errors import Problem, ToolInputError
from reference_server.tools.request_model import (
    NON_BLANK,
    NON_BLANK_PROBLEM,
    missing_required_set,
)

# ----------------------------------------------------------------------------- published schema


def _drop_null_option(node: Any) -> Any:
    """`anyOf: [X, null]` (an optional parameter) becomes X: clients that fill parameters by
    type (the MCP Inspector CLI parses array/object values only when `type` says so) can then
    send lists and objects. Omitting the parameter is how a client says 'not given'."""
    if isinstance(node, list):
        return [_drop_null_option(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: _drop_null_option(v) for k, v in node.items()}
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            outer = {k: v for k, v in node.items() if k != "anyOf"}
            if outer.get("default", 0) is None:
                del outer["default"]
            node = {**rest[0], **outer}
    return node


def published_input_schema(request: type[BaseModel]) -> dict[str, Any]:
    """The `inputSchema` a tool publishes: self-contained (no `$ref`), optional parameters as
    their plain type, and rules between fields as `anyOf` of required sets."""
    raw = request.model_json_schema()
    schema: dict[str, Any] = _drop_null_option(dereference_refs(raw))
    sets = getattr(request, "required_any_of", ())
    if sets:
        schema["anyOf"] = [{"required": list(s)} for s in sets]
    return schema


# ----------------------------------------------------------------------------- input errors


def _schema_at(schema: dict[str, Any], loc: tuple[Any, ...]) -> dict[str, Any] | None:
    """The published (inlined) schema node for an error location."""
    node: Any = schema
    for part in loc:
        if not isinstance(node, dict):
            return None
        node = (
            node.get("items") if isinstance(part, int) else (node.get("properties") or {}).get(part)
        )
    return node if isinstance(node, dict) else None


def _number(x: Any) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def allowed_values(node: dict[str, Any] | None) -> list[Any] | str | None:
    """What a schema node accepts, in words a client can act on."""
    if not node:
        return None
    if "x-allowed" in node:  # a field's own wording for what it accepts (e.g. an alias pattern)
        return str(node["x-allowed"])
    if "enum" in node:
        return list(node["enum"])
    if "const" in node:
        return [node["const"]]
    kind = node.get("type")
    if kind in ("integer", "number"):
        lo, hi = node.get("minimum"), node.get("maximum")
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
            lo, hi = node.get("minLength", 1), node.get("maxLength")
            size = f"{lo} to {hi}" if hi else f"at least {lo}"
            return f"text of {size} characters with a visible character and no control characters"
        if "pattern" in node:
            return f"text matching the pattern {node['pattern']}"
        if "maxLength" in node:
            return f"text of {node.get('minLength', 0)} to {node['maxLength']} characters"
        return "text"
    if kind == "array":
        items = allowed_values(node.get("items"))
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
        names = sorted((node.get("properties") or {}).keys())
        return f"an object with fields {', '.join(names)}" if names else "an object"
    return None


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "arguments"


def _problem(err: ErrorDetails, schema: dict[str, Any]) -> Problem:
    loc = tuple(err.get("loc", ()))
    field_name = _field_name(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = _schema_at(schema, loc[:-1]) or {}
        return Problem(
            field_name, "unknown argument", sorted((parent.get("properties") or {}).keys())
        )
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
    schema: dict[str, Any],
    request: type[BaseModel] | None = None,
    arguments: dict[str, Any] | None = None,
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
