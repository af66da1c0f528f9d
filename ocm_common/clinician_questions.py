"""A clinician-question file as evaluation cases: the one reading of the format, for the
calibration's split (reference_server/scoring/split.py) and for `ocm derive --questions`, which
asks any backend a team's own questions.

The file names, per tool, groups of questions and the guidance that answers them by official
URL; an answer is right when its first document is one of them (the URL as published, or a page
under it: a policy's "Advice to the Profession" lives below the policy's URL):

    opa.policy_check:
      - guidance: [https://www.cpso.on.ca/en/Physicians/Policies-Guidance/Policies/Consent-to-Treatment]
        questions:
          - "Is a 14-year-old able to agree to their own treatment?"

Each question becomes one case of its tool's family (`FAMILIES`), numbered in file order, so a
case's id stays the same for as long as the questions before it do. Questions a confidence was
never fitted on (`unfitted=True`: evals/unfitted_clinician_questions.yaml) take families of their
own (`UNFITTED_SUFFIX`), so a run reports and bounds them apart from the fitted ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

# each tool a question may be put to: its case family, and where its answer names its document
FAMILIES: dict[str, tuple[str, str]] = {
    "opa.policy_check": ("opa.clinician_policy", "policies[0].source_url"),
    "opa.search_sections": ("opa.clinician_search", "sections[0].source_url"),
}
CASE_PREFIX = "clinician."
UNFITTED_SUFFIX = "_unfitted"


def family_of(tool: str, unfitted: bool = False) -> str:
    """The case family of a tool's questions (fitted on, or never)."""
    return FAMILIES[tool][0] + (UNFITTED_SUFFIX if unfitted else "")


def all_families() -> set[str]:
    """Every family a question file's questions may take."""
    return {family_of(tool, unfitted) for tool in FAMILIES for unfitted in (False, True)}


Url = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^https?://\S+$")]
Question = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class QuestionFileError(ValueError):
    """A question file that cannot be read (the message names the file, the field and what is
    allowed)."""


class Group(BaseModel):
    """Questions that the same guidance answers."""

    model_config = ConfigDict(extra="forbid")

    guidance: list[Url] = Field(min_length=1)
    questions: list[Question] = Field(min_length=1)


def read(path: Path) -> dict[str, list[Group]]:
    """The file's groups per tool, every field checked."""
    try:
        content = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise QuestionFileError(f"{path}: cannot be read: {exc}") from None
    if not isinstance(content, dict) or not content:
        raise QuestionFileError(
            f"{path}: expected a mapping of tool to question groups; tools: {', '.join(FAMILIES)}"
        )
    out: dict[str, list[Group]] = {}
    for tool, groups in content.items():
        if tool not in FAMILIES:
            raise QuestionFileError(
                f"{path}: tool {tool!r} is not one questions can be put to; allowed: "
                f"{', '.join(FAMILIES)}"
            )
        if not isinstance(groups, list) or not groups:
            raise QuestionFileError(f"{path}: {tool}: expected a list of question groups")
        out[tool] = [_group(path, tool, i, g) for i, g in enumerate(groups)]
    return out


def _group(path: Path, tool: str, index: int, raw: Any) -> Group:
    try:
        return Group.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'group'}: {e['msg']}" for e in exc.errors()
        )
        raise QuestionFileError(
            f"{path}: {tool}[{index}]: {problems} (a group is guidance: [URL, ...] and "
            "questions: [text, ...])"
        ) from None


def cases(path: Path, unfitted: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The file's questions as cases (the records `ocm derive` writes), one family per tool."""
    out: dict[str, list[dict[str, Any]]] = {}
    for tool, groups in read(path).items():
        family, answer_url = family_of(tool, unfitted), FAMILIES[tool][1]
        for group in groups:
            for query in group.questions:
                number = len(out.get(family, [])) + 1
                out.setdefault(family, []).append(
                    {
                        "id": f"{CASE_PREFIX}{family}.{number:03d}",
                        "title": f"{query!r} answers from {group.guidance[0]}",
                        "tool": tool,
                        "args": {"query": query},
                        "ids_from": None,
                        "expect": [
                            {"check": "mentions", "path": answer_url, "value": [group.guidance]}
                        ],
                        "relevant": {},
                        "tags": ["clinician", f"family:{family}"],
                        "version": 1,
                        "source": f"{path.name} (hand-written)",
                    }
                )
    return out


def case_lines(path: Path) -> dict[str, list[str]]:
    """`cases` as JSON lines, one family per tool."""
    return {family: [json.dumps(c) for c in found] for family, found in cases(path).items()}
