"""How a Dr. OFF passage writes its fields: Chroma metadata, numbers read from CSV cells, money."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from reference_server.index.types import MetaValue


def meta(**kw: Any) -> dict[str, MetaValue]:
    """Chroma metadata: drop None/empty, join lists with ';', keep str/int/float/bool."""
    out: dict[str, MetaValue] = {}
    for k, v in kw.items():
        if v is None or v == "" or v == []:
            continue
        if isinstance(v, (list, tuple, set)):
            v = ";".join(str(x) for x in v)
        if not isinstance(v, (str, int, float, bool)):
            v = str(v)
        out[k] = v
    return out


_N = TypeVar("_N", int, float)


def number(value: str | None, cast: Callable[[str], _N]) -> _N | None:
    """`cast(value)` for a filled CSV cell, None for an empty one."""
    return cast(value) if value else None


def money(v: str | float | None) -> str:
    if v in (None, ""):
        return "n/a"
    return f"${float(v):,.2f}" if float(v) >= 1 else f"${float(v):.4f}"
