"""The golden scenario model and loader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evals.run.scenario import Scenario, ScenarioLoadError, load_scenarios

GOOD = """\
id: s1
title: A007 fee
tool: schedule.get
args: {codes: [A007]}
expect:
  - {check: equals, path: "items[0].code", value: A007}
relevant: {A007: 2}
tags: [critical]
version: 1
source: fake schedule
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_loads_fake_golden_set(golden_fake: Path) -> None:
    scenarios = load_scenarios(golden_fake)
    assert len(scenarios) == 5
    assert len({s.id for s in scenarios}) == 5
    jardiance = next(s for s in scenarios if s.id == "fake-odb-jardiance")
    assert jardiance.critical and jardiance.is_retrieval
    unknown = next(s for s in scenarios if s.id == "fake-schedule-unknown")
    assert unknown.expects_error and not unknown.is_retrieval


def test_single_record_and_list_files(tmp_path: Path) -> None:
    write(tmp_path, "one.yaml", GOOD)
    second = {**yaml.safe_load(GOOD), "id": "s2"}
    write(tmp_path, "nested/many.yml", yaml.safe_dump({"scenarios": [second]}))
    write(tmp_path, "_templates/skip.yaml", "not: a scenario")
    scenarios = load_scenarios(tmp_path)
    assert [s.id for s in scenarios] == ["s2", "s1"]  # sorted paths: nested/many.yml < one.yaml


def test_select_by_id_or_tag(tmp_path: Path) -> None:
    write(tmp_path, "one.yaml", GOOD)
    assert [s.id for s in load_scenarios(tmp_path, select=["critical"])] == ["s1"]
    assert load_scenarios(tmp_path, select=["nothing"]) == []


def test_duplicate_ids_name_both_files(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yaml", GOOD)
    with pytest.raises(
        ScenarioLoadError, match=r"b\.yaml: field id: duplicate scenario id 's1'.*a\.yaml"
    ):
        load_scenarios(tmp_path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("source: fake schedule", "source: '  '"), "field source"),
        (("source: fake schedule\n", ""), "field source: Field required"),
        (("tool: schedule.get", "tool: '  '"), "field tool: Value error, tool must name"),
        (("{A007: 2}", "{A007: 5}"), "relevance grades must be 1, 2 or 3"),
        (("version: 1", "version: 0"), "field version"),
        (("check: equals", "check: equal"), "field expect.0: Value error, unknown check 'equal'"),
        (("title: A007 fee\n", "title: A007 fee\ncolour: red\n"), "field colour: Extra inputs"),
    ],
)
def test_errors_name_file_and_field(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = write(tmp_path, "bad.yaml", GOOD.replace(*change))
    with pytest.raises(ScenarioLoadError) as info:
        load_scenarios(tmp_path)
    text = str(info.value)
    assert str(path) in text and "(id 's1')" in text
    assert message in text


def test_list_errors_name_the_record(tmp_path: Path) -> None:
    write(tmp_path, "list.yaml", "scenarios:\n  - {id: ok1}\n")
    with pytest.raises(ScenarioLoadError, match=r"list\.yaml \[scenario #1\] \(id 'ok1'\)"):
        load_scenarios(tmp_path)


def test_bad_yaml_and_missing_dir(tmp_path: Path) -> None:
    write(tmp_path, "broken.yaml", "id: [unclosed")
    with pytest.raises(ScenarioLoadError, match="not valid YAML"):
        load_scenarios(tmp_path)
    with pytest.raises(ScenarioLoadError, match="no such golden"):
        load_scenarios(tmp_path / "nowhere")


def test_question_falls_back_to_title() -> None:
    scenario = Scenario(id="x", title="T", tool="odb.get", args={"din": "1"}, version=1, source="s")
    assert scenario.question() == "T"
    assert (
        Scenario(
            id="y",
            title="T",
            tool="coverage.answer",
            args={"question": "Q?"},
            version=1,
            source="s",
        ).question()
        == "Q?"
    )


def test_an_unquoted_yaml_date_in_arguments_is_sent_as_its_iso_text(tmp_path: Path) -> None:
    # YAML reads `2025-04-01` as a date, which JSON has no type for: a hand-written scenario
    # still means the text, in its call and in an id lookup's call
    text = GOOD.replace(
        "args: {codes: [A007]}",
        "args: {codes: [A007], as_of: 2025-04-01}\n"
        "ids_from: {tool: schedule.get, args: {dates: [2025-04-01]}, path: 'items[*]', id: code, "
        "into: codes}",
    )
    (scenario,) = load_scenarios(write(tmp_path, "s.yaml", text))
    assert scenario.args == {"codes": ["A007"], "as_of": "2025-04-01"}
    assert scenario.lookups[0].args == {"dates": ["2025-04-01"]}
