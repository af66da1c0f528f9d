"""What every tool's request model shares: the free-text pattern (a visible character, no control
characters), the bounded free-text list item, and `StrictModel`, which rejects unknown fields
and enforces a rule between fields (`required_any_of`).

The published input schema and the input errors (`input_schema`) are worded from these.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Self

from pydantic import BaseModel, ConfigDict, StringConstraints, model_validator

from ocm_common.json_types import Arguments
from reference_server.errors import Problem

# Free text: at least one visible character and no control characters (tab, newline and carriage
# return are fine). Written without look-arounds so JSON Schema clients, hypothesis and pydantic's
# regex engine read it alike.
_CONTROL = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
NON_BLANK = rf"^[^{_CONTROL}]*[^\s{_CONTROL}][^{_CONTROL}]*$"
NON_BLANK_PROBLEM = "must contain a visible character and no control characters"


# A free-text list item (topics, risk factors, ids): non-blank, bounded, no control characters.
TextItem = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=NON_BLANK)]


class StrictModel(BaseModel):
    """Request models reject unknown fields, so a typo is an error rather than silently ignored.

    `required_any_of` states a rule between fields (at least one of these sets must be given);
    it is enforced here and published in the schema as `anyOf` of `required` sets, so the
    schema says exactly what the tool accepts.
    """

    model_config = ConfigDict(extra="forbid", regex_engine="python-re")
    required_any_of: ClassVar[tuple[tuple[str, ...], ...]] = ()

    @model_validator(mode="after")
    def _required_any_of(self) -> Self:
        if not type(self).required_any_of:
            return self
        problem = missing_required_set(type(self), self.model_dump(exclude_none=True))
        if problem:
            raise ValueError(problem.problem)
        return self


def missing_required_set(request: type[BaseModel], arguments: Arguments) -> Problem | None:
    """The cross-field rule's problem when none of the required sets is fully given."""
    sets: tuple[tuple[str, ...], ...] = getattr(request, "required_any_of", ())
    if not sets or any(all(arguments.get(f) is not None for f in s) for s in sets):
        return None
    options = [" + ".join(s) for s in sets]
    return Problem(
        "arguments",
        "give at least one of these (none was given)",
        options,
    )
