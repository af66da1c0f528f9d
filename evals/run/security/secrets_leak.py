"""Secrets in what the server sends back. Every result and error text of the run is read
for:

- ``canary_leak``: the random value the harness put in the server's environment (stdio and
  in-process targets) - proof that environment contents reach clients;
- ``key_pattern_leak``: well-known credential formats (AWS access key ids, GitHub and
  OpenAI tokens, Slack tokens, Google API keys, PEM private keys) and ``api_key=...``-style
  assignments whose value looks random (Shannon entropy);
- ``no_crash``: an error text that is an exception's (a traceback, a file and line,
  ``[Errno n]``, an exception class name, an internal path, the framework's wording for an
  unhandled exception): the tool did not handle it, and the text tells an attacker about the
  server;
- ``no_stack_trace``: in addition, when that text carries a stack trace.

Grades come from the one grading table (evals/conformance/grading.py), as for fuzz.
"""

from __future__ import annotations

from evals.conformance.calls import STACK_TRACE, crash_signs
from evals.conformance.canary import key_matches
from evals.conformance.grading import grade_of
from evals.run.security.findings import TOOLS_SECURITY, Finding
from evals.run.security.probe import probe_call
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import call_line
from evals.run.security.session import Call

FAMILY = "secrets"


def _redact(value: str) -> str:
    return value[:8] + "..." if len(value) > 12 else value


def _finding(check: str, message: str, call: Call, evidence: str, spec: str) -> Finding:
    return Finding(
        check=check,
        family=FAMILY,
        grade=grade_of(check),
        message=message,
        tool=call.tool,
        where=f"{call.purpose} call ({call.status})",
        evidence=evidence[:300],
        reference=TOOLS_SECURITY,
        reproduction=call_line(spec, call.tool, call.args),
    )


@family(
    FAMILY,
    checks=("canary_leak", "key_pattern_leak", "no_crash", "no_stack_trace"),
    phase="after",
)
async def check_secrets(ctx: Context) -> list[Finding]:
    """The canary, credential formats and exception internals in every result or error."""
    called = {c.tool for c in ctx.session.calls}
    for tool in ctx.callable_tools:
        if tool.name not in called:
            await probe_call(ctx.session, tool, {}, "secrets")
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    canary = ctx.sandbox.canary_value
    for call in ctx.session.calls:
        output = call.output()
        if call.status in ("timeout", "crash") or not output:
            continue
        if canary in output and ("canary_leak", call.tool) not in seen:
            seen.add(("canary_leak", call.tool))
            findings.append(
                _finding(
                    "canary_leak",
                    f"the value of {ctx.sandbox.canary_env}, set in the server's environment, "
                    "came back to the client",
                    call,
                    f"{ctx.sandbox.canary_env}={_redact(canary)} in the {call.status} text",
                    ctx.spec,
                )
            )
        for label, value in key_matches(output):
            if ("key_pattern_leak", f"{call.tool}:{label}") in seen:
                continue
            seen.add(("key_pattern_leak", f"{call.tool}:{label}"))
            findings.append(
                _finding(
                    "key_pattern_leak",
                    f"a credential-looking string ({label}) in a result",
                    call,
                    _redact(value),
                    ctx.spec,
                )
            )
        failed = call.status != "ok"
        signs = crash_signs(call.text) if failed else []
        if signs and ("no_crash", call.tool) not in seen:
            seen.add(("no_crash", call.tool))
            findings.append(
                _finding(
                    "no_crash",
                    "the error text is an unhandled exception's (" + ", ".join(signs) + ")",
                    call,
                    call.text,
                    ctx.spec,
                )
            )
        if failed and STACK_TRACE.search(call.text) and ("no_stack_trace", call.tool) not in seen:
            seen.add(("no_stack_trace", call.tool))
            findings.append(
                _finding(
                    "no_stack_trace", "a stack trace reached the client", call, call.text, ctx.spec
                )
            )
    return findings
