"""One registry shape for everything registered by name: checks, fuzz rules, metrics, case
families and security families.

A registry refuses a second entry under a name already taken (two plug-ins claiming one name
is a programming error) and answers an unknown name with the names it knows. Plug-in modules
register on import; a registry that has them names them as module paths (``plugins``) and
imports them the first time it is read, so the registry module never imports its plug-ins and
no import circle runs between them (lm-eval-harness's ``Registry``).

A registry with an entry-point group (``ocm.checks``, ``ocm.case_families``, ...) also imports
every installed package's entry points in that group when first read, so a team adds a check, a
derived family or a security family from its own package, without editing this repository:

    [project.entry-points."ocm.checks"]
    team_checks = "team_package.checks"     # a module whose import registers with @check
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class PluginError(RuntimeError):
    """An installed plug-in that could not be imported (named with its entry point)."""


class Registry(Generic[T]):
    """Entries of one kind by name, in registration order."""

    def __init__(
        self, kind: str, plugins: tuple[str, ...] = (), entry_point_group: str | None = None
    ) -> None:
        self.kind = kind  # "check", "metric", "security family", ... (for messages)
        self.plugins = plugins
        self.entry_point_group = entry_point_group
        self._entries: dict[str, T] = {}
        self._loaded = not plugins and entry_point_group is None

    def add(self, name: str, entry: T) -> T:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} registered twice")
        self._entries[name] = entry
        return entry

    def decorator(self, name: str, make: Callable[[F], T]) -> Callable[[F], F]:
        """``@decorator(name, make)``: register ``make(fn)`` under ``name``, return ``fn``."""

        def register(fn: F) -> F:
            self.add(name, make(fn))
            return fn

        return register

    def load(self) -> Registry[T]:
        """Import the plug-in modules once (each registers its entries on import), then the
        installed packages' entry points of this registry's group."""
        if not self._loaded:
            self._loaded = True
            for module in self.plugins:
                importlib.import_module(module)
            if self.entry_point_group:
                for point in entry_points(group=self.entry_point_group):
                    try:
                        point.load()
                    except Exception as exc:
                        raise PluginError(
                            f"{self.kind} plug-in {point.name!r} ({point.value}, entry point "
                            f"group {self.entry_point_group!r}) failed to load: {exc}"
                        ) from exc
        return self

    def __getitem__(self, name: str) -> T:
        self.load()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise KeyError(f"Unknown {self.kind} {name!r}. Available: {known}") from None

    def get(self, name: str, default: T | None = None) -> T | None:
        self.load()
        return self._entries.get(name, default)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self.load()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self.load()
        return len(self._entries)

    def names(self) -> list[str]:
        self.load()
        return list(self._entries)

    def values(self) -> list[T]:
        self.load()
        return list(self._entries.values())

    def items(self) -> list[tuple[str, T]]:
        self.load()
        return list(self._entries.items())

    def unknown(self, names: list[str]) -> list[str]:
        """The names in ``names`` this registry does not know."""
        self.load()
        return [n for n in names if n not in self._entries]
