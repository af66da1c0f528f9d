"""Plain values that cross the target boundary, so nothing past it depends on fastmcp types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from ocm_common.json_types import JsonObject, JsonSchema

# A reference-server ``Settings`` override: a YAML scalar (``mode=keyword``), or a group of them
# under a dotted name (``faults.sql_delay_ms=200`` -> ``{"faults": {"sql_delay_ms": 200}}``).
SettingValue = str | int | float | bool | None | list["SettingValue"] | dict[str, "SettingValue"]
Overrides = dict[str, SettingValue]


class BackendIdentity(TypedDict, total=False):
    """What a target can say about the backend it reaches: the embedding model and index
    fingerprint (the in-process reference server); empty for other targets."""

    embedding_model: str
    index_fingerprint: str | None


@dataclass(frozen=True)
class ToolInfo:
    """A tool as published by ``tools/list``: name and its JSON schemas."""

    name: str
    input_schema: JsonSchema
    output_schema: JsonSchema | None = None
    description: str | None = None
    annotations: JsonObject = field(default_factory=dict)  # readOnlyHint, destructiveHint...
    execution: JsonObject = field(default_factory=dict)  # taskSupport (tasks, 2025-11-25)

    def accepts(self, argument: str) -> bool:
        """True when the published inputSchema declares ``argument`` (used for mode overrides)."""
        return argument in (self.input_schema.get("properties") or {})


@dataclass(frozen=True)
class CallOutcome:
    """One ``tools/call`` as the harness sees it.

    ``structured`` is the raw ``structuredContent`` (never re-validated by the client, so a
    schema-invalid response is judged by the ``schema_valid`` check instead of raising),
    ``text`` the joined text content (the error message when ``is_error``), ``meta`` the
    result ``_meta`` and ``latency_ms`` the wall time measured by the client.
    """

    structured: JsonObject | None
    is_error: bool
    text: str
    meta: JsonObject = field(default_factory=dict)
    latency_ms: float = 0.0

    @property
    def timings(self) -> dict[str, float | None]:
        """Server-reported per-path timings (``_meta.timings_ms``), empty when not reported."""
        raw = self.meta.get("timings_ms") if isinstance(self.meta, dict) else None
        if not isinstance(raw, dict):
            return {}
        out: dict[str, float | None] = {}
        for key, value in raw.items():
            out[str(key)] = float(value) if isinstance(value, int | float) else None
        return out
