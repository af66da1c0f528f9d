"""Refit the calibrated confidence (scoring/calibrated.py) from derived cases run with their
features recorded: `ocm confidence <split | fit | judge>`.

    ocm derive --out build/calibration/all
    ocm confidence split --cases build/calibration/all \
        --out build/calibration/cases --per-family 400
    ocm run --golden build/calibration/cases/fit --out build/calibration/run-hybrid \
        --target inprocess:confidence_model=spec         (and :mode=vector, :mode=keyword)
    ocm confidence fit --run build/calibration/run-hybrid \
        --run build/calibration/run-vector --run build/calibration/run-keyword
    ocm run --golden build/calibration/cases/held_out ...   (judged by evals'
        calibration report; `judge` gives the same figures offline from recorded features)

`make calibrate` runs these steps. Every answer carries its features in
`confidence_basis.features` whichever confidence the server states, so a run log is all the fit
reads (plain JSON: this module imports nothing of the harness). One split, seeded (split.py): a case is in
the fit half when crc32("<seed>:<case id>") is even, else held out; the fit reads only the fit
half of each run, `judge` only the other.

Per family (the tools' `confidence_family`), a logistic regression on its few FAMILY_FEATURES
(scikit-learn, lbfgs, L2 with C, features standardised for the fit and stored back in raw units),
fitted on every answer of the fit half: the main run and each single-path run (what a failed or
timed-out path leaves), so single-path answers have data of their own. "Right": every check
passed but the checks on the confidence itself (as evals/read/calibration_answers.py counts it).

One coefficient is not fitted from the derived answers: `default_rule` (ADP, the split is the
core manual's general rule because the device's manual states none). Whether such a split is
the device's real one is decided by the Product Manuals, which the corpus does not hold, so the
derived checks cannot see it; the rule's record where the corpus can see it is its evidence
instead (GENERAL_RULE_EVIDENCE): of the manuals that state their own terms, those whose terms
are the general rule's. The coefficient moves the family's default-rule answers to that rate
((agree + 1) / (manuals + 2)), the answers themselves left out of the regression.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import NotRequired, TypedDict

import numpy as np
import yaml

from ocm_common.clinician_questions import CASE_PREFIX
from reference_server.scoring.calibrated import MODEL_FILE, SCHEMA_VERSION, parse
from reference_server.scoring.fit_answers import Answer, read_answers
from reference_server.scoring.fit_judge import judge
from reference_server.scoring.split import QUESTIONS, SEED, in_fit_half, split_cases

C = 1.0
ROUND = 6
# Each family's features: few, so its coefficients can be read. Chosen within the fit half (the
# candidates compared by 2-fold cross-validation on it, never on the held-out half) for
# calibration and ranking, and for coefficients whose signs say what the evidence says: the
# section tools on how far the first guidance stands out (margin), whether the question may mean
# a document the answer does not show (ambiguous), whether the leading section's words are the
# question's (lexical, search) or close to it (similarity, policy), whether the two paths led
# with different guidance and nothing in the words settled it (unsettled), whether a second
# guidance scored nearly as well and the words did not name the first (contested), and whether the
# answer is that no document addresses the question (no_answer: the probability such a flag is
# right); the other tools on whether both paths answered and the spec's score.
FAMILY_FEATURES: dict[str, tuple[str, ...]] = {
    "opa_search": (
        "spec_score",
        "margin",
        "ambiguous",
        "lexical",
        "no_answer",
        "unsettled",
        "contested",
    ),
    "opa_policy": (
        "spec_score",
        "margin",
        "ambiguous",
        "similarity",
        "no_answer",
        "unsettled",
        "contested",
        "title_elsewhere",
    ),
    "opa_tools": ("both_paths", "corroborated", "no_answer"),
    "odb": ("spec_score", "both_paths", "no_answer"),
    "schedule": ("spec_score", "both_paths", "no_answer"),
    "adp": ("spec_score", "both_paths", "default_rule"),
}
# The ADP manuals that state funding terms of their own (tools/adp/terms.py, read from
# ../shared/data/adp/adp_extraction.json): whether the general rule (75 % of the approved price,
# client 25 %) is what each states. Mobility, Communication Aids, Ocular Prostheses,
# Maxillofacial Extraoral and Orthotic Devices: a 25 % client portion (the rule); Grants: grant
# amounts; Real-Time CGM: a receiver at no cost, supplies up to a quantity; Respiratory: a
# positive airway pressure system's own funding amount, monitors rented (not the rule).
GENERAL_RULE_EVIDENCE = {"manuals": 8, "agree": 5}
FIXED = {"adp": {"default_rule": GENERAL_RULE_EVIDENCE}}
# Families fitted only on answers both paths gave: their evidence (whether the two paths lead with
# one guidance, `unsettled`) exists only then, and single-path answers in the fit pulled the
# both-path answers' calibration off (2-fold cross-validation within the fit half: opa_search ECE
# 0.038 -> 0.028, right at >= 0.9 99.0 -> 99.5 %). An answer one path gave takes the model's
# lowest bound instead (calibrated.py, `paths: both`).
BOTH_PATHS_ONLY = frozenset({"opa_search", "opa_policy"})
# Flags that mark an answer as doubtful. The slopes spread a flag's answers by their other
# features, and where few were fitted they lift some far above the rate their like were right:
# new clinician questions (written apart from the fitted ones) had wrong unsettled answers at
# 0.8-0.9. So each family whose features include a flag stores a ceiling for it: the rate,
# Laplace-smoothed, at which the most confident quarter (TOP_SHARE) of the fit half's flagged
# both-path answers were right; calibrated.py states no flagged answer above it. Chosen by 2-fold
# cross-validation within the fit half (5 seeds), over which flags (unsettled; + no_answer;
# + ambiguous) and which share (all flagged answers, the top half, third or quarter, or a plain
# "below 0.9"): unsettled and no_answer at the top quarter gave the section families' lowest
# ECE together (search 0.046 -> 0.040, policy 0.033 -> 0.020) and left policy no wrong answer
# at >= 0.9 (5.4 before). Ambiguous answers are right about half the time at any fitted value, so
# a ceiling drawn from a few dozen of them moved with the sample.
# The slopes that rank flagged answers are learnt from derived cases, worded from the guidance
# itself; on clinicians' own wording they do not hold (new clinician questions, written apart
# from the fitted ones: policy answers flagged unsettled stood at 0.80-0.83 and were wrong 5
# times in 8). So where a family's fit half holds at least MIN_CLINICIAN_FLAGGED
# clinician questions with a doubt flag, no flag's ceiling exceeds the rate, Laplace-smoothed,
# at which they were right: the flag's meaning for the questions the server is asked.
# `contested` joined the flags when the clinician questions' wrong answers at >= 0.8 that no flag
# marked were mostly answers whose second guidance scored close behind and whose words named
# neither (scoring/features.py has its thresholds and how they were chosen). `title_elsewhere`
# joined when those left were answers both paths led with, by a clear margin, from a policy
# whose title lies farther from the question than another's (tools/guidance_titles.py).
DOUBT_FLAGS = ("unsettled", "no_answer", "contested", "title_elsewhere")
TOP_SHARE = 0.25
MIN_CLINICIAN_FLAGGED = 10


class FixedNote(TypedDict):
    """A coefficient set from evidence other than the derived answers (FIXED), and why."""

    manuals: int
    agree: int
    rate: float
    answers: int
    why: str


class FamilyBody(TypedDict):
    """One family's entry in the calibration file, in the order it is written."""

    model: str
    features: list[str]
    coefficients: list[float]
    intercept: float
    n: int
    right: int
    fitted_on: int
    tools: list[str]
    paths: str
    ceilings: NotRequired[dict[str, float]]
    fixed: NotRequired[dict[str, FixedNote]]


