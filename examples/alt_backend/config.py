"""Where the official files are, and which seeded defects are switched on."""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "ALT_BACKEND_DATA"
DEFECTS_ENV = "ALT_BACKEND_DEFECTS"

# Seeded defects (ALT_BACKEND_DEFECTS=name,name): each a small, realistic mistake the
# evaluation harness should notice.
DEFECTS: dict[str, str] = {
    "price": "odb.get prices 15% too high for DINs whose last digit is odd",
    "citations": "schedule.get returns no citations",
    "section": "adp.get cites the neighbouring section for funding rules",
    "slow": "adp.get sleeps 300 ms per call",
    "wrong_product": "odb.get answers another strength, silently, when the asked one is not listed",
    "missing_field": "odb.get leaves out a required top-level field (needs_more_info)",
    "highlights": "source.passages returns empty highlights",
}

REQUIRED_FILES = (
    "odb/odb-formulary-extract-2025-08-27.xml",
    "adp/adp_extraction.json",
    "adp/adp_funding_rule.csv",
    "adp/adp_exclusion.csv",
)


class DataMissing(RuntimeError):
    """The shared data folder (or one of its files) is not there."""


def data_dir() -> Path:
    """``$ALT_BACKEND_DATA``, else ``<repo>/../shared/data``."""
    configured = os.environ.get(DATA_ENV)
    if configured:
        return Path(configured).expanduser()
    repo = Path(__file__).resolve().parents[2]
    return repo.parent / "shared" / "data"


def check_data(root: Path) -> None:
    """Raise DataMissing with a one-line reason when a source file is absent."""
    if not root.is_dir():
        raise DataMissing(f"data folder {root} not found (set {DATA_ENV})")
    missing = [name for name in REQUIRED_FILES if not (root / name).is_file()]
    if not list((root / "ohip").glob("section_*_extracted.json")):
        missing.append("ohip/section_*_extracted.json")
    if missing:
        raise DataMissing(f"data folder {root} lacks {', '.join(missing)}")


def active_defects(raw: str | None = None) -> frozenset[str]:
    """The defect names switched on; an unknown name is an error, not silently ignored."""
    text = os.environ.get(DEFECTS_ENV, "") if raw is None else raw
    names = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(names - DEFECTS.keys())
    if unknown:
        known = ", ".join(DEFECTS)
        raise ValueError(f"unknown defect(s) {', '.join(unknown)}; known: {known}")
    return frozenset(names)
