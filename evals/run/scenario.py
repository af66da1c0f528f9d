"""The golden scenario record and its loader.

One YAML record per scenario, validated by one pydantic model. ``version`` is bumped when a
scenario's meaning changes (the gate then stops comparing it with an older baseline), and
``source`` says where every expected value comes from, so no expectation is of unknown origin.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evals.run.checks import CheckSpec
from evals.run.id_lookup import IdLookup
from ocm_common.golden import GoldenFileError, golden_files, raw_records
from ocm_common.json_types import Arguments, as_json

CRITICAL = "critical"


class Scenario(BaseModel):
    """One golden scenario: a tool call, what its result must satisfy, and graded judgments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$")
    title: str = Field(min_length=1)
    tool: str
    args: Arguments = Field(default_factory=dict)
    # the id argument is the same backend's own id, found by asking its search first
    ids_from: IdLookup | list[IdLookup] | None = None
    expect: list[CheckSpec] = Field(default_factory=list)
    relevant: dict[str, int] = Field(default_factory=dict)
    reference: str | None = None
    reference_contexts: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    version: int = Field(ge=1)
    source: str = Field(min_length=1)

    @field_validator("args", mode="before")
    @classmethod
    def _json_args(cls, args: object) -> object:
        return as_json(args)

    @field_validator("tool")
    @classmethod
    def _tool_named(cls, tool: str) -> str:
        # Any tool name: one without a descriptor runs with the generic extractors
        # (evals/run/tool_descriptors.py); one the target lacks is left out as a missing tool.
        if not tool.strip():
            raise ValueError("tool must name the tool to call")
        return tool

    @field_validator("relevant")
    @classmethod
    def _grades(cls, relevant: dict[str, int]) -> dict[str, int]:
        bad = {doc: grade for doc, grade in relevant.items() if grade not in (1, 2, 3)}
        if bad:
            raise ValueError(f"relevance grades must be 1, 2 or 3; got {bad}")
        return relevant

    @field_validator("source")
    @classmethod
    def _source_not_blank(cls, source: str) -> str:
        if not source.strip():
            raise ValueError("source must say where the expected values come from")
        return source

    @property
    def lookups(self) -> list[IdLookup]:
        """The id lookups in order (their ids fill the argument in this order)."""
        if self.ids_from is None:
            return []
        return self.ids_from if isinstance(self.ids_from, list) else [self.ids_from]

    @property
    def critical(self) -> bool:
        return CRITICAL in self.tags

    @property
    def is_retrieval(self) -> bool:
        """Scenarios with graded judgments are retrieval queries; the rest are not."""
        return bool(self.relevant)

    @property
    def expects_error(self) -> bool:
        return any(spec.check == "tool_error" for spec in self.expect)

    def question(self) -> str:
        """The natural-language question, for LLM-judged metrics (falls back to the title)."""
        for key in ("question", "query", "topic", "situation"):
            value = self.args.get(key)
            if isinstance(value, str) and value.strip():
                return value
        return self.title


class ScenarioLoadError(ValueError):
    """A golden file that cannot be used; the message names the file and the field."""


def _format_validation(path: Path, index: int | None, error: ValidationError, raw: Any) -> str:
    where = f"{path}" if index is None else f"{path} [scenario #{index + 1}]"
    ident = raw.get("id") if isinstance(raw, dict) else None
    if ident:
        where += f" (id {ident!r})"
    lines = [f"{where}: invalid scenario"]
    for err in error.errors():
        loc = ".".join(str(part) for part in err["loc"]) or "(record)"
        lines.append(f"  field {loc}: {err['msg']}")
    return "\n".join(lines)


def parse_file(path: Path) -> list[Scenario]:
    """Scenarios in one file: YAML (a single record, or a list under ``scenarios:``) or JSON
    lines (one record per line, as derived case sets are written)."""
    try:
        records = raw_records(path)
    except GoldenFileError as exc:
        raise ScenarioLoadError(str(exc)) from None
    scenarios: list[Scenario] = []
    for index, raw in records:
        if not isinstance(raw, dict):
            where = path if index is None else f"{path} [scenario #{index + 1}]"
            raise ScenarioLoadError(
                f"{where}: a scenario must be a mapping, got {type(raw).__name__}"
            )
        try:
            scenarios.append(Scenario.model_validate(raw))
        except ValidationError as exc:
            raise ScenarioLoadError(_format_validation(path, index, exc, raw)) from None
    return scenarios


def load_scenarios(root: Path | str, *, select: Iterable[str] = ()) -> list[Scenario]:
    """Load and validate every golden scenario under ``root``; ids must be unique.

    ``select`` keeps only scenarios whose id or tags match one of the given strings.
    """
    root = Path(root)
    seen: dict[str, Path] = {}
    scenarios: list[Scenario] = []
    try:
        files = golden_files(root)
    except GoldenFileError as exc:
        raise ScenarioLoadError(str(exc)) from None
    for path in files:
        for scenario in parse_file(path):
            if scenario.id in seen:
                raise ScenarioLoadError(
                    f"{path}: field id: duplicate scenario id {scenario.id!r} "
                    f"(first defined in {seen[scenario.id]})"
                )
            seen[scenario.id] = path
            scenarios.append(scenario)
    wanted = set(select)
    if wanted:
        scenarios = [s for s in scenarios if s.id in wanted or wanted & set(s.tags)]
    return scenarios
