"""OHIP Schedule of Benefits cases: every fee code asked by code (its fee and every fee component
the Schedule lists), and services asked by their description in words, as a clinician would."""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator

from evals.derive.case import ExpectSpec, derived_case
from evals.derive.corpus import Corpus
from evals.derive.registry import family
from evals.run.scenario import Scenario

FEES = "ohip_fee_schedule.csv"
TOOL = "schedule.get"
FEE_TOLERANCE = 0.005

# Corpus column -> the component name schedule.get answers in `fee_components`.
COMPONENT_COLUMNS = {
    "h_fee": "H",
    "p_fee": "P",
    "t_fee": "T",
    "asst_fee": "assistant",
    "surg_fee": "surgeon",
    "anae_fee": "anaesthetist",
}

CODE_IN_TEXT = re.compile(r"\b[A-Za-z]{1,2}\d{3}[A-Za-z]?\b")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "as",
        "at",
        "be",
        "by",
        "each",
        "for",
        "from",
        "in",
        "is",
        "of",
        "on",
        "or",
        "per",
        "the",
        "to",
        "with",
    ]
)
MIN_CONTENT_WORDS = 3

DESCRIPTION_QUESTIONS = (
    "What is the OHIP code for {description}?",
    "billing code for {description}",
    "Which OHIP fee code do I bill for {description}?",
    "OHIP schedule code: {description}",
)


def _choice(key: str, n: int) -> int:
    return zlib.crc32(key.encode()) % n


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _by_code(corpus: Corpus) -> dict[str, list[tuple[int, dict[str, str]]]]:
    """Each code's rows with their 1-based data line in the CSV, in file order."""
    out: dict[str, list[tuple[int, dict[str, str]]]] = defaultdict(list)
    for line, row in enumerate(corpus.rows(FEES), 1):
        out[row["code"]].append((line, row))
    return out


def primary(rows: list[tuple[int, dict[str, str]]]) -> tuple[int, dict[str, str]]:
    """The listing whose fee schedule.get shows in `fee` when a code has several: the one the
    most source tables give (n_source_rows), ties to the earlier corpus row."""
    return min(rows, key=lambda lr: (-int(lr[1]["n_source_rows"] or 0), lr[0]))


def _source(corpus: Corpus, rows: list[tuple[int, dict[str, str]]]) -> str:
    where = "; ".join(
        f"row {line} ({r['code']}, {r['section']} {r['page_ref']} {r['subsection_title']!r})"
        for line, r in rows
    )
    return f"corpus {FEES} {where}; ingested from {corpus.edition(FEES)}"


@family("schedule.code_fee", tool=TOOL)
def code_fee(corpus: Corpus) -> Iterator[Scenario]:
    """Every fee code asked by code: the flat fee of its main listing and, for every listing of
    the code, each fee component column the corpus row carries (0.0 values included)."""
    for code, rows in sorted(_by_code(corpus).items()):
        _, main = primary(rows)
        expect: list[ExpectSpec] = [
            {"check": "equals", "path": "items[0].code", "value": code},
        ]
        if main["fee_kind"] == "flat" and main["fee"]:
            expect.append(
                {
                    "check": "equals",
                    "path": "items[0].fee",
                    "value": float(main["fee"]),
                    "tolerance": FEE_TOLERANCE,
                }
            )
        seen: set[tuple[str, float]] = set()
        for _, row in rows:
            for column, component in COMPONENT_COLUMNS.items():
                if row[column] == "":
                    continue
                record = (component, float(row[column]))
                if record in seen:
                    continue
                seen.add(record)
                expect.append(
                    {
                        "check": "contains_record",
                        "path": "items[0].fee_components",
                        "value": {"component": component, "fee": record[1]},
                        "tolerance": FEE_TOLERANCE,
                    }
                )
        if len(rows) > 1:  # every listing's fee is shown, not one silently chosen
            expect += [
                {
                    "check": "contains_record",
                    "path": "items[0].fee_variants",
                    "value": {"fee": float(row["fee"])},
                    "tolerance": FEE_TOLERANCE,
                }
                for _, row in rows
                if row["fee"]
            ]
        yield derived_case(
            "schedule.code_fee",
            code,
            tool=TOOL,
            args={"q": f"What is the OHIP fee for {code}?", "codes": [code]},
            expect=expect,
            title=f"{code}: fee and every fee component the Schedule lists",
            source=_source(corpus, rows),
        )


