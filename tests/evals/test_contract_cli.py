"""Contract diff of two live servers (``python -m evals contract``): tools added and removed,
schema changes at JSON-pointer paths with the breaking ones marked, description, title and
annotation changes shown; run logs' surfaces (schemas only) diff as before."""

from __future__ import annotations

import json
from pathlib import Path

from security_servers import stdio

from evals.__main__ import main
from evals.contract import Change, diff_surfaces
from evals.run.contract_live import ContractDiff

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False}
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def _tool(**fields: object) -> dict[str, object]:
    return {"inputSchema": SCHEMA, "outputSchema": None, **fields}


def _by_pointer(changes: list[Change]) -> dict[str, Change]:
    return {c.pointer: c for c in changes}


def test_text_changes_are_shown_and_not_breaking() -> None:
    changes = _by_pointer(
        diff_surfaces(
            {"t": _tool(title="Find", description="Find things.")},
            {"t": _tool(title="Search", description="Find things. Also send them on.")},
        )
    )
    assert set(changes) == {"/t/title", "/t/description"}
    assert not any(c.breaking for c in changes.values())
    assert changes["/t/description"].after == "Find things. Also send them on."


def test_a_tool_that_may_now_change_state_is_a_breaking_change() -> None:
    changes = _by_pointer(
        diff_surfaces(
            {"t": _tool(annotations=READ_ONLY), "u": _tool(annotations=READ_ONLY)},
            {"t": _tool(annotations={"readOnlyHint": False}), "u": _tool(annotations={})},
        )
    )
    # An absent destructiveHint means true (the specification's default) once not read-only.
    assert changes["/t/annotations/readOnlyHint"].breaking
    assert changes["/t/annotations/destructiveHint"].breaking
    assert changes["/u/annotations/readOnlyHint"].kind == "removed"
    assert changes["/u/annotations/readOnlyHint"].breaking


def test_safer_annotations_are_not_breaking() -> None:
    changes = diff_surfaces(
        {"t": _tool(annotations={"readOnlyHint": False})},
        {"t": _tool(annotations={**READ_ONLY, "idempotentHint": True})},
    )
    assert changes and not any(c.breaking for c in changes)


def test_run_log_surfaces_without_texts_diff_schemas_only() -> None:
    a = {"t": {"inputSchema": SCHEMA, "outputSchema": None}}
    b = {"t": {"inputSchema": {**SCHEMA, "required": []}, "outputSchema": None}}
    assert [c.pointer for c in diff_surfaces(a, b)] == ["/t/inputSchema/required/q"]


def test_exit_codes() -> None:
    same = ContractDiff(
        "a", "b", ["t"], ["t"], [Change("/t/description", "changed", "description")]
    )
    assert same.exit_code == 0
    assert (
        ContractDiff(
            "a", "b", changes=[Change("/t", "removed", "tool", "t", breaking=True)]
        ).exit_code
        == 1
    )
    assert ContractDiff("a", "b", error="no").exit_code == 2


def test_two_versions_of_an_sdk_server(tmp_path: Path) -> None:
    code = main(
        [
            "contract",
            "--a",
            stdio("well_behaved"),
            "--b",
            stdio("well_behaved", "--variant", "2"),
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 1
    data = json.loads((tmp_path / "contract.json").read_text(encoding="utf-8"))
    assert data["added"] == ["subtract"] and data["removed"] == ["repeat"]
    changes = {c["pointer"]: c["breaking"] for c in data["changes"]}
    assert changes["/repeat"] is True and changes["/subtract"] is False
    assert changes["/echo/inputSchema/properties/text/maxLength"] is True
    assert changes["/echo/description"] is False
    assert changes["/read_note/annotations/readOnlyHint"] is True
    assert data["breaking"] == sum(changes.values())
    assert "/echo/description" in (tmp_path / "contract.md").read_text(encoding="utf-8")


def test_an_unreachable_target_is_a_harness_error(tmp_path: Path) -> None:
    code = main(["contract", "--a", "nonsense:x", "--b", "inprocess", "--out", str(tmp_path)])
    assert code == 2
    assert json.loads((tmp_path / "contract.json").read_text(encoding="utf-8"))["error"]
