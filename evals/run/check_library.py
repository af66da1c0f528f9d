"""The golden checks themselves, each registered by name with ``@check`` (see checks.py for
the path semantics: a ``[*]`` path selects a list of matches)."""

from __future__ import annotations

import math
import re
from typing import Any

from evals.run.check_failures import (
    CheckFailure,
    ContainmentFailure,
    ItemsFailed,
    LengthMismatch,
    NotANumber,
    OutOfRange,
    PathNotFound,
    PatternMismatch,
    ValueMismatch,
    _show,
)
from evals.run.checks import CheckContext, CheckSpec, check, run_check
from evals.run.jsonpath import is_multi, resolve
from evals.run.public_keys import public_key


def value_at(ctx: CheckContext, spec: CheckSpec) -> Any:
    """The value a spec's path selects: the match list for wildcard paths."""
    matches = resolve(ctx.data, spec.path)
    if is_multi(spec.path):
        return matches
    if not matches:
        keys = sorted(ctx.data) if isinstance(ctx.data, dict) else type(ctx.data).__name__
        raise PathNotFound(spec.check, spec.path, "the path to exist", None, f"top level: {keys}")
    return matches[0]


def _scalars(ctx: CheckContext, spec: CheckSpec) -> list[Any]:
    """Values a scalar check must hold for: the one value, or every wildcard match (>= 1)."""
    if is_multi(spec.path):
        matches = resolve(ctx.data, spec.path)
        if not matches:
            raise PathNotFound(spec.check, spec.path, "at least one match", [])
        return matches
    return [value_at(ctx, spec)]


