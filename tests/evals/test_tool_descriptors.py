"""Tool descriptors: each tool's shape is data (evals/tool_descriptors.yaml, or a
`<name>.tools.yaml` beside a golden file), and a tool described nowhere still runs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from fastmcp import FastMCP

from evals.read.report import build_tables, header_lines
from evals.run.extract import answer_text, contexts, organisation, retrieved_ids
from evals.run.runlog import RunLog
from evals.run.runner import RunOptions, execute
from evals.run.scenario import load_scenarios
from evals.run.targets import server_target
from evals.run.tool_descriptors import (
    DESCRIPTORS_FILE,
    GENERIC,
    ToolDescriptorError,
    builtin,
    golden_descriptors,
    load_file,
)
from tests.served_tools import SERVED

ACME_GOLDEN = """\
scenarios:
  - id: acme-widget
    title: The widget lookup ranks the widget manual second
    tool: acme.lookup
    args: {query: widget}
    expect:
      - {check: equals, path: status, value: ok}
    relevant: {"acme-1": 3, "acme-2": 1}
    version: 1
    source: "the tiny server in this test: its three hits"
"""

# Beside acme.yaml: where acme.lookup's result holds its ids, answer and passages.
ACME_TOOLS = """\
acme.lookup:
  ids: ["hits[*].ref", best.ref]
  parent_ids: true
  answer: [summary, "hits[*].note"]
  contexts: ["hits[*].text"]
  organisation: acme
"""

# acme.lookup's answer to every call: refs with child suffixes, in this rank order.
ACME_RESULT: dict[str, Any] = {
    "status": "ok",
    "summary": "Widgets are covered.",
    "hits": [
        {"ref": "acme-2:c1", "note": "manual", "text": "The widget manual."},
        {"ref": "acme-2:c4", "note": "", "text": "More of the manual."},
        {"ref": "acme-9:c1", "note": "form", "text": "An unrelated form."},
    ],
    "best": {"ref": "acme-1"},
}

# A tool no descriptor names: judged by its checks only.
OTHER_GOLDEN = """\
id: other-ping
title: The ping answers pong
tool: acme.ping
args: {}
expect:
  - {check: equals, path: reply, value: pong}
relevant: {"x-1": 2}
version: 1
source: "the tiny server in this test answers pong"
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def acme_golden(tmp_path: Path) -> Path:
    golden = tmp_path / "golden"
    write(golden / "acme.yaml", ACME_GOLDEN)
    write(golden / "acme.tools.yaml", ACME_TOOLS)
    write(golden / "other.yaml", OTHER_GOLDEN)
    return golden


def acme_server() -> FastMCP:
    server = FastMCP("acme")

    @server.tool(name="acme.lookup")
    def lookup(query: str) -> dict[str, Any]:
        return ACME_RESULT

    @server.tool(name="acme.ping")
    def ping() -> dict[str, Any]:
        return {"reply": "pong"}

    return server


# ----------------------------------------------------------------------------- the built-in file


def test_the_file_describes_every_tool_the_reference_server_serves() -> None:
    assert sorted(builtin()) == SERVED
    assert all(builtin()[tool].measures_ids for tool in SERVED)
    assert set(builtin().sources.values()) == {DESCRIPTORS_FILE}


def test_the_built_in_descriptors_keep_each_tool_s_shape() -> None:
    # opa.search_sections: child suffixes stripped, the section texts are answer and passages
    search = {"sections": [{"section_id": "d:s02:c1", "text": "A"}, {"section_id": "d:s01"}]}
    assert retrieved_ids("opa.search_sections", search) == ["d:s02", "d:s01"]
    assert answer_text("opa.search_sections", search) == "A"
    assert contexts("opa.search_sections", search) == ["A"]
    # source.passages keeps chunk ids whole
    assert retrieved_ids("source.passages", {"passages": [{"chunk_id": "d:s02:c1"}]}) == [
        "d:s02:c1"
    ]
    # schedule.get: description then requirements; the organisation is fixed
    items = {"items": [{"code": "A007", "description": "Visit", "requirements": "Once a day"}]}
    assert answer_text("schedule.get", items) == "Visit\nOnce a day"
    assert contexts("schedule.get", items) == ["Once a day"]
    assert organisation("schedule.get", ["cpso-x"]) == "ohip"
    # opa.clinical_tools names no answer: the JSON of the result
    tools = {"tools": [{"tool_id": "cep-x"}]}
    assert answer_text("opa.clinical_tools", tools) == json.dumps(tools, sort_keys=True)
    assert contexts("opa.clinical_tools", tools) == []


