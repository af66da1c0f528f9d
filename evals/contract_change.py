"""One change between two tool surfaces: where it sits, what changed, and what it matters for
(compatibility, or poisoning review); the records every part of the contract diff produces."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from evals.contract_text import name_words, suspicion

Concern = Literal["compatibility", "poisoning", ""]
Kind = Literal["added", "removed", "changed"]


@dataclass(frozen=True)
class Change:
    pointer: str
    kind: Literal["added", "removed", "changed"]
    what: str  # tool, property, type, enum, required, const, or a constraint keyword
    before: Any = None
    after: Any = None
    breaking: bool = False
    concern: Concern = ""  # what the change matters for (a breaking one: compatibility)
    note: str = ""  # why it is suspicious, or a possible rename
    suspicious: bool = False  # text that adds instruction-like wording

    def __post_init__(self) -> None:
        if self.breaking and not self.concern:
            object.__setattr__(self, "concern", "compatibility")

    def describe(self) -> str:
        if self.kind == "changed":
            text = f"{self.what} changed: {_short(self.before)} -> {_short(self.after)}"
        else:
            value = self.after if self.kind == "added" else self.before
            text = f"{self.what} {self.kind}" + (f": {_short(value)}" if value is not None else "")
        return f"{text} ({self.note})" if self.note else text

    @property
    def review(self) -> bool:
        """Text a model reads (or a new argument or tool): to be read by a person."""
        return self.concern == "poisoning" or self.suspicious

    @property
    def marks(self) -> str:
        """``compatibility`` / ``compatibility, breaking`` / ``for review`` /
        ``for review, suspicious`` (a new required argument may be breaking and suspicious)."""
        marks = ["compatibility"] if self.concern == "compatibility" else []
        marks += ["breaking"] if self.breaking else []
        marks += ["for review"] if self.review else []
        marks += ["suspicious"] if self.suspicious else []
        return ", ".join(marks)


class ChangeJson(TypedDict):
    """A :class:`Change` as JSON: its fields in order (``dataclasses.asdict``)."""

    pointer: str
    kind: Kind
    what: str
    before: Any  # the schema fragment or text before (JSON value), None when added
    after: Any
    breaking: bool
    concern: Concern
    note: str
    suspicious: bool


def change_kind(a: Any, b: Any) -> Kind:
    return "added" if a is None else "removed" if b is None else "changed"


def text_change(pointer: str, what: str, before: Any, after: Any) -> Change:
    """A changed title, description or examples: marked for poisoning review, suspicious
    when it adds instruction-like wording."""
    why = suspicion(before, after)
    return Change(
        pointer, change_kind(before, after), what, before, after,
        concern="poisoning", note=why, suspicious=bool(why),
    )  # fmt: skip


def added_entry(pointer: str, what: str, name: str, breaking: bool = False) -> Change:
    """An added argument or tool: for review (a model reads its name and fills it in),
    suspicious when its name, read as words, asks for what :func:`suspicion` looks for; a
    breaking one (a new required argument) stays a compatibility change."""
    why = suspicion(None, name_words(name))
    return Change(
        pointer, "added", what, None, name, breaking,
        concern="compatibility" if breaking else "poisoning", note=why, suspicious=bool(why),
    )  # fmt: skip


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"