def _number(value: Any, spec: CheckSpec, expected: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise NotANumber(spec.check, spec.path, expected, value)
    return float(value)


def _fold(value: Any, ignore_case: bool) -> Any:
    return value.casefold() if ignore_case and isinstance(value, str) else value


def same_value(got: Any, want: Any, spec: CheckSpec) -> bool:
    if spec.tolerance is not None and isinstance(want, int | float) and not isinstance(want, bool):
        number = as_number(got)  # "$20.00" or "20 %" as a backend may state it
        if number is None:
            return False
        if abs(number - float(want)) <= spec.tolerance:
            return True
        # a share the field names as a percent, given as a fraction (0.75 for 75 %)
        percent = "percent" in spec.path.rsplit(".", 1)[-1].casefold()
        return percent and 0 <= number <= 1 and abs(number * 100 - float(want)) <= spec.tolerance
    if _fold(got, spec.ignore_case) == _fold(want, spec.ignore_case):
        return True
    # the same official URL, DIN, fee code or ADP section however either side spells it
    key = public_key(want) if isinstance(want, str) else None
    return key is not None and isinstance(got, str) and public_key(got) == key


def _contains(container: Any, needle: Any, ignore_case: bool) -> bool:
    if isinstance(container, str):
        return str(_fold(str(needle), ignore_case)) in str(_fold(container, ignore_case))
    if isinstance(container, dict):
        return needle in container
    if isinstance(container, list):
        wanted = _fold(needle, ignore_case)
        if any(_fold(item, ignore_case) == wanted for item in container):
            return True
        # a public key (an ADP manual section, a DIN, a fee code, an official URL) matches in
        # whatever spelling the answer gives it (evals/run/public_keys.py)
        key = public_key(needle)
        return key is not None and any(public_key(item) == key for item in container)
    return False


# ----------------------------------------------------------------------------- checks


@check("equals", needs=("value",))
def equals(ctx: CheckContext, spec: CheckSpec) -> None:
    """The value at path equals ``value`` (numbers within ``tolerance`` when given)."""
    got = value_at(ctx, spec)
    if not same_value(got, spec.value, spec):
        tol = f" ± {spec.tolerance}" if spec.tolerance is not None else ""
        raise ValueMismatch(spec.check, spec.path, f"{_show(spec.value)}{tol}", got)


@check("not_equals", needs=("value",))
def not_equals(ctx: CheckContext, spec: CheckSpec) -> None:
    """The value at path differs from ``value``."""
    got = value_at(ctx, spec)
    if same_value(got, spec.value, spec):
        raise ValueMismatch(spec.check, spec.path, f"anything but {_show(spec.value)}", got)


@check("contains", needs=("value",))
def contains(ctx: CheckContext, spec: CheckSpec) -> None:
    """A string contains ``value`` as a substring, a list holds it, a dict has it as a key."""
    got = value_at(ctx, spec)
    if not _contains(got, spec.value, spec.ignore_case):
        raise ContainmentFailure(spec.check, spec.path, f"to contain {_show(spec.value)}", got)


@check("not_contains", needs=("value",))
def not_contains(ctx: CheckContext, spec: CheckSpec) -> None:
    """The opposite of ``contains``."""
    got = value_at(ctx, spec)
    if _contains(got, spec.value, spec.ignore_case):
        raise ContainmentFailure(spec.check, spec.path, f"not to contain {_show(spec.value)}", got)


@check("at_least", needs=("value",))
def at_least(ctx: CheckContext, spec: CheckSpec) -> None:
    """Number(s) at path are >= ``value``."""
    bound = _number(spec.value, spec, "a numeric value in the spec")
    for got in _scalars(ctx, spec):
        if _number(got, spec, f"a number >= {bound}") < bound:
            raise OutOfRange(spec.check, spec.path, f">= {bound}", got)


@check("at_most", needs=("value",))
def at_most(ctx: CheckContext, spec: CheckSpec) -> None:
    """Number(s) at path are <= ``value``."""
    bound = _number(spec.value, spec, "a numeric value in the spec")
    for got in _scalars(ctx, spec):
        if _number(got, spec, f"a number <= {bound}") > bound:
            raise OutOfRange(spec.check, spec.path, f"<= {bound}", got)


@check("between", needs=("min", "max"))
def between(ctx: CheckContext, spec: CheckSpec) -> None:
    """Number(s) at path lie in [min, max]."""
    assert spec.min is not None and spec.max is not None
    for got in _scalars(ctx, spec):
        number = _number(got, spec, f"a number in [{spec.min}, {spec.max}]")
        if not spec.min <= number <= spec.max:
            raise OutOfRange(spec.check, spec.path, f"in [{spec.min}, {spec.max}]", got)


@check("confidence_range")
def confidence_range(ctx: CheckContext, spec: CheckSpec) -> None:
    """The confidence (path default ``confidence``) is in [min, max] (defaults 0 and 1)."""
    path = spec.path or "confidence"
    low = 0.0 if spec.min is None else spec.min
    high = 1.0 if spec.max is None else spec.max
    scoped = spec.model_copy(update={"path": path})
    for got in _scalars(ctx, scoped):
        number = _number(got, scoped, f"a confidence in [{low}, {high}]")
        if not low <= number <= high:
            raise OutOfRange(spec.check, path, f"confidence in [{low}, {high}]", got)


@check("matches", needs=("pattern",))
def matches(ctx: CheckContext, spec: CheckSpec) -> None:
    """String(s) at path match the regex ``pattern`` (``re.search``)."""
    assert spec.pattern is not None
    flags = re.IGNORECASE if spec.ignore_case else 0
    for got in _scalars(ctx, spec):
        if not isinstance(got, str) or re.search(spec.pattern, got, flags) is None:
            raise PatternMismatch(spec.check, spec.path, f"to match /{spec.pattern}/", got)


@check("length")
def length(ctx: CheckContext, spec: CheckSpec) -> None:
    """The list/string at path has between ``min`` and ``max`` items (either optional)."""
    got = value_at(ctx, spec)
    if not isinstance(got, list | str | dict):
        raise LengthMismatch(spec.check, spec.path, "a list, string or object", got)
    size = len(got)
    if (spec.min is not None and size < spec.min) or (spec.max is not None and size > spec.max):
        want = f"length in [{spec.min if spec.min is not None else 0}, {spec.max if spec.max is not None else 'inf'}]"
        raise LengthMismatch(spec.check, spec.path, want, got, f"length {size}")


@check("exists")
def exists(ctx: CheckContext, spec: CheckSpec) -> None:
    """The path selects a non-null value (for ``[*]`` paths: at least one)."""
    got = resolve(ctx.data, spec.path)
    if not [value for value in got if value is not None]:
        raise PathNotFound(spec.check, spec.path, "a non-null value", None)


def items_at(ctx: CheckContext, spec: CheckSpec) -> list[Any]:
    got = value_at(ctx, spec)
    if not isinstance(got, list):
        raise ItemsFailed(spec.check, spec.path, "a list", got)
    if not got and not spec.allow_empty:
        raise ItemsFailed(
            spec.check, spec.path, "a non-empty list", got, "set allow_empty to accept"
        )
    return got


def _item_failures(ctx: CheckContext, spec: CheckSpec, items: list[Any]) -> list[str]:
    assert spec.item is not None
    failures: list[str] = []
    for index, item in enumerate(items):
        try:
            run_check(ctx.on(item), spec.item)
        except CheckFailure as failure:
            failures.append(f"[{index}] {failure.message}")
    return failures


@check("every_item", needs=("item",))
def every_item(ctx: CheckContext, spec: CheckSpec) -> None:
    """The nested ``item`` check holds for every element of the list at path."""
    items = items_at(ctx, spec)
    failures = _item_failures(ctx, spec, items)
    if failures:
        shown = "; ".join(failures[:3]) + (
            f"; ... {len(failures) - 3} more" if len(failures) > 3 else ""
        )
        assert spec.item is not None
        raise ItemsFailed(
            spec.check,
            spec.path,
            f"every item to pass {spec.item.describe()}",
            f"{len(failures)}/{len(items)} failing",
            shown,
        )


@check("any_item", needs=("item",))
def any_item(ctx: CheckContext, spec: CheckSpec) -> None:
    """The nested ``item`` check holds for at least one element of the list at path."""
    items = items_at(ctx, spec)
    failures = _item_failures(ctx, spec, items)
    if len(failures) == len(items):
        assert spec.item is not None
        shown = "; ".join(failures[:3])
        raise ItemsFailed(
            spec.check,
            spec.path,
            f"some item to pass {spec.item.describe()}",
            f"0/{len(items)} passing",
            shown,
        )


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def as_number(value: Any) -> float | None:
    """A number as any backend may state it: 2.71, "2.71", "$2.71", "1,250.00" (None if none)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):
        match = _NUMBER.search(value)
        return float(match.group(0).replace(",", "")) if match else None
    return None