# ----------------------------------------------------------------------------- bad descriptors


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("acme.lookup:\n  idz: [a.b]\n", "field idz", "Extra inputs are not permitted"),
        ("acme.lookup:\n  ids: ['']\n", "field ids.0", "non-empty string"),
        ("acme.lookup:\n  ids: [null]\n", "field ids.0", "valid string"),
        ("acme.lookup:\n  answer: ['items[x]']\n", "field answer.0", "neither an integer"),
        ("acme.lookup:\n  contexts: 'hits[*].text'\n", "field contexts", "valid tuple"),
        ("acme.lookup:\n  parent_ids: maybe\n", "field parent_ids", "valid boolean"),
        ("acme.lookup:\n  organisation: ' '\n", "field organisation", "organisation must"),
    ],
)
def test_a_bad_descriptor_names_file_tool_and_field(
    tmp_path: Path, text: str, field: str, message: str
) -> None:
    path = write(tmp_path / "acme.tools.yaml", text)
    with pytest.raises(ToolDescriptorError) as info:
        load_file(path)
    assert f"{path}: tool 'acme.lookup'" in str(info.value)
    assert field in str(info.value) and message in str(info.value)


def test_a_descriptor_that_is_not_a_mapping_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "acme.tools.yaml", "acme.lookup: [hits]\n")
    with pytest.raises(ToolDescriptorError, match=r"tool 'acme.lookup': a descriptor must be"):
        load_file(path)
    write(tmp_path / "list.tools.yaml", "- acme.lookup\n")
    with pytest.raises(ToolDescriptorError, match="expected a mapping of tool name"):
        load_file(tmp_path / "list.tools.yaml")


def test_a_bad_descriptor_beside_a_golden_file_fails_golden_loading(acme_golden: Path) -> None:
    write(acme_golden / "acme.tools.yaml", "acme.lookup:\n  ids: ['hits[*]..ref']\n")
    with pytest.raises(ToolDescriptorError, match=r"acme\.tools\.yaml: tool 'acme.lookup'"):
        golden_descriptors(acme_golden)


def test_two_golden_files_may_not_describe_one_tool_differently(acme_golden: Path) -> None:
    write(acme_golden / "more.yaml", ACME_GOLDEN.replace("acme-widget", "acme-widget-2"))
    write(acme_golden / "more.tools.yaml", ACME_TOOLS.replace("parent_ids: true", ""))
    with pytest.raises(ToolDescriptorError, match=r"more\.tools\.yaml: tool 'acme.lookup'.*acme"):
        golden_descriptors(acme_golden)
    write(acme_golden / "more.tools.yaml", ACME_TOOLS)  # the same description: fine
    assert golden_descriptors(acme_golden)["acme.lookup"].parent_ids


# ----------------------------------------------------------------------------- an unseen tool


def test_a_golden_file_for_an_unseen_tool_gets_its_descriptor_beside_it(
    acme_golden: Path,
) -> None:
    scenarios = load_scenarios(acme_golden)  # the .tools.yaml is not read as scenarios
    assert [s.id for s in scenarios] == ["acme-widget", "other-ping"]
    descriptors = golden_descriptors(acme_golden)
    assert descriptors.sources["acme.lookup"] == acme_golden / "acme.tools.yaml"
    assert retrieved_ids("acme.lookup", ACME_RESULT, descriptors) == ["acme-2", "acme-9", "acme-1"]
    assert answer_text("acme.lookup", ACME_RESULT, descriptors=descriptors) == (
        "Widgets are covered.\nmanual\nform"
    )
    assert contexts("acme.lookup", ACME_RESULT, descriptors) == [
        "The widget manual.",
        "More of the manual.",
        "An unrelated form.",
    ]
    assert organisation("acme.lookup", [], descriptors) == "acme"
    # without the golden set's descriptors the tool is generic
    assert retrieved_ids("acme.lookup", ACME_RESULT) == []


def test_a_descriptor_beside_a_golden_file_overrides_a_built_in_one(tmp_path: Path) -> None:
    write(tmp_path / "odb.yaml", ACME_GOLDEN.replace("acme.lookup", "odb.get"))
    write(tmp_path / "odb.tools.yaml", "odb.get:\n  ids: [lowest_cost.din]\n")
    descriptors = golden_descriptors(tmp_path)
    result = {"coverage": {"din": "1"}, "lowest_cost": {"din": "2"}}
    assert retrieved_ids("odb.get", result, descriptors) == ["2"]
    assert retrieved_ids("odb.get", result) == ["1", "2"]
    assert descriptors["opa.search_sections"] == builtin()["opa.search_sections"]


