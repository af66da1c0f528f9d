"""Routing cases: a task in words -> the tool (or tools) that answers it, each from a source.

Sources, never the ranking's own output:
- `golden`: every golden scenario's question argument (its arguments as words when it has no
  question: an id look-up is asked by its id) -> the scenario's tool; scenarios that only test
  argument checking (every expectation a tool error) or carry no words are not routing cases;
- `derived:<family>`: a seeded sample of each derived family's questions -> the family's tool;
  the families named `*paraphrase*` and `*misspelling*` are the paraphrase family;
- `file`: a committed YAML file of cases (seed 003's tools by their stated purpose).

A case's first expected tool is its own (strict metrics); the others also answer it, by the
tools' specifications (`evals.routing.acceptable`), and `basis` names the rules that said so.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evals.routing.acceptable import alternatives, is_validation_only
from ocm_common.json_types import Arguments

REFERENCE_SERVER = "reference"
# The argument that carries a tool call's question, in the order they are looked for.
QUESTION_ARGS = ("question", "q", "query")
# Families whose right answer is "no tool covers this" (questions off every tool's topic).
NOT_ROUTABLE_FAMILIES = ("opa.off_topic", "opa.off_topic_policy")
SEED003_CASES = Path(__file__).with_name("seed003_cases.yaml")


@dataclass(frozen=True)
class RoutingCase:
    id: str
    text: str
    expected: tuple[str, ...]  # tool ids (`server/tool`); any of them counts as right
    source: str
    catalogue: str  # the catalogue the expected tool belongs to (per-catalogue results)
    tags: tuple[str, ...] = field(default_factory=tuple)
    basis: tuple[str, ...] = field(
        default_factory=tuple
    )  # where the other expected tools come from


def _expected(
    tool: str, args: Arguments, documents: Any, words: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the tool then every tool that also answers the case, the rules that said so)."""
    others, basis = alternatives(tool, args, documents, words)
    return tuple(f"{REFERENCE_SERVER}/{t}" for t in (tool, *others)), basis


def _is_routing_case(tool: str, args: Arguments, expect: list[Any]) -> bool:
    return not is_validation_only(expect) and question_of(tool, args) != tool


def _words(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_words(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')} {_words(v)}" for k, v in value.items())
    return str(value)


def question_of(tool: str, args: Arguments) -> str:
    """The words a host would search with for this call."""
    for key in QUESTION_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    shown = {
        k: v for k, v in args.items() if not isinstance(v, bool) and k not in ("n_results", "top_k")
    }
    return _words(shown) or tool


def golden_cases(root: Path = Path("golden")) -> list[RoutingCase]:
    from evals.run.scenario import load_scenarios

    out = []
    for s in load_scenarios(root):
        if not _is_routing_case(s.tool, s.args, list(s.expect)):
            continue
        documents = [[e.model_dump() for e in s.expect], list(s.relevant)]
        expected, basis = _expected(s.tool, s.args, documents, list(s.tags))
        out.append(
            RoutingCase(
                id=f"golden:{s.id}",
                text=question_of(s.tool, s.args),
                expected=expected,
                source="golden",
                catalogue=REFERENCE_SERVER,
                tags=tuple(s.tags),
                basis=basis,
            )
        )
    return out


def derived_cases(per_family: int = 20, seed: int = 0) -> list[RoutingCase]:
    """A seeded sample of every derived family's cases (the families read the committed corpus)."""
    from evals.derive.build import derive
    from evals.derive.corpus import Corpus
    from evals.derive.registry import all_families

    families = all_families()
    out: list[RoutingCase] = []
    chosen = [name for name in families if name not in NOT_ROUTABLE_FAMILIES]
    for name, scenarios in derive(Corpus(), families=chosen, per_family=None).items():
        rng = random.Random(f"{seed}:{name}")
        picked = scenarios if len(scenarios) <= per_family else rng.sample(scenarios, per_family)
        source = "paraphrase" if ("paraphrase" in name or "misspelling" in name) else "derived"
        tool = families[name].tool
        for s in picked:
            if not _is_routing_case(tool, s.args, list(s.expect)):
                continue
            documents = [[e.model_dump() for e in s.expect], list(s.relevant)]
            expected, basis = _expected(tool, s.args, documents, name.split(".")[1:])
            out.append(
                RoutingCase(
                    id=f"derived:{s.id}",
                    text=question_of(tool, s.args),
                    expected=expected,
                    source=f"{source}:{name}",
                    catalogue=REFERENCE_SERVER,
                    basis=basis,
                )
            )
    return out


def file_cases(path: Path) -> list[RoutingCase]:
    """Cases written down in a YAML file: `catalogue`, then `cases: [{id, text, tool(s), source}]`."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    server = str(data.get("catalogue", ""))
    out = []
    for raw in data.get("cases") or ():
        tools = raw.get("tools") or [raw["tool"]]
        expected = tuple(t if "/" in t else f"{server}/{t}" for t in tools)
        out.append(
            RoutingCase(
                id=f"{path.stem}:{raw['id']}",
                text=str(raw["text"]),
                expected=expected,
                source=f"{path.stem}:{raw.get('source') or path.name}",
                catalogue=expected[0].split("/", 1)[0],
                basis=(f"listed in {path.name}",) if len(expected) > 1 else (),
            )
        )
    return out


def jsonl_cases(path: Path) -> list[RoutingCase]:
    import json

    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            raw["expected"] = tuple(raw["expected"])
            raw["tags"] = tuple(raw.get("tags") or ())
            raw["basis"] = tuple(raw.get("basis") or ())
            out.append(RoutingCase(**raw))
    return out


def write_jsonl(cases: Iterable[RoutingCase], path: Path) -> None:
    import json
    from dataclasses import asdict

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for case in cases:
            fh.write(json.dumps(asdict(case)) + "\n")


def load_cases(spec: str, per_family: int = 20, seed: int = 0) -> list[RoutingCase]:
    """`golden[:DIR]`, `derived`, `seed003`, a `.yaml` cases file or a `.jsonl` of cases;
    `sources` = golden + derived + seed003 (the default)."""
    if spec == "sources":
        return golden_cases() + derived_cases(per_family, seed) + file_cases(SEED003_CASES)
    if spec.startswith("golden"):
        _, _, root = spec.partition(":")
        return golden_cases(Path(root or "golden"))
    if spec == "derived":
        return derived_cases(per_family, seed)
    if spec == "seed003":
        return file_cases(SEED003_CASES)
    path = Path(spec)
    if path.suffix == ".jsonl":
        return jsonl_cases(path)
    return file_cases(path)


def fingerprint(cases: Iterable[RoutingCase]) -> str:
    """What a case set is, in 16 hex digits: each case's id, question and accepted tools, in
    id order. Floors measured on one set say nothing about another."""
    import hashlib
    import json

    rows = sorted((c.id, c.text, list(c.expected)) for c in cases)
    return hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()[:16]