def _content_words(description: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", description.casefold())
    return [w for w in words if w not in STOPWORDS and len(w) >= 3]


def nameable(description: str) -> bool:
    """Whether a description names a service on its own.

    Kept: descriptions with at least MIN_CONTENT_WORDS content words (three letters or more,
    not a stopword) that start with a capital letter and name no other fee code. Skipped:
    continuation lines the Schedule prints under a heading ('single view', 'with IV contrast',
    'separate incision': lower-case or punctuation first in the extract), which mean nothing
    without the heading; labels of one or two words ('Minor assessment'), which several
    specialties' codes share in spirit; and descriptions naming another code ('... to X421'),
    since the question would then name that code.
    """
    text = description.strip()
    if not text[:1].isalpha() or not text[:1].isupper():
        return False
    if CODE_IN_TEXT.search(text):
        return False
    return len(_content_words(text)) >= MIN_CONTENT_WORDS


def _described(corpus: Corpus) -> Iterator[tuple[str, str, list[tuple[int, dict[str, str]]]]]:
    """(code, description, rows) for every code whose main listing's description is unique in
    the corpus (case and spacing folded) and names a service on its own (`nameable`)."""
    by_code = _by_code(corpus)
    codes_of: dict[str, set[str]] = defaultdict(set)
    for code, rows in by_code.items():
        for _, row in rows:
            codes_of[_norm(row["description"])].add(code)
    for code, rows in sorted(by_code.items()):
        line, main = primary(rows)
        description = " ".join(main["description"].split())
        if len(codes_of[_norm(description)]) == 1 and nameable(description):
            yield code, description, [(line, main)]


def _question(code: str, description: str) -> str:
    template = DESCRIPTION_QUESTIONS[_choice(code, len(DESCRIPTION_QUESTIONS))]
    return template.format(description=description)


def _by_description(
    corpus: Corpus, name: str, top_k: int, phrase: Callable[[str, str], str]
) -> Iterator[Scenario]:
    """One case per described service: q from ``phrase(code, description)``; with top_k 1 the
    code must come first, otherwise it must be among the top_k."""
    for code, description, rows in _described(corpus):
        q = _question(code, phrase(code, description))
        first = top_k == 1
        yield derived_case(
            name,
            code,
            tool=TOOL,
            args={"q": q, "top_k": top_k},
            expect=[
                {"check": "equals", "path": "items[0].code", "value": code}
                if first
                else {"check": "contains_record", "path": "items", "value": {"code": code}}
            ],
            title=f"'{q}' answers {code} " + ("first" if first else f"in the first {top_k}"),
            source=_source(corpus, rows),
            relevant={code: 3},
        )


def _as_written(code: str, description: str) -> str:
    return description


@family("schedule.description_top1", tool=TOOL)
def description_top1(corpus: Corpus) -> Iterator[Scenario]:
    """Every service whose description is unique and nameable, asked in words: its code first."""
    return _by_description(corpus, "schedule.description_top1", 1, _as_written)


@family("schedule.description_top5", tool=TOOL)
def description_top5(corpus: Corpus) -> Iterator[Scenario]:
    """Every service whose description is unique and nameable, asked in words: its code in the
    first five."""
    return _by_description(corpus, "schedule.description_top5", 5, _as_written)


def paraphrase(code: str, description: str) -> str:
    """The description as a clinician might retype it: lower case, without one of its content
    words (chosen by the code, not by what the tool answers), punctuation dropped."""
    words = re.findall(r"[A-Za-z0-9]+", description)
    content = [i for i, w in enumerate(words) if w.casefold() not in STOPWORDS and len(w) >= 3]
    drop = content[_choice(code + ":drop", len(content))] if len(content) > 3 else None
    return " ".join(w.lower() for i, w in enumerate(words) if i != drop)


@family("schedule.description_paraphrase", tool=TOOL)
def description_paraphrase(corpus: Corpus) -> Iterator[Scenario]:
    """The same services asked in looser words (lower case, one content word left out, no
    punctuation): the code in the first five. Guards against matching only verbatim text."""
    return _by_description(corpus, "schedule.description_paraphrase", 5, paraphrase)