def test_a_tool_without_descriptor_is_generic() -> None:
    result = {"reply": "pong", "n": 1}
    assert retrieved_ids("acme.ping", result) == []
    assert answer_text("acme.ping", result) == json.dumps(result, sort_keys=True)
    assert contexts("acme.ping", result) == []
    assert organisation("acme.ping", ["cpso-x:s01"]) == "cpso"  # from the id prefix
    assert builtin().of("acme.ping") == GENERIC and not GENERIC.measures_ids


async def test_an_unseen_tool_runs_end_to_end_with_its_descriptor(
    tmp_path: Path, acme_golden: Path
) -> None:
    log = await execute(
        server_target(acme_server()),
        load_scenarios(acme_golden),
        tmp_path / "run",
        options=RunOptions(ragas=False),
        descriptors=golden_descriptors(acme_golden),
    )
    acme = next(r for r in log.records if r.id == "acme-widget")
    assert acme.passed and acme.org == "acme" and acme.ids_measured
    assert acme.retrieved_ids == ["acme-2", "acme-9", "acme-1"]
    # nDCG@10, gain = grade: DCG = 1/log2(2) + 3/log2(4); ideal = 3/log2(2) + 1/log2(3)
    ideal = 3 + 1 / math.log2(3)
    assert acme.metrics["nDCG@10"] == pytest.approx((1 + 3 / 2) / ideal)
    assert acme.metrics["RR@10"] == 1.0  # acme-2 (grade 1) is first
    assert log.summary.aggregates["retrieval"]["per_tool"]["acme.lookup"]["queries"] == 1.0
    assert RunLog.read(tmp_path / "run").records == log.records


async def test_a_tool_without_descriptor_is_judged_by_its_checks_and_not_measured(
    tmp_path: Path, acme_golden: Path
) -> None:
    log = await execute(
        server_target(acme_server()),
        load_scenarios(acme_golden),
        tmp_path / "run",
        options=RunOptions(ragas=False),
        descriptors=golden_descriptors(acme_golden),
    )
    ping = next(r for r in log.records if r.id == "other-ping")
    assert ping.passed and {"equals", "no_tool_error"} <= {c.check for c in ping.checks}
    assert not ping.ids_measured and ping.retrieved_ids == [] and ping.metrics == {}
    # not measured, not 0: absent from the retrieval aggregates, and said so in the report
    retrieval = log.summary.aggregates["retrieval"]
    assert "acme.ping" not in retrieval["per_tool"] and retrieval["overall"]["queries"] == 1.0
    assert log.summary.counts["retrieval_queries"] == 1
    assert log.summary.counts["retrieval_not_measured"] == 1
    assert "(1 more not measured: no ids, or only the backend's own)" in header_lines(log)[1]
    per_tool = next(t for t in build_tables(log) if t.title == "Per tool")
    row = next(r for r in per_tool.rows if r[0] == "acme.ping")
    assert row[2] == "not measured" and "Retrieval not measured for acme.ping" in per_tool.note


async def test_a_check_on_a_tool_without_descriptor_can_fail(
    tmp_path: Path, acme_golden: Path
) -> None:
    write(acme_golden / "other.yaml", OTHER_GOLDEN.replace("value: pong", "value: ping"))
    log = await execute(
        server_target(acme_server()),
        load_scenarios(acme_golden),
        tmp_path / "run",
        options=RunOptions(ragas=False),
    )
    ping = next(r for r in log.records if r.id == "other-ping")
    assert ping.status == "failed" and [c.check for c in ping.failures()] == ["equals"]


async def test_an_unseen_tool_the_backend_lacks_is_a_missing_tool(
    tmp_path: Path, acme_golden: Path
) -> None:
    gone = OTHER_GOLDEN.replace("other-ping", "gone").replace("acme.ping", "acme.gone")
    write(acme_golden / "gone.yaml", gone)
    log = await execute(
        server_target(acme_server()),
        load_scenarios(acme_golden),
        tmp_path / "run",
        options=RunOptions(ragas=False),
    )
    assert log.summary.missing_tools == ["acme.gone"]
    assert log.summary.counts["not_run_missing_tool"] == 1
    assert "gone" not in {r.id for r in log.records}
