"""ODB product notes: the extract's <note> elements (clinical criteria, availability,
interactions) at every level of the formulary tree, each tied to the products under it and
summarised in our own words (`odb_notes.csv`).

`odb` opens the notes of each level as it walks the tree; this module keeps them apart from
the drug, group and LU-code tables it flattens.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import TypedDict

from .textrules import summarise

NOTE_WORDS = 30  # product notes are summarised to at most this many words


@dataclass
class NoteRecord:
    """One distinct note text, with the levels it was seen at and the products under it."""

    text: str
    levels: set[str] = field(default_factory=set)
    dins: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    ingredients: list[str] = field(default_factory=list)


class NoteRow(TypedDict):
    """One odb_notes.csv row."""

    note_id: str
    scope: str
    summary: str
    n_dins: int
    dins: str
    group_ids: str
    ingredients: str


class ProductNotes:
    """The extract's <note> elements (clinical criteria, availability, interactions) at every
    level of the formulary tree, each tied to the products under it. Each distinct note text
    becomes one row whose `summary` is `textrules.summarise` of it (never the text itself)."""

    LEVELS = ("drug", "group", "ingredient", "subclass")  # most specific first

    def __init__(self) -> None:
        self._by_text: dict[str, NoteRecord] = {}

    def open(self, level: str, element: ET.Element) -> list[NoteRecord]:
        """The note records of `element` (created on first sight, in document order)."""
        out = []
        for note in element.findall("note"):
            text = " ".join((note.text or "").split())
            if not text:
                continue
            rec = self._by_text.get(text)
            if rec is None:
                rec = NoteRecord(text)
                self._by_text[text] = rec
            rec.levels.add(level)
            out.append(rec)
        return out

    @staticmethod
    def apply(records: list[NoteRecord], din: str, group: str, ingredient: str) -> None:
        for rec in records:
            for values, value in (
                (rec.dins, din),
                (rec.groups, group),
                (rec.ingredients, ingredient),
            ):
                if value and value not in values:
                    values.append(value)

    def rows(self) -> list[NoteRow]:
        rows: list[NoteRow] = []
        for i, rec in enumerate(self._by_text.values(), start=1):
            if not rec.dins:
                continue
            scope = next(level for level in self.LEVELS if level in rec.levels)
            rows.append(
                {
                    "note_id": f"N{i:03d}",
                    "scope": scope,
                    "summary": summarise(rec.text, max_words=NOTE_WORDS, first_clause=False),
                    "n_dins": len(rec.dins),
                    "dins": ";".join(sorted(rec.dins)),
                    "group_ids": ";".join(sorted(rec.groups)),
                    "ingredients": ";".join(sorted(rec.ingredients)),
                }
            )
        return rows


NOTE_COLUMNS = ["note_id", "scope", "summary", "n_dins", "dins", "group_ids", "ingredients"]
