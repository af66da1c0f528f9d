"""The evidence a calibrated confidence reads, in one place for every tool (tools/pipeline.py).

A tool's score step already knows what its answer rests on; it says so in `Signals` (scores of
the distinct answers it ranked, how many documents share the heading it matched, whether the
answer is a general default rule rather than the asked category's own, whether it found
nothing). The pipeline adds what it knows for every tool (which paths answered, the spec's
evidence counts and score, conflicts) and `features` turns both into plain floats, named and in a
fixed order (`FEATURES`), so a fitted model (scoring/calibrated.py) reads them the same way on
every machine.

Features (each in a small range, so a model's coefficients can be read):
  spec_score        the seeds' evidence score (scoring/confidence.py), 0-1
  both_paths        1 when the SQL and the vector path both answered
  corroborated      1 when the leading answer was found by both paths
  margin            (first - second) / first over the best scores of distinct answers
                    (guidance: a document with its companion; records): 1 with one answer, 0
                    with none or a tie
  shared            log2 of how many times more documents a short question may mean (their titles
                    and headings use all its subject words) than the answer shows of them (0: one
                    or none may be meant, or all are shown)
  default_rule      1 when the answer rests on a general default rule (ADP: the core manual's
                    "unless noted otherwise" split) rather than the asked category's own terms
  conflict          1 when the sources disagree (`conflicts` is not empty)
  no_answer         1 when the answer is that nothing answers (no document addresses the
                    question, no record found)
  similarity        the leading answer's vector similarity (0 without one)
  lexical           share of the question's subject words in the leading answer's title and
                    heading (0 when not measured)
  lead_unmatched    1 when some document's title and headings use every subject word of the
                    question but the leading answer's document does not (a heading asked as
                    written, answered from another document)
  paths_agree       1 when the keyword path's and the vector path's best sections are in the
                    same guidance (a document or its companion); 0 when they differ or a path
                    did not answer
  ambiguous         1 when `shared` > 0: the question may mean a document the answer does not
                    show (at the section it names); the derived answers so flagged are right
                    about half the time whatever else holds, which a slope on `shared` alone
                    does not say once the words match the leading heading
  unsettled         1 when both paths answered, they lead with different guidance (measured
                    by the section tools only), and the leading section's title and heading do
                    not use every subject word of the question: nothing but the fused ranking
                    chose between them
  contested         1 when both paths answered, the first guidance stands less than
                    CONTESTED_MARGIN clear of the second (`margin`), and the leading section's
                    title and heading use a third or fewer of the question's subject words: another
                    document was nearly as likely, and nothing in the words chose between them
                    (read by the section families' models only; other tools record it too)
  title_gap         how much nearer the leading answer's guidance title (with its topics) lies
                    to the question than any other guidance's, in cosine similarity (negative:
                    another's is nearer; 0 when not measured: opa.policy_check measures it,
                    tools/guidance_titles.py)
  title_elsewhere   1 when measured, the answer is a guidance (not that nothing answers),
                    another guidance's title lies at least as near the question as the leading
                    answer's, and the leading section's title and heading do not use every
                    subject word of the question: the sections point at one policy, the question
                    in its own words at another (a question that names its section's heading is
                    that section's, whichever title lies nearer)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from reference_server.scoring.confidence import Counts

FEATURES: tuple[str, ...] = (
    "spec_score",
    "both_paths",
    "corroborated",
    "margin",
    "shared",
    "default_rule",
    "conflict",
    "no_answer",
    "similarity",
    "lexical",
    "lead_unmatched",
    "paths_agree",
    "ambiguous",
    "unsettled",
    "contested",
    "title_gap",
    "title_elsewhere",
)
# How far the first guidance must stand clear of the second (`margin`) for an answer whose words
# do not name it to leave `contested` unset. Chosen by 2-fold cross-validation within the fit
# half (scoring/fit.py), over 0.2-0.5 and word shares of a third, a half or any (both families'
# ECE, and clinician questions wrong at >= 0.8). The fit half's clinician questions so answered
# were right 30 times in 39.
CONTESTED_MARGIN = 0.4
CONTESTED_WORDS = 0.34  # a third or fewer: 1/3 itself is under it


@dataclass(frozen=True)
class Signals:
    """What a tool's score step measured about its leading answer (the defaults: nothing)."""

    # the best score of each distinct answer (document, record), best first
    top_scores: tuple[float, ...] = ()
    # the documents a short question may mean (their titles and headings use all its subject
    # words) over those of them the answer shows (1: one or none, or all shown)
    shared: int = 1
    # the answer rests on a general default rule, not the asked category's own source
    default_rule: bool = False
    # the answer is that nothing answers the question
    no_answer: bool = False
    # the leading answer was found by both paths (None: read from the counts)
    corroborated: bool | None = None
    similarity: float | None = None
    lexical: float | None = None
    # another document's title and headings use every subject word of the question, the leading
    # answer's document's do not
    lead_unmatched: bool = False
    # the two paths' best answers are the same guidance (None: not measured by this tool)
    paths_agree: bool | None = None
    # the leading guidance's title similarity to the question less the best other guidance's
    # (None: not measured)
    title_gap: float | None = None


