"""The distinct-query mix: built from cases and the index's ids, every call distinct, walked
without repeats, split between load processes, and read fast as JSON."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from load import distinct_mix
from load.taskmix import TaskMix
from ocm_common.golden import example_calls

SECTIONS = [f"doc-{d}:s0{s}" for d in "abc" for s in range(1, 4)]  # 9 sections, 3 documents
PASSAGES = ["odb:lu:414", "adp:mobility:225", "ohip:commentary:mrp-role"]
IPAC = {"topic": "ppe", "items": ["gloves", "face shield"]}


def _index(root: Path) -> Path:
    root.mkdir()
    with sqlite3.connect(root / "opa.db") as db:
        db.execute("CREATE TABLE opa_sections (section_id TEXT, ipac TEXT)")
        db.execute("CREATE TABLE opa_documents (document_id TEXT)")
        db.executemany(
            "INSERT INTO opa_sections VALUES (?, ?)",
            [(s, json.dumps(IPAC) if s.endswith("s01") else None) for s in SECTIONS],
        )
        db.executemany("INSERT INTO opa_documents VALUES (?)", [(f"doc-{d}",) for d in "abcde"])
    with sqlite3.connect(root / "ohip.db") as db:
        db.execute("CREATE TABLE off_passages (chunk_id TEXT)")
        db.executemany("INSERT INTO off_passages VALUES (?)", [(p,) for p in PASSAGES])
    return root


def _case(tool: str, args: dict[str, Any], n: int) -> str:
    return json.dumps({"id": f"derived.x.{tool}.{n}", "tool": tool, "args": args})


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    cases = tmp_path / "cases"
    cases.mkdir()
    lines = [_case("odb.get", {"din": f"0000{n:04d}"}, n) for n in range(40)]
    lines += [_case("adp.get", {"query": "Does ADP fund a walker?"}, 0)]
    lines += [_case("opa.program_lookup", {"program": "breast", "patient_age": 50}, 0)]
    lines += [
        _case(tool, {key: text}, 0)
        for tool, key, text in [
            ("coverage.answer", "question", "Is metformin covered for my patient?"),
            ("opa.search_sections", "query", "virtual care documentation"),
            ("opa.policy_check", "query", "accepting new patients"),
            ("schedule.get", "q", "What is the fee for A007?"),
            ("opa.clinical_tools", "condition", "dementia"),
        ]
    ]
    (cases / "family.jsonl").write_text("\n".join(lines) + "\n")
    golden = tmp_path / "golden"
    golden.mkdir()
    (golden / "g.yaml").write_text(
        "id: g1\ntool: opa.ipac_guidance\nargs: {topic: ppe, specific_item: N95 respirator}\n"
    )
    return cases, golden, _index(tmp_path / "index")


def test_every_tool_gets_its_share_of_distinct_calls(inputs: tuple[Path, Path, Path]) -> None:
    mix, stats = distinct_mix.build(*inputs, calls=12 * 20, seed=3)
    assert sorted(mix) == sorted(distinct_mix.TOOLS)
    for tool, calls in mix.items():
        keys = {distinct_mix.canonical(a) for a in calls}
        assert len(keys) == len(calls) == 20, tool
        assert stats["tools"][tool]["distinct_arguments"] == 20
    assert stats["calls"] == stats["distinct_arguments"] == 240


def test_cases_come_first_and_expansions_keep_their_shape(
    inputs: tuple[Path, Path, Path],
) -> None:
    mix, _ = distinct_mix.build(*inputs, calls=12 * 20, seed=3)
    # 40 DIN cases for 20 places: a sample of them, nothing made up
    assert all(set(a) == {"din"} for a in mix["odb.get"])
    # one ADP question: it, then its lead-in/tail variants
    texts = [a["query"] for a in mix["adp.get"]]
    assert "Does ADP fund a walker?" in texts
    assert all("Does ADP fund a walker?" in t for t in texts)
    # ids from the index only
    assert {a["section_id"] for a in mix["opa.get_section"]} <= set(SECTIONS)
    passages = {i for a in mix["source.passages"] for i in a["chunk_ids"]}
    assert passages <= set(SECTIONS + PASSAGES)
    items = {a.get("specific_item") for a in mix["opa.ipac_guidance"]}
    assert items <= {None, "gloves", "face shield", "N95 respirator"}
    ages = {a["patient_age"] for a in mix["opa.program_lookup"]}
    assert ages <= set(range(121))


def test_the_same_seed_builds_the_same_mix(inputs: tuple[Path, Path, Path]) -> None:
    first, _ = distinct_mix.build(*inputs, calls=120, seed=1)
    again, _ = distinct_mix.build(*inputs, calls=120, seed=1)
    other, _ = distinct_mix.build(*inputs, calls=120, seed=2)
    assert first == again
    assert first != other


def test_a_walked_mix_repeats_no_call_before_all_were_made(tmp_path: Path) -> None:
    path = tmp_path / "mix.json"
    path.write_text(json.dumps({"a": [{"n": n} for n in range(7)], "b": [{"n": 0}]}))
    mix = TaskMix.from_examples(path, seed=5)
    drawn = [mix.pick("a").arguments["n"] for _ in range(14)]
    assert sorted(drawn[:7]) == list(range(7))
    assert drawn[7:] == drawn[:7]


def test_load_processes_take_disjoint_shares(tmp_path: Path) -> None:
    path = tmp_path / "mix.json"
    path.write_text(json.dumps({"a": [{"n": n} for n in range(10)]}))
    shares = [TaskMix.from_examples(path, seed=0).share(i, 3) for i in range(3)]
    seen = [{c.arguments["n"] for c in s.calls["a"]} for s in shares]
    assert seen == [{0, 3, 6, 9}, {1, 4, 7}, {2, 5, 8}]
    with pytest.raises(ValueError, match="below the count"):
        TaskMix.from_examples(path).share(3, 3)
    golden = TaskMix.from_golden(seed=0)
    assert golden.share(1, 2).calls == golden.calls  # drawn at random: every process has all


def test_an_examples_file_reads_alike_as_json_and_as_yaml(tmp_path: Path) -> None:
    as_json = tmp_path / "mix.json"
    as_json.write_text('{"odb.get": [{"din": "02242705"}], "adp.get": [{"query": "CPAP?"}]}')
    as_yaml = tmp_path / "mix.yaml"
    as_yaml.write_text("odb.get:\n  - din: '02242705'\nadp.get:\n  - query: CPAP?\n")
    read = [[(c.tool, c.arguments) for c in example_calls(p)] for p in (as_json, as_yaml)]
    assert read[0] == read[1] == [("odb.get", {"din": "02242705"}), ("adp.get", {"query": "CPAP?"})]
