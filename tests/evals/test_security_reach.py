"""Reaching every tool: probe arguments built from the schema (pattern, format, bounds, every
enum value), a refused probe retried with other valid arguments, a probe that never reaches
its tool reported per tool and probe and never counted as checked. Expected values come from
the fixtures' source (tests/fixtures/servers/currency.py, enum_second.py) and the schemas
written here, never from the checks' own output."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from security_servers import stdio

from evals.run.security.findings import SecurityReport
from evals.run.security.probe import alternatives, judge, valid_args
from evals.run.security.reach import sweep
from evals.run.security.refusal import refusal
from evals.run.security.runner import Options, run_security
from evals.run.security.session import Call
from evals.run.security.surface import ToolSurface
from ocm_cli.program import main
from ocm_common.json_types import Arguments, JsonSchema

CURRENCY: JsonSchema = {
    "type": "object",
    "properties": {
        "amount": {"type": "number", "minimum": 0, "maximum": 1000},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "when": {"type": "string", "format": "date"},
        "kind": {"type": "string", "enum": ["spot", "forward", "average"]},
    },
    "required": ["amount", "currency", "when", "kind"],
}


async def _run(spec: str, *families: str, **options: object) -> SecurityReport:
    report = await run_security(spec, Options(families=families, **options))  # type: ignore[arg-type]
    assert report.error is None, report.error
    return report


def _named(report: SecurityReport) -> set[tuple[str, str | None]]:
    return {(f.check, f.tool) for f in report.findings}


# ----------------------------------------------------------------------------- arguments


def test_valid_arguments_honour_pattern_format_and_bounds() -> None:
    args: dict[str, Any] = valid_args(CURRENCY)
    assert re.fullmatch("[A-Z]{3}", args["currency"])
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", args["when"])
    assert 0 <= args["amount"] <= 1000 and args["kind"] in ("spot", "forward", "average")


def test_the_sweep_tries_every_enum_value_first() -> None:
    tool = ToolSurface("rates", input_schema=CURRENCY)
    planned: list[dict[str, Any]] = sweep(tool, limit=3)[0]
    assert [args["kind"] for args in planned] == ["spot", "forward", "average"]
    assert all(re.fullmatch("[A-Z]{3}", args["currency"]) for args in planned)


def test_refusals_are_told_from_the_tools_own_errors() -> None:
    args: Arguments = {"currency": "test", "amount": 1}
    pydantic = (
        "1 validation error for call[convert]\ncurrency\n  String should match pattern "
        "'^[A-Z]{3}$' [type=string_pattern_mismatch, input_value='test', input_type=str]"
    )
    found = refusal(pydantic, args)
    assert found is not None and found.names == {"currency"}
    assert found.patterns == ("^[A-Z]{3}$",)
    jsonschema_style = refusal("Input validation error: 'test' does not match '^[A-Z]{3}$'", args)
    assert jsonschema_style is not None and jsonschema_style.names == {"currency"}
    listed = refusal("currency must be one of: EUR, USD, GBP", args)
    assert listed is not None and listed.values == ("EUR", "USD", "GBP")
    assert refusal("no such file under the root", {"path": "x"}) is None
    assert refusal("unknown note; known notes: todo.txt", {"path": "x"}) is None


def test_a_refused_filler_is_retried_with_what_the_error_asks_for() -> None:
    schema: JsonSchema = {"type": "object", "properties": {"currency": {"type": "string"}}}
    call = Call(
        "rate", {"currency": "test"}, "reach", "tool-error", "currency must be one of: EUR, USD"
    )
    verdict, found = judge(call, {}, ["currency"])
    assert verdict == "unreached"
    assert alternatives(schema, call.args, {}, found)[:2] == [
        {"currency": "EUR"},
        {"currency": "USD"},
    ]
    # the same error about the probe's own value: the server refused the probe (checked)
    assert judge(call, {"currency": "test"}, ["currency"])[0] == "refused"


# ----------------------------------------------------------------------------- fixtures


async def test_tools_behind_a_pattern_or_a_listed_value_are_reached() -> None:
    report = await _run(stdio("currency"), "reach", "secrets")
    assert ("canary_leak", "convert") in _named(report)  # currency must match ^[A-Z]{3}$
    assert ("canary_leak", "rate") in _named(report)  # the error lists EUR, USD, GBP
    rows = {(r["tool"], r["probe"]): r for r in report.reach}
    assert rows[("convert", "reach")]["reached"] >= 1
    assert rows[("rate", "reach")]["reached"] >= 1


async def test_a_tool_no_probe_reaches_is_named_with_the_reason() -> None:
    report = await _run(stdio("currency"), "reach")
    [unreachable] = [f for f in report.findings if f.check == "tool_unreachable"]
    assert unreachable.tool == "audit" and unreachable.level == "warning"
    row = next(r for r in report.reach if r["tool"] == "audit")
    assert row["reached"] == row["refused"] == 0 and row["unreached"] >= 1
    assert any("must be a valid session token" in r for r in row["could_not_reach"])
    assert all(
        r.startswith(("could not reach: ", f"{row['unreached']} x could not reach: "))
        for r in row["could_not_reach"]
    )
    assert report.unreached_tools() == ["audit"]


async def test_a_tool_misbehaving_on_its_second_enum_value_is_found() -> None:
    report = await _run(stdio("enum_second"), "reach", "secrets")
    [leak] = [f for f in report.findings if f.check == "canary_leak"]
    assert leak.tool == "report" and '"kind": "detail"' in (leak.reproduction or "")


def test_the_reports_show_which_probes_reached_each_tool(tmp_path: Path) -> None:
    code = main(
        ["security", "--target", stdio("currency"), "--family", "reach", "--out", str(tmp_path)]
    )
    assert code == 0  # a tool no probe reached is a warning
    data = json.loads((tmp_path / "security.json").read_text(encoding="utf-8"))
    assert {r["tool"] for r in data["reach"]} == {"convert", "rate", "audit"}
    markdown = (tmp_path / "security.md").read_text(encoding="utf-8")
    assert "## Reach" in markdown and "could not reach: invalid argument 'token'" in markdown
    assert {c["reach"] for c in data["call_log"]} >= {"reached", "retried", "unreached"}
