"""The calibration's one split, seeded: which cases the confidence models are fitted on and which
judge them (scoring/fit.py). A case is in the fit half when crc32("<seed>:<case id>") is even,
else held out. The derived cases (`evals derive`) are split family by family, a seeded sample of
each when asked; the hand-written clinician questions (clinician_questions.yaml) become one case
family per tool and are split by the same rule.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

from ocm_common.clinician_questions import case_lines

SEED = 20261129
# Clinician questions written for the fit (see the file's header).
QUESTIONS = Path(__file__).with_name("clinician_questions.yaml")


def in_fit_half(case_id: str, seed: int = SEED) -> bool:
    """The split: crc32 of "<seed>:<case id>" even -> fit, odd -> held out."""
    return zlib.crc32(f"{seed}:{case_id}".encode()) % 2 == 0


def split_cases(
    cases: Path,
    out: Path,
    per_family: int | None,
    seed: int = SEED,
    questions: Path | None = None,
) -> dict[str, dict[str, int]]:
    """Each family's cases (a seeded sample of `per_family` when given) into out/fit and
    out/held_out, one .jsonl per family as `evals derive` writes them; with `questions`, the
    hand-written clinician questions too (`clinician_cases`), split the same way."""
    counts: dict[str, dict[str, int]] = {}
    for name in ("fit", "held_out"):
        (out / name).mkdir(parents=True, exist_ok=True)
    for path in sorted(cases.glob("*.jsonl")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        ids = [json.loads(line)["id"] for line in lines]
        keep = set(range(len(lines)))
        if per_family is not None and len(lines) > per_family:
            order = sorted(
                range(len(lines)), key=lambda i: zlib.crc32(f"{seed}:s:{ids[i]}".encode())
            )
            keep = set(order[:per_family])
        halves: dict[str, list[str]] = {"fit": [], "held_out": []}
        for i, line in enumerate(lines):
            if i in keep:
                halves["fit" if in_fit_half(ids[i], seed) else "held_out"].append(line)
        for name, chosen in halves.items():
            (out / name / path.name).write_text("".join(f"{x}\n" for x in chosen), encoding="utf-8")
        counts[path.stem] = {name: len(chosen) for name, chosen in halves.items()}
    for family, lines in clinician_cases(questions).items():
        halves = {"fit": [], "held_out": []}
        for line in lines:
            halves["fit" if in_fit_half(json.loads(line)["id"], seed) else "held_out"].append(line)
        for name, chosen in halves.items():
            (out / name / f"{family}.jsonl").write_text(
                "".join(f"{x}\n" for x in chosen), encoding="utf-8"
            )
        counts[family] = {name: len(chosen) for name, chosen in halves.items()}
    return counts


def clinician_cases(questions: Path | None) -> dict[str, list[str]]:
    """The hand-written clinician questions as case lines, one family per tool (none when the
    file is absent)."""
    if questions is None or not questions.exists():
        return {}
    return case_lines(questions)