class FittedRun(TypedDict):
    target: str | None
    answers: int


class CalibrationContent(TypedDict):
    """The calibration file as `fit` writes it (calibrated.parse reads it back)."""

    version: int
    fitted: str
    command: str
    split: dict[str, int | str]
    runs: list[FittedRun]
    families: dict[str, FamilyBody]


# ----------------------------------------------------------------------------- fit


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    result: np.ndarray = 1.0 / (1.0 + np.exp(-z))
    return result


def fit_family(name: str, answers: Sequence[Answer], c: float = C) -> FamilyBody:
    """One family's logistic model as the calibration file stores it."""
    from sklearn.linear_model import LogisticRegression

    names = FAMILY_FEATURES[name]
    fixed = FIXED.get(name, {})
    if name in BOTH_PATHS_ONLY:
        answers = [a for a in answers if a.features.get("both_paths")]
    fitted_names = [n for n in names if n not in fixed]
    used = [a for a in answers if not any(a.features.get(f, 0.0) for f in fixed)]
    x = np.array([[a.features[n] for n in fitted_names] for a in used], dtype=float)
    y = np.array([a.right for a in used], dtype=int)
    coefficients = dict.fromkeys(names, 0.0)
    if y.size == 0:
        raise ValueError(f"family {name}: no answers in the fit half")
    if y.min() == y.max():  # one class: its rate, Laplace-smoothed, whatever the features
        intercept = _logit((y.sum() + 1) / (y.size + 2))
    else:
        mean, std = x.mean(axis=0), x.std(axis=0)
        varies = std > 0
        xs = (x[:, varies] - mean[varies]) / std[varies]
        model = LogisticRegression(C=c, solver="lbfgs", max_iter=10_000).fit(xs, y)
        raw = model.coef_[0] / std[varies]
        intercept = float(model.intercept_[0] - np.sum(raw * mean[varies]))
        for n, coef in zip(
            [n for n, v in zip(fitted_names, varies, strict=True) if v], raw, strict=True
        ):
            coefficients[n] = float(coef)
    notes: dict[str, FixedNote] = {}
    for feature, evidence in fixed.items():
        rate = (evidence["agree"] + 1) / (evidence["manuals"] + 2)
        hit = [a for a in answers if a.features.get(feature, 0.0)]
        # as the answers are normally given: both paths answered
        pool = [a for a in hit if a.features.get("both_paths")] or hit or list(answers)
        z = intercept + np.array(
            [sum(coefficients[n] * a.features[n] for n in fitted_names) for a in pool]
        )
        before = float(np.mean(_sigmoid(z)))
        before = min(max(before, 1e-6), 1 - 1e-6)
        coefficients[feature] = _logit(rate) - _logit(before)
        notes[feature] = {
            "manuals": evidence["manuals"],
            "agree": evidence["agree"],
            "rate": round(rate, 4),
            "answers": len(hit),
            "why": "not fitted on derived answers (their checks cannot see whether the general "
            "rule is the device's split): set so these answers' mean probability is the rate "
            "at which the manuals that state terms agree with the rule",
        }
    ceilings = _ceilings(names, coefficients, intercept, answers)
    body: FamilyBody = {
        "model": "logistic",
        "features": list(names),
        "coefficients": [round(coefficients[n], ROUND) for n in names],
        "intercept": round(intercept, ROUND),
        "n": len(answers),
        "right": int(sum(a.right for a in answers)),
        "fitted_on": len(used),
        "tools": sorted({a.tool for a in answers}),
        "paths": "both" if name in BOTH_PATHS_ONLY else "any",
    }
    if ceilings:
        body["ceilings"] = ceilings
    if notes:
        body["fixed"] = notes
    return body


