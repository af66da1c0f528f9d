"""The conformance core: one grading table read by fuzz and security, type coercion as one
rule, a run that called nothing saying so, and the parallel checks on the event stream."""

from __future__ import annotations

from evals.conformance.grading import TABLE
from evals.run.fuzz_checks import RULES, Context, run_checks
from evals.run.fuzz_models import EXIT_NOTHING_CALLED, FuzzReport
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.security.findings import SecurityReport
from evals.run.security.registry import FAMILIES
from load.parallel_report import ParallelReport
from ocm_common.findings import Event, Finding, Skipped


def test_every_fuzz_rule_and_security_check_takes_its_grade_from_the_one_table() -> None:
    for rule in RULES.values():
        assert rule.grade == TABLE[rule.name].grade
    transport = {"origin_not_validated", "host_not_validated", "auth_not_enforced"}
    transport |= {"www_authenticate_missing"}  # graded by the answer, per finding
    for family in FAMILIES.values():
        for check in family.checks:
            assert check in TABLE or check in transport, check
    # the rules both commands report, by the same name
    assert {"no_crash", "no_stack_trace"} <= set(RULES) & set(FAMILIES["secrets"].checks)


def _wrong_type(value: object, declared: dict[str, object]) -> list[str]:
    tool = ToolInfo("t", {"type": "object", "properties": {"x": declared}})
    ctx = Context("invalid", ["x"], tool, 1000.0, family="wrong_type", args={"x": value})
    answered = CallOutcome({"ok": True}, False, '{"ok": true}')
    from evals.run.fuzz_checks import classify

    return [rule.name for rule, _ in run_checks(classify(answered, None), ctx, house_rules=False)]


def test_a_string_holding_a_value_of_the_declared_type_is_one_rule_whatever_the_type() -> None:
    array = {"type": "array", "items": {"type": "string"}}
    assert _wrong_type("5", {"type": "integer"}) == ["strict_types"]
    assert _wrong_type('["a"]', array) == ["strict_types"]
    assert _wrong_type("{}", {"type": "object"}) == ["strict_types"]
    # text that is not a value of the declared type accepted: the input was not validated
    assert _wrong_type("[1]", {"type": "array", "items": {"type": "string"}}) == ["input_refused"]
    assert _wrong_type("five", {"type": "integer"}) == ["input_refused"]


def test_a_fuzz_run_that_called_nothing_says_so_and_exits_3() -> None:
    skipped = [
        Skipped("a", "not declared read-only (readOnlyHint is not true); pass --allow-writes"),
        Skipped("b", "not declared read-only (readOnlyHint is not true); pass --allow-writes"),
        Skipped("c", "runs only as a task (taskSupport: required); task calls are not checked"),
    ]
    report = FuzzReport("stdio:x", "default", [], [], 1.0, skipped=skipped)
    assert report.ok and report.called_nothing and report.exit_code == EXIT_NOTHING_CALLED == 3
    assert report.nothing_called_line() == (
        "0 calls: 3 tools skipped (2 not declared read-only (readOnlyHint is not true); "
        "1 runs only as a task (taskSupport: required))"
    )
    failing = FuzzReport("stdio:x", "default", [], [Finding("answers", "spec-must", "m")], 1.0)
    assert failing.exit_code == 1


def test_a_security_family_that_made_no_calls_says_so() -> None:
    report = SecurityReport("stdio:x", checks={"path_escape": "paths", "canary_leak": "secrets"})
    report.family_calls = {"paths": 0, "secrets": 0}
    assert report.families_without_calls == ["paths", "secrets"] and report.exit_code == 3
    rows = {c["name"]: c for c in report.to_json()["checks"]}
    assert rows["path_escape"]["findings"] is None and not rows["path_escape"]["made_calls"]
    report.findings.append(Finding("hidden_instructions", "security", "m", tool="t"))
    assert report.exit_code == 1


def test_the_parallel_checks_report_on_the_event_stream() -> None:
    report = ParallelReport()
    seen: list[Event] = []
    report.events.subscribe(seen.append)
    report.add("a", "opa.search", True, "p50 near the delay")
    report.add("d", "opa.get_section", False, "waited for the slow calls")
    assert [e.kind for e in seen] == ["passed", "finding"]
    miss = seen[1].finding
    assert miss is not None and miss.check == "parallel_d" and miss.tool == "opa.get_section"
