"""Section rows for tests of the section tools' merge step, without an index."""

from __future__ import annotations

from typing import Any

from reference_server.retrieval.opa_section_rows import SectionRow


def section_row(section_id: str, **fields: Any) -> SectionRow:
    """A parent section row with empty document fields, `fields` set."""
    base: dict[str, Any] = {
        "section_id": section_id,
        "document_id": section_id.split(":")[0],
        "parent_id": None,
        "chunk_type": "parent",
        "section_idx": 0,
        "chunk_idx": None,
        "section_heading": "",
        "text": "",
        "policy_level": None,
        "ipac": None,
        "source_org": "cpso",
        "document_type": "policy",
        "document_title": "",
        "source_url": "",
        "policy_number": None,
        "published_date": None,
        "effective_date": None,
        "updated_date": None,
        "review_date": None,
        "topics": (),
        "is_superseded": False,
        "superseded_by": None,
    }
    return SectionRow(**{**base, **fields})