NO_SIGNALS = Signals()


def margin(scores: Sequence[float]) -> float:
    """(first - second) / first of the distinct answers' best scores; 1 with one, 0 with none."""
    if not scores or scores[0] <= 0:
        return 0.0
    if len(scores) == 1:
        return 1.0
    return min(1.0, max(0.0, (scores[0] - scores[1]) / scores[0]))


def title_elsewhere(title_gap: float | None, lexical: float | None) -> bool:
    """Whether another guidance's title lies at least as near the question as the leading
    answer's (`title_gap` <= 0) while the leading section's title and heading do not use every
    subject word of the question (`lexical` < 1)."""
    return title_gap is not None and title_gap <= 0 and (lexical or 0.0) < 1.0


def _corroborated(counts: Counts | None) -> bool:
    if counts is None:
        return False
    if counts.corroborated is not None:
        return counts.corroborated > 0
    return counts.sql_records > 0 and counts.vector_passages > 0


def features(
    signals: Signals,
    counts: Counts | None,
    conflicts: int,
    paths: Sequence[str],
    spec_score: float,
) -> dict[str, float]:
    """Every feature of one answer, by name, in `FEATURES` order (plain floats, 4 places)."""
    corroborated = (
        signals.corroborated if signals.corroborated is not None else _corroborated(counts)
    )
    values = {
        "spec_score": spec_score,
        "both_paths": float("sql" in paths and "vector" in paths),
        "corroborated": float(corroborated),
        "margin": margin(signals.top_scores),
        "shared": math.log2(max(1, signals.shared)),
        "default_rule": float(signals.default_rule),
        "conflict": float(conflicts > 0),
        "no_answer": float(signals.no_answer),
        "similarity": max(0.0, signals.similarity or 0.0),
        "lexical": signals.lexical or 0.0,
        "lead_unmatched": float(signals.lead_unmatched),
        "paths_agree": float(bool(signals.paths_agree)),
        "title_gap": signals.title_gap or 0.0,
        "title_elsewhere": float(
            not signals.no_answer and title_elsewhere(signals.title_gap, signals.lexical)
        ),
        "ambiguous": float(signals.shared > 1),
        "unsettled": float(
            "sql" in paths
            and "vector" in paths
            and signals.paths_agree is False
            and (signals.lexical or 0.0) < 1.0
        ),
    }
    values["contested"] = float(
        bool(values["both_paths"])
        and values["margin"] < CONTESTED_MARGIN
        and values["lexical"] < CONTESTED_WORDS
    )
    return {name: round(float(values[name]), 4) for name in FEATURES}
