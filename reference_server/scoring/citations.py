"""Citation formatting for guidance documents, exactly as the OPA spec gives it."""

from __future__ import annotations

import re
from typing import Any

ORG_NAMES = {
    "cpso": "College of Physicians and Surgeons of Ontario",
    "ontario_health": "Ontario Health (Cancer Care Ontario)",
    "cep": "Centre for Effective Practice",
    "pho": "Public Health Ontario",
    "moh": "Ministry of Health",
}


def slugify(text: str) -> str:
    """'Virtual Care and Patients' Best Interests' -> 'virtual-care-and-patients-best-interests'."""
    text = re.sub(r"['’`]", "", text.lower())
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def format_citation(
    document: dict[str, Any], section: dict[str, Any] | None = None
) -> dict[str, Any]:
    """'{Org}. {Title}, {Section} [Effective: {Date}]' plus the source URL with a slug anchor."""
    text = f"{ORG_NAMES.get(document['source_org'], document['source_org'])}. {document['title']}"
    if section and section.get("section_heading"):
        text += f", {section['section_heading']}"
    if document.get("effective_date"):
        text += f" [Effective: {document['effective_date']}]"
    anchor = (
        slugify(section["section_heading"]) if section and section.get("section_heading") else None
    )
    url = document["source_url"] + (f"#{anchor}" if anchor else "")
    return {"text": text, "url": url, "anchor": anchor}
