"""Tool descriptors: where a tool's result holds its retrieved ids, answer text, passages and
confidence.

Data, not code: the twelve tools are described in ``evals/tool_descriptors.yaml``, and a golden
file ``<name>.yaml`` (or ``.jsonl``) may have a ``<name>.tools.yaml`` beside it, in the same
format, that adds tools the harness has never seen or overrides one. A tool described nowhere
still runs, with the generic behaviour (:data:`GENERIC`): its answer is the JSON of its result
and it retrieves no ids, so retrieval metrics are not measured for it.

The extractors (:mod:`evals.run.extract`) read a :class:`ToolDescriptors`; the runner is given
the one for its golden set (:func:`golden_descriptors`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from evals.run.jsonpath import PathSyntaxError, parse
from ocm_common.golden import TOOLS_SUFFIX, GoldenFileError, golden_files

DESCRIPTORS_FILE = Path(__file__).resolve().parent.parent / "tool_descriptors.yaml"


class ToolDescriptorError(ValueError):
    """A descriptor file that cannot be used; the message names the file, the tool and the field."""


def _result_path(path: str) -> str:
    if not path.strip():
        raise ValueError("a path must be a non-empty string such as 'items[*].code'")
    try:
        parse(path)
    except PathSyntaxError as exc:
        raise ValueError(str(exc)) from None
    return path


ResultPath = Annotated[str, AfterValidator(_result_path)]


class PublicId(BaseModel):
    """A retrieved item named by public fields instead of the backend's own id: each item
    under ``items`` is ``"<field 1> § <field 2>"`` (e.g. a section's official document URL
    and its heading), so judgments hold for any backend (evals/run/public_keys.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: ResultPath
    fields: tuple[str, ...] = Field(min_length=1, max_length=2)


class ToolDescriptor(BaseModel):
    """Where one tool's result holds what the harness measures (paths in jsonpath syntax)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ids: tuple[ResultPath, ...] = ()
    parent_ids: bool = False
    # when given, the ranked ids are these public names (items lacking a field fall back to ids)
    public_id: PublicId | None = None
    answer: tuple[ResultPath, ...] = ()
    contexts: tuple[ResultPath, ...] = ()
    organisation: str | None = None
    # where the result states the backend's own confidence in its answer, a number in [0, 1]
    # (calibration, evals/read/calibration.py); a result without a number there publishes none
    confidence: ResultPath = "confidence"
    # fields this project's server adds beyond the spec: a check reading one is "not checked"
    # on a backend that neither declares nor answers it (evals/run/extension_fields.py)
    extensions: tuple[ResultPath, ...] = ()

    @field_validator("organisation")
    @classmethod
    def _organisation(cls, organisation: str | None) -> str | None:
        if organisation is not None and not organisation.strip():
            raise ValueError("organisation must be a name such as 'ohip' (or left out)")
        return organisation

    @property
    def measures_ids(self) -> bool:
        """False: the tool names no ids, so retrieval metrics are not measured (not 0)."""
        return bool(self.ids)


GENERIC = ToolDescriptor()


@dataclass(frozen=True)
class ToolDescriptors(Mapping[str, ToolDescriptor]):
    """Descriptors by tool name, and the file each came from."""

    by_tool: Mapping[str, ToolDescriptor] = field(default_factory=dict)
    sources: Mapping[str, Path] = field(default_factory=dict)

    def __getitem__(self, tool: str) -> ToolDescriptor:
        return self.by_tool[tool]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_tool)

    def __len__(self) -> int:
        return len(self.by_tool)

    def of(self, tool: str) -> ToolDescriptor:
        """The tool's descriptor, or the generic one for a tool described nowhere."""
        return self.by_tool.get(tool, GENERIC)

    def overridden_by(
        self, path: Path, added: Mapping[str, ToolDescriptor] | None = None
    ) -> ToolDescriptors:
        """These descriptors with those of ``path`` (``added``, read from it if not given)
        added; a tool described in both gets ``path``'s."""
        added = load_file(path) if added is None else added
        return ToolDescriptors(
            {**self.by_tool, **added}, {**self.sources, **dict.fromkeys(added, path)}
        )


def _where(path: Path, tool: str | None = None) -> str:
    return f"{path}" if tool is None else f"{path}: tool {tool!r}"


def load_file(path: Path) -> dict[str, ToolDescriptor]:
    """The descriptors in one YAML file: a mapping of tool name to descriptor."""
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ToolDescriptorError(f"{path}: cannot read tool descriptors: {exc}") from None
    except yaml.YAMLError as exc:
        raise ToolDescriptorError(f"{path}: not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ToolDescriptorError(
            f"{path}: expected a mapping of tool name to descriptor, got {type(data).__name__}"
        )
    out: dict[str, ToolDescriptor] = {}
    for tool, raw in data.items():
        if not isinstance(tool, str) or not tool.strip():
            raise ToolDescriptorError(f"{path}: tool names must be non-empty strings, got {tool!r}")
        if not isinstance(raw, dict):
            raise ToolDescriptorError(
                f"{_where(path, tool)}: a descriptor must be a mapping (ids, parent_ids, answer, "
                f"contexts, organisation), got {type(raw).__name__}"
            )
        try:
            out[tool] = ToolDescriptor.model_validate(raw)
        except ValidationError as exc:
            lines = [f"{_where(path, tool)}: invalid tool descriptor"]
            for err in exc.errors():
                loc = ".".join(str(part) for part in err["loc"]) or "(descriptor)"
                lines.append(f"  field {loc}: {err['msg']}")
            raise ToolDescriptorError("\n".join(lines)) from None
    return out


@cache
def builtin() -> ToolDescriptors:
    """The descriptors of the twelve tools (``evals/tool_descriptors.yaml``)."""
    return ToolDescriptors().overridden_by(DESCRIPTORS_FILE)


def sidecar(golden_file: Path) -> Path:
    """``odb.yaml`` / ``odb.jsonl`` -> ``odb.tools.yaml`` beside it."""
    return golden_file.with_name(golden_file.stem + TOOLS_SUFFIX)


def golden_descriptors(root: Path | str) -> ToolDescriptors:
    """The built-in descriptors with those beside the golden files under ``root`` added.

    Two such files describing one tool differently are an error (which one would apply to
    the other's scenarios is not to be guessed); either may override a built-in descriptor.
    """
    try:
        files = golden_files(Path(root))
    except GoldenFileError as exc:
        raise ToolDescriptorError(str(exc)) from None
    descriptors = builtin()
    for path in (sidecar(p) for p in files):
        if not path.is_file():
            continue
        added = load_file(path)
        for tool, descriptor in added.items():
            first = descriptors.sources.get(tool)
            if first not in (None, DESCRIPTORS_FILE) and descriptors[tool] != descriptor:
                raise ToolDescriptorError(
                    f"{_where(path, tool)}: described differently in {first}; "
                    "describe a tool once per golden set"
                )
        descriptors = descriptors.overridden_by(path, added)
    return descriptors
