"""The loaded sources and the four tools' answers, independent of the MCP layer."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    def odb_get(self, args: dict[str, Any]) -> OdbResult:
        req = OdbRequest(
            drug=args.get("drug"),
            din=args.get("din"),
            ingredient=args.get("ingredient"),
            drug_class=args.get("drug_class"),
            q=args.get("q"),
            strength=args.get("strength"),
            form=args.get("form"),
            condition=args.get("condition"),
            check=args.get("check"),
            check_alternatives=args.get("check_alternatives", True),
            include_lu=args.get("include_lu", True),
            exclude_lu=args.get("exclude_lu", False),
            include_brand=args.get("include_brand", True),
            top_k=args.get("top_k", 5),
        )
        return OdbAnswer(self.formulary, self.defects).answer(req)

    def schedule_get(self, args: dict[str, Any]) -> ScheduleResult:
        return ScheduleAnswer(self.schedule, self.defects).answer(
            args["q"], args.get("codes"), args.get("include"), args.get("top_k", 6)
        )

    def adp_get(self, args: dict[str, Any]) -> AdpResult:
        device = args.get("device") or {}
        use = args.get("use_case") or {}
        req = AdpRequest(
            query=args.get("query"),
            category=device.get("category"),
            device_type=device.get("type"),
            checks=args.get("check"),
            patient_income=args.get("patient_income"),
            social_assistance=args.get("social_assistance"),
            daily=use.get("daily"),
            location=use.get("location"),
            independent_transfer=use.get("independent_transfer"),
        )
        return AdpAnswer(self.manuals, self.defects).answer(req)

    def source_passages(self, args: dict[str, Any]) -> PassagesResult:
        wanted = [str(x) for x in args["chunk_ids"]]
        terms = [str(t) for t in args.get("highlight_terms") or []]
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