def _ceilings(
    names: Sequence[str],
    coefficients: dict[str, float],
    intercept: float,
    answers: Sequence[Answer],
) -> dict[str, float]:
    """Each doubt flag's ceiling (DOUBT_FLAGS): the Laplace-smoothed rate at which the most
    confident TOP_SHARE of the flagged answers both paths gave were right, by fitted probability,
    and at most the rate of the family's flagged clinician questions (MIN_CLINICIAN_FLAGGED)."""
    out: dict[str, float] = {}
    for flag in DOUBT_FLAGS:
        if flag not in names:
            continue
        flagged = [
            a for a in answers if a.features.get(flag, 0.0) > 0 and a.features.get("both_paths")
        ]
        if not flagged:
            continue
        z = [intercept + sum(coefficients[n] * a.features[n] for n in names) for a in flagged]
        # the top share by fitted logit, with every answer tied at its edge (order-free)
        edge = sorted(z, reverse=True)[max(1, int(len(z) * TOP_SHARE)) - 1]
        top = [a for value, a in zip(z, flagged, strict=True) if value >= edge - 1e-9]
        out[flag] = _laplace(top)
    clinician = [
        a
        for a in answers
        if a.case_id.startswith(CASE_PREFIX)
        and a.features.get("both_paths")
        and any(a.features.get(flag, 0.0) > 0 for flag in out)
    ]
    if len(clinician) >= MIN_CLINICIAN_FLAGGED:
        cap = _laplace(clinician)
        out = {flag: min(value, cap) for flag, value in out.items()}
    return out


def _laplace(answers: Sequence[Answer]) -> float:
    """The rate at which the answers were right, Laplace-smoothed, as the file stores it."""
    return round((sum(a.right for a in answers) + 1) / (len(answers) + 2), 4)


