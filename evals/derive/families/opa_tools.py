"""OPA structured-block cases: every CEP tool found by its title and by each condition word, its
features usable as filters; every PHO IPAC section found by its topic; every Ontario Health
program fact (screening ages, recommendation ages and risk factors, intervals) asked on both
sides of each boundary.

Expected values come from the `tool:`, `ipac:` and `program:` blocks of the corpus files
(corpus/FORMAT.md), never from the tools' answers; ambiguous rows are skipped, counted.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator

from evals.derive.case import ExpectSpec, derived_case
from evals.derive.corpus import CepTool, Corpus, OpaDocument, ProgramRecommendation
from evals.derive.families.opa import documents, section_name
from evals.derive.registry import family, skip
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

CEP = "opa.clinical_tools"
IPAC = "opa.ipac_guidance"
PROGRAM = "opa.program_lookup"
CONDITION_RESULTS = 5
# opa.clinical_tools' feature_type -> the corpus `features` key it filters on
FEATURES = {
    "algorithm": "assessment_algorithm",
    "calculator": "calculator",
    "checklist": "checklist",
}
IPAC_TOPICS = ("reprocessing", "ppe", "hand_hygiene", "environmental")  # what a request can name
IPAC_SETTINGS = ("office", "clinic", "procedure_room")
MIN_AGE, MAX_AGE = 0, 120  # the ages opa.program_lookup accepts


# ------------------------------------------------------------------------------ CEP tools
def _tools(corpus: Corpus) -> list[tuple[OpaDocument, CepTool]]:
    return [(d, d.data["tool"]) for d in documents(corpus, ("cep",)) if d.data.get("tool")]


@family("opa.cep_title", tool=CEP)
def cep_title(corpus: Corpus) -> Iterator[Scenario]:
    """Every CEP tool asked by its title: it comes first; with each feature type as a filter, it
    is still first when it has that feature (and the feature is available) and absent when not."""
    name = "opa.cep_title"
    titles = Counter(str(d.data["title"]).casefold() for d, _ in _tools(corpus))
    for doc, tool in _tools(corpus):
        title, tool_id = str(doc.data["title"]), str(tool["tool_id"])
        url = str(doc.data["source_url"])
        if titles[title.casefold()] > 1:
            skip(name, "title shared by several tools")
            continue
        first: ExpectSpec = {"check": "equals", "path": "tools[0].url", "value": url}
        yield derived_case(
            name,
            tool_id,
            tool=CEP,
            args={"tool_name": title},
            expect=[first],
            title=f"'{title}' finds {tool_id} first",
            source=doc.source("title, source_url"),
        )
        features = tool.get("features") or {}
        for feature_type, key in FEATURES.items():
            has = bool(features.get(key))
            expect: list[ExpectSpec] = (
                [
                    first,
                    {
                        "check": "equals",
                        "path": f"tools[0].key_features.{key}.available",
                        "value": True,
                    },
                ]
                if has
                else [
                    {
                        "check": "not_contains",
                        "path": "tools[*].url",
                        "value": url,
                    }
                ]
            )
            yield derived_case(
                name,
                f"{tool_id}:{feature_type}",
                tool=CEP,
                args={"tool_name": title, "feature_type": feature_type},
                expect=expect,
                title=f"'{title}' with feature {feature_type}: "
                + ("first" if has else "not listed"),
                source=doc.source(f"tool.features.{key}"),
            )


@family("opa.cep_condition", tool=CEP)
def cep_condition(corpus: Corpus) -> Iterator[Scenario]:
    """Every condition word of every CEP tool: the tool among the first five tools listed for it
    (conditions more than five tools list are skipped: no one tool is meant)."""
    name = "opa.cep_condition"
    tools = _tools(corpus)
    listed_by: dict[str, set[str]] = defaultdict(set)
    for _, tool in tools:
        for condition in tool.get("conditions") or []:
            listed_by[str(condition).casefold().strip()].add(str(tool["tool_id"]))
    for doc, tool in tools:
        tool_id, url = str(tool["tool_id"]), str(doc.data["source_url"])
        seen: set[str] = set()
        for i, raw in enumerate(tool.get("conditions") or []):
            condition = " ".join(str(raw).split())
            key = condition.casefold()
            if not key or key in seen:
                skip(name, "empty or repeated condition")
                continue
            seen.add(key)
            if len(listed_by[key]) > CONDITION_RESULTS:
                skip(name, f"condition listed by more than {CONDITION_RESULTS} tools")
                continue
            yield derived_case(
                name,
                f"{tool_id}:{key}",
                tool=CEP,
                args={"condition": condition, "n_results": CONDITION_RESULTS},
                expect=[{"check": "contains", "path": "tools[*].url", "value": url}],
                title=f"condition '{condition}' lists {tool_id}",
                source=doc.source(f"tool.conditions[{i}]"),
            )


# ------------------------------------------------------------------------------ PHO IPAC
@family("opa.ipac_topic", tool=IPAC)
def ipac_topic(corpus: Corpus) -> Iterator[Scenario]:
    """Every current PHO section with an IPAC block, asked by its topic in one of its settings:
    the section is cited."""
    name = "opa.ipac_topic"
    for doc in documents(corpus, ("pho",)):
        for section in doc.sections:
            block = section.data.get("ipac")
            if not block:
                continue
            topic = block.get("topic")
            if doc.data.get("is_superseded"):
                skip(name, "superseded document")
                continue
            if topic not in IPAC_TOPICS:
                skip(name, f"topic {topic!r} is not one a request can name")
                continue
            settings = [s for s in block.get("settings") or IPAC_SETTINGS if s in IPAC_SETTINGS]
            if not settings:
                skip(name, "no setting a request can name")
                continue
            yield derived_case(
                name,
                section.section_id,
                tool=IPAC,
                args={"topic": topic, "setting": settings[0], "n_sections": 50},
                expect=[
                    {
                        "check": "contains_record",
                        "path": "citations",
                        "value": {"source": doc.data["title"], "loc": section.heading},
                    }
                ],
                title=f"IPAC {topic} ({settings[0]}) cites '{section.heading}'",
                source=doc.source(f"sections[{section.position}].ipac.topic, .settings"),
                relevant={section_name(doc, section): 3},
            )


# ------------------------------------------------------------------------------ programs
def _programs(corpus: Corpus) -> dict[str, list[OpaDocument]]:
    """Current Ontario Health documents with a program block, by program key."""
    out: dict[str, list[OpaDocument]] = defaultdict(list)
    for doc in documents(corpus, ("ontario_health",)):
        block = doc.data.get("program")
        if block and not doc.data.get("is_superseded"):
            out[str(block["key"])].append(doc)
    return dict(sorted(out.items()))


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.casefold()))


def _program_name(docs: list[OpaDocument]) -> str:
    named = [str(d.data["program"].get("name") or "") for d in docs]
    return next((n for n in named if n), str(docs[0].data["program"]["key"]))


def _case(
    key: str,
    docs: list[OpaDocument],
    ident: str,
    args: Arguments,
    expect: list[ExpectSpec],
    title: str,
    source: str,
) -> Scenario:
    return derived_case(
        "opa.program_boundary",
        f"{key}:{ident}",
        tool=PROGRAM,
        args={"program": _program_name(docs), **args},
        expect=expect,
        title=title,
        source=source,
    )


def _eligibility_cases(key: str, docs: list[OpaDocument]) -> Iterator[Scenario]:
    name = "opa.program_boundary"
    stated = {
        (low, e.get("max_age"))
        for d in docs
        if (e := d.data["program"].get("eligibility")) and (low := e.get("min_age")) is not None
    }
    if len(stated) != 1:
        skip(name, "program documents state no or different screening ages")
        return
    ((lo, hi),) = stated
    holder = next(d for d in docs if (d.data["program"].get("eligibility") or {}).get("min_age"))
    ages = [(lo - 1, True), (lo, False)] + ([(hi, False), (hi + 1, True)] if hi else [])
    for age, outside in ages:
        if not MIN_AGE <= age <= MAX_AGE:
            continue
        yield _case(
            key,
            docs,
            f"age-{age}",
            {"query_type": "eligibility", "patient_age": age},
            [
                {
                    "check": "equals",
                    "path": "patient_specific.outside_screening_age",
                    "value": outside,
                }
            ],
            f"{key} at age {age}: " + ("outside" if outside else "inside") + f" {lo}-{hi}",
            holder.source("program.eligibility.min_age, max_age"),
        )


def _applying(
    recs: list[tuple[OpaDocument, int, ProgramRecommendation]], age: int, risk: str | None
) -> list[ProgramRecommendation]:
    """The recommendations the facts give a patient of this age with this one risk factor (or
    none): in the age range, and risk-specific ones only when they list that factor; a factor
    named by some recommendation makes those the answer over average-risk ones."""
    in_range = [
        r
        for _, _, r in recs
        if not r.get("age_range") or r["age_range"][0] <= age <= r["age_range"][1]
    ]
    if risk is None:
        return [r for r in in_range if not r.get("risk_factors")]
    wanted = _words(risk)
    return [r for r in in_range if wanted in {_words(f) for f in r.get("risk_factors") or []}]


def _recommendation_cases(key: str, docs: list[OpaDocument]) -> Iterator[Scenario]:
    name = "opa.program_boundary"
    recs = [
        (d, i, r)
        for d in docs
        for i, r in enumerate(d.data["program"].get("recommendations") or [])
    ]
    for doc, i, rec in recs:
        rng = rec.get("age_range")
        if not rng or len(rng) != 2 or rng[0] > rng[1]:
            skip(name, "recommendation without a valid age range")
            continue
        risks = [str(f) for f in rec.get("risk_factors") or []]
        risk = risks[0] if risks else None
        where = f"program.recommendations[{i}] age_range, risk_factors, text"
        for age in (rng[0], rng[1]):
            answers = _applying(recs, age, risk)
            if rec not in answers:
                continue
            if len({a.get("frequency") for a in answers}) > 1:
                skip(name, "facts give different intervals to the same patient")
                continue
            pattern = "(" + "|".join(re.escape(str(a["text"])) for a in answers) + ")"
            args: Arguments = {"query_type": "intervals", "patient_age": age}
            if risk:
                args["risk_factors"] = [risk]
            yield _case(
                key,
                docs,
                f"rec{doc.document_id}-{i}-at-{age}",
                args,
                [
                    {
                        "check": "matches",
                        "path": "patient_specific.recommendation",
                        "pattern": pattern,
                    }
                ],
                f"{key} at {age}{' with ' + risk if risk else ''}: '{rec['text'][:60]}'",
                doc.source(where),
            )
        for age in (rng[0] - 1, rng[1] + 1):
            if not MIN_AGE <= age <= MAX_AGE:
                continue
            args = {"query_type": "intervals", "patient_age": age}
            if risk:
                args["risk_factors"] = [risk]
            yield _case(
                key,
                docs,
                f"rec{doc.document_id}-{i}-out-{age}",
                args,
                [
                    {
                        "check": "not_contains",
                        "path": "patient_specific.recommendation",
                        "value": str(rec["text"]),
                    }
                ],
                f"{key} at {age}{' with ' + risk if risk else ''}: not '{rec['text'][:60]}'",
                doc.source(where),
            )


def _interval_cases(key: str, docs: list[OpaDocument]) -> Iterator[Scenario]:
    name = "opa.program_boundary"
    stated: dict[str, set[str]] = defaultdict(set)
    holder: dict[str, OpaDocument] = {}
    for d in docs:
        for k, v in (d.data["program"].get("intervals") or {}).items():
            stated[str(k)].add(str(v))
            holder.setdefault(str(k), d)
    for k, values in sorted(stated.items()):
        if len(values) > 1:
            skip(name, "interval stated differently by two documents of one program")
            continue
        if not re.fullmatch(r"[A-Za-z0-9_]+", k):
            skip(name, "interval key not addressable")
            continue
        (value,) = values
        yield _case(
            key,
            docs,
            f"interval-{k}",
            {"query_type": "intervals"},
            [{"check": "equals", "path": f"intervals.{k}", "value": value}],
            f"{key} interval {k}: {value[:60]}",
            holder[k].source(f"program.intervals.{k}"),
        )


@family("opa.program_boundary", tool=PROGRAM)
def program_boundary(corpus: Corpus) -> Iterator[Scenario]:
    """Every current program fact asked on both sides of its boundaries: screening ages (one
    year below, at, and one above the ages), each recommendation at the ends of its age range
    (with its first risk factor) and just outside them, and every interval as stated."""
    for key, docs in _programs(corpus).items():
        yield from _eligibility_cases(key, docs)
        yield from _recommendation_cases(key, docs)
        yield from _interval_cases(key, docs)
