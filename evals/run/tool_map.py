"""Golden tool names mapped to a target's own (``--tool-map``), and the verdict on tools a
target lacks.

A team whose server names its tools differently (``search`` for ``opa.search_sections``) runs
the golden scenarios through :class:`MappedTarget`: calls go out under the target's names, and
``tools/list`` comes back under the golden ones, so records, aggregates, the run log's surface
and the report all speak the golden names (comparable with the reference's runs), and the map
itself is kept in the run's configuration.

A map is given as ``GOLDEN=THEIRS`` pairs (comma-separated, the option repeatable) or as a
YAML/JSON file holding one ``{golden: theirs}`` mapping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType

import yaml

from evals.run.outcome import BackendIdentity, CallOutcome, ToolInfo
from evals.run.targets import Target
from ocm_common.json_types import Arguments


class ToolMapError(ValueError):
    """A --tool-map that is neither a mapping file nor GOLDEN=THEIRS pairs."""


def parse_tool_map(values: Sequence[str]) -> dict[str, str]:
    """``{golden name: target's name}`` from files and ``a=b[,c=d]`` pair lists."""
    mapping: dict[str, str] = {}
    for value in values:
        path = Path(value)
        if "=" not in value and path.is_file():
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
            if not isinstance(loaded, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in loaded.items()
            ):
                raise ToolMapError(f"{value}: a tool map file holds one {{golden: theirs}} mapping")
            pairs: Iterable[tuple[str, str]] = loaded.items()
        else:
            pairs = [_pair(item, value) for item in value.split(",") if item.strip()]
        for golden, theirs in pairs:
            if mapping.get(golden, theirs) != theirs:
                raise ToolMapError(f"{golden} is mapped twice ({mapping[golden]}, {theirs})")
            mapping[golden] = theirs
    theirs_seen: dict[str, str] = {}
    for golden, theirs in mapping.items():
        if theirs in theirs_seen:
            raise ToolMapError(
                f"{theirs} is the target's name for both {theirs_seen[theirs]} and {golden}"
            )
        theirs_seen[theirs] = golden
    return mapping


def _pair(item: str, value: str) -> tuple[str, str]:
    golden, sep, theirs = item.partition("=")
    if not sep or not golden.strip() or not theirs.strip():
        raise ToolMapError(
            f"--tool-map {value!r}: give GOLDEN=THEIRS pairs or an existing mapping file"
        )
    return golden.strip(), theirs.strip()


class MappedTarget:
    """A target whose tools are called and listed under the golden names of ``mapping``."""

    def __init__(self, inner: Target, mapping: dict[str, str]) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.to_target = dict(mapping)
        self.to_golden = {theirs: golden for golden, theirs in mapping.items()}

    async def __aenter__(self) -> MappedTarget:
        await self.inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.inner.__aexit__(exc_type, exc, tb)

    def identity(self) -> BackendIdentity:
        identity = getattr(self.inner, "identity", None)
        return identity() if callable(identity) else {}

    async def list_tools(self) -> list[ToolInfo]:
        """The target's tools, a mapped one under its golden name (where the target also
        publishes a tool under that golden name, the mapped one stands for it)."""
        listed = await self.inner.list_tools()
        mapped = [
            dataclasses.replace(t, name=self.to_golden[t.name])
            for t in listed
            if t.name in self.to_golden
        ]
        shadowed = {t.name for t in mapped}
        rest = [t for t in listed if t.name not in self.to_golden and t.name not in shadowed]
        return sorted([*mapped, *rest], key=lambda t: t.name)

    async def call_tool(
        self, name: str, args: Arguments, *, timeout_s: float | None = None
    ) -> CallOutcome:
        return await self.inner.call_tool(self.to_target.get(name, name), args, timeout_s=timeout_s)

    def for_mode(self, mode: str) -> Target | None:
        reconfigured = self.inner.for_mode(mode)
        return MappedTarget(reconfigured, self.to_target) if reconfigured is not None else None


def missing_tools_lines(
    missing: Sequence[str],
    published: Sequence[str],
    wanted: Sequence[str],
    not_run: int,
    *,
    allowed: bool,
) -> list[str]:
    """What to say about golden tools the target lacks: which, what it publishes instead, and
    how to go on."""
    extra = sorted(set(published) - set(wanted))
    lines = [
        f"the target lacks {len(missing)} of {len(set(wanted))} golden tools: "
        f"{', '.join(missing)} ({not_run} scenario(s) not run)"
    ]
    if extra:
        lines.append(f"it publishes instead: {', '.join(extra[:30])}")
    if allowed:
        lines.append("--allow-missing: the scores cover the tools it has")
    else:
        lines.append(
            "map names with --tool-map GOLDEN=THEIRS (or a mapping file), or run the tools it "
            "has with --allow-missing"
        )
    return lines