def fit(runs: Sequence[Path], seed: int = SEED, c: float = C) -> CalibrationContent:
    """The calibration file's content from the fit half of every run."""
    answers = [a for run in runs for a in read_answers(run) if in_fit_half(a.case_id, seed)]
    by_family: dict[str, list[Answer]] = defaultdict(list)
    for a in answers:
        by_family[a.family].append(a)
    families = {
        name: fit_family(name, by_family[name], c) for name in FAMILY_FEATURES if by_family[name]
    }
    return {
        "version": SCHEMA_VERSION,
        "fitted": date.today().isoformat(),
        "command": "ocm confidence fit "
        + " ".join(f"--run {r.name}" for r in runs)
        + f" --seed {seed} --C {c}",
        "split": {
            "seed": seed,
            "rule": 'fit half: crc32("<seed>:<case id>") even; held out: odd',
        },
        "runs": [
            {
                "target": _target(r),
                "answers": sum(1 for a in answers if a.run == r.name),
            }
            for r in runs
        ],
        "families": families,
    }


def _target(run: Path) -> str | None:
    """The target a run log names (its run record's header), to say what was fitted on."""
    try:
        header = json.loads((run / "run.record.json").read_text(encoding="utf-8"))["header"]
    except (OSError, KeyError, ValueError):
        return None
    target = header.get("target")
    return str(target) if target else None


# ----------------------------------------------------------------------------- command


def _dump(content: CalibrationContent) -> str:
    return yaml.safe_dump(content, sort_keys=False, width=100)


def build_parser(prog: str = "ocm confidence") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("split", help="derived cases -> fit/ and held_out/ halves")
    s.add_argument("--cases", type=Path, required=True, help="`evals derive --out` folder")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--per-family", type=int, default=None, help="seeded sample per family")
    s.add_argument(
        "--questions",
        type=Path,
        default=QUESTIONS,
        help=f"hand-written clinician questions (default {QUESTIONS.name}; a missing file adds none)",
    )
    f = sub.add_parser("fit", help="fit the models on the fit half of run logs")
    f.add_argument("--run", type=Path, action="append", required=True, help="run log folder")
    f.add_argument("--out", type=Path, default=MODEL_FILE, help=f"default: {MODEL_FILE}")
    f.add_argument("--C", type=float, default=C, help="inverse L2 strength (default 1.0)")
    j = sub.add_parser("judge", help="a model on the held-out half of run logs (offline)")
    j.add_argument("--run", type=Path, action="append", required=True)
    j.add_argument("--model", type=Path, default=MODEL_FILE)
    for p in (s, f, j):
        p.add_argument("--seed", type=int, default=SEED, help=f"split seed (default {SEED})")
    parser.set_defaults(func=dispatch)
    return parser


def dispatch(args: argparse.Namespace) -> int:
    """Split the derived cases, fit the models, or judge a model (`args.command`)."""
    if args.command == "split":
        counts = split_cases(args.cases, args.out, args.per_family, args.seed, args.questions)
        for family, halves in counts.items():
            print(f"{family:36} fit {halves['fit']:5d}  held out {halves['held_out']:5d}")
        return 0
    if args.command == "fit":
        content = fit(args.run, args.seed, args.C)
        parse(content)  # what the server will read
        args.out.write_text(_dump(content), encoding="utf-8")
        for name, body in content["families"].items():
            terms = ", ".join(
                f"{n} {c:+.3f}" for n, c in zip(body["features"], body["coefficients"], strict=True)
            )
            print(
                f"{name:11} n {body['n']:5d} right {body['right']:5d}  b {body['intercept']:+.3f}  {terms}"
            )
        print(f"wrote {args.out}")
        return 0
    print(f"{'scope':32} {'n':>5} {'acc':>6} {'ECE':>6} {'AUROC':>6} {'n>=.9':>6} {'acc>=.9':>7}")
    for row in judge(args.run, args.model, args.seed):
        auroc = "-" if row["auroc"] is None else f"{row['auroc']:.3f}"
        high = "-" if row["high_accuracy"] is None else f"{row['high_accuracy']:.3f}"
        print(
            f"{row['scope']:32} {row['n']:5d} {row['accuracy']:6.3f} {row['ece']:6.3f} "
            f"{auroc:>6} {row['high_n']:6d} {high:>7}"
        )
    return 0
