"""The loaded sources and the four tools' answers, independent of the MCP layer."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from examples.alt_backend.adp import Manuals
from examples.alt_backend.adp_answer import AdpAnswer, AdpRequest
from examples.alt_backend.config import active_defects, check_data, data_dir
from examples.alt_backend.odb import Formulary
from examples.alt_backend.odb_answer import OdbAnswer
from examples.alt_backend.odb_request import OdbRequest
from examples.alt_backend.payloads import (
    AdpResult,
    OdbResult,
    PassageRow,
    PassagesResult,
    ScheduleResult,
)
from examples.alt_backend.schedule import Schedule
from examples.alt_backend.schedule_answer import ScheduleAnswer
from examples.alt_backend.store import PassageStore
from examples.alt_backend.text import highlight


class NotFound(LookupError):
    """None of the requested passage ids exists."""


@dataclass
class Backend:
    formulary: Formulary
    schedule: Schedule
    manuals: Manuals
    store: PassageStore
    defects: frozenset[str]
    load_seconds: float

    @classmethod
    def load(cls, root: Path | None = None, defects: frozenset[str] | None = None) -> Backend:
        """Parse the official files once (raises DataMissing when the folder is absent)."""
        started = time.perf_counter()
        folder = root or data_dir()
        check_data(folder)
        formulary = Formulary(folder / "odb" / "odb-formulary-extract-2025-08-27.xml")
        schedule = Schedule(folder / "ohip")
        manuals = Manuals(folder / "adp")
        store = PassageStore()
        formulary.passages(store)
        schedule.passages(store)
        manuals.passages(store)
        return cls(
            formulary,
            schedule,
            manuals,
            store,
            active_defects() if defects is None else defects,
            time.perf_counter() - started,
        )

    # ------------------------------------------------------------------ tools
    def odb_get(self, args: dict[str, JsonValue]) -> OdbResult:
        req = OdbRequest(
            drug=_text(args.get("drug")),
            din=_text(args.get("din")),
            ingredient=_text(args.get("ingredient")),
            drug_class=_text(args.get("drug_class")),
            q=_text(args.get("q")),
            strength=_text(args.get("strength")),
            form=_text(args.get("form")),
            condition=_text(args.get("condition")),
            check=_texts(args.get("check")),
            check_alternatives=_flag(args.get("check_alternatives"), True),
            include_lu=_flag(args.get("include_lu"), True),
            exclude_lu=_flag(args.get("exclude_lu"), False),
            include_brand=_flag(args.get("include_brand"), True),
            top_k=_count(args.get("top_k"), 5),
        )
        return OdbAnswer(self.formulary, self.defects).answer(req)

    def schedule_get(self, args: dict[str, JsonValue]) -> ScheduleResult:
        q = args["q"]
        if not isinstance(q, str):
            raise TypeError("q: a string is required")
        return ScheduleAnswer(self.schedule, self.defects).answer(
            q, _texts(args.get("codes")), _texts(args.get("include")), _count(args.get("top_k"), 6)
        )

    def adp_get(self, args: dict[str, JsonValue]) -> AdpResult:
        device = _object(args.get("device"))
        use = _object(args.get("use_case"))
        req = AdpRequest(
            query=_text(args.get("query")),
            category=_text(device.get("category")),
            device_type=_text(device.get("type")),
            checks=_texts(args.get("check")),
            patient_income=_number(args.get("patient_income")),
            social_assistance=_text(args.get("social_assistance")),
            daily=_maybe_flag(use.get("daily")),
            location=_text(use.get("location")),
            independent_transfer=_maybe_flag(use.get("independent_transfer")),
        )
        return AdpAnswer(self.manuals, self.defects).answer(req)

    def source_passages(self, args: dict[str, JsonValue]) -> PassagesResult:
        wanted = [str(x) for x in _texts(args["chunk_ids"]) or []]
        terms = [str(t) for t in _texts(args.get("highlight_terms")) or []]
        passages: list[PassageRow] = []
        missing: list[str] = []
        for chunk_id in dict.fromkeys(wanted):
            p = self.store.get(chunk_id)
            if p is None:
                missing.append(chunk_id)
                continue
            marks = [] if "highlights" in self.defects else highlight(p.text, terms)
            passages.append(
                {
                    "chunk_id": p.chunk_id,
                    "text": p.text,
                    "source": p.source,
                    "page": p.page,
                    "section": p.section,
                    "highlights": marks,
                }
            )
        if not passages:
            raise NotFound(f"passage id(s) not found: {', '.join(missing)}")
        return {"passages": passages, "total_chunks": len(passages), "missing_ids": missing}


# The arguments arrive validated against the tool's published inputSchema (server.py), so each
# is absent or of its schema's type; these read them as that type.
def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _texts(value: JsonValue) -> list[str] | None:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else None


def _flag(value: JsonValue, default: bool) -> bool:
    return value if isinstance(value, bool) else default


def _maybe_flag(value: JsonValue) -> bool | None:
    return value if isinstance(value, bool) else None


def _number(value: JsonValue) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: JsonValue, default: int) -> int:
    """An integer argument; JSON Schema also calls 5.0 an integer, which cannot slice a list
    (a TypeError, as it always was)."""
    if isinstance(value, float):
        raise TypeError(f"slice indices must be integers, not {value!r}")
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _object(value: JsonValue) -> dict[str, JsonValue]:
    return value if isinstance(value, dict) else {}
