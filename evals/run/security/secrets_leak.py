"""Secrets in what the server sends back. Every result and error text of the run is read
for:

- ``canary_leak``: the random value the harness put in the server's environment (stdio and
  in-process targets) - proof that environment contents reach clients;
- ``key_pattern_leak``: well-known credential formats (AWS access key ids, GitHub and
  OpenAI tokens, Slack tokens, Google API keys, PEM private keys) and ``api_key=...``-style
  assignments whose value looks random (Shannon entropy);
- ``error_details_exposed``: error texts that carry an exception's internals (a traceback,
  file and line, ``[Errno n]``, an exception class name), which tell an attacker about the
  server and are how unhandled exceptions usually surface.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from evals.run.security.findings import TOOLS_SECURITY, Finding
from evals.run.security.inputs import base_args
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import call_line
from evals.run.security.session import Call

FAMILY = "secrets"

KEY_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
        ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b"),
        ("OpenAI API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}"),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
        ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
        ("private key", r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY(?: BLOCK)?-----"),
    )
)
ASSIGNMENT = re.compile(
    r"(?i)\b(api[_-]?key|secret(?:[_-]?key)?|access[_-]?token|auth[_-]?token|password|passwd|"
    r"client[_-]?secret|aws_secret_access_key)\b[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+_\-.=]{16,})"
)
MIN_ENTROPY = 3.5  # bits per character: random base64/hex keys are above, words below
EXCEPTION_SIGNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("a Python traceback", r"Traceback \(most recent call last\)"),
        ("a source file and line", r"File \"[^\"]+\.py\", line \d+|\bat [\w.$]+\([\w.]+:\d+\)"),
        ("an OS error number", r"\[Errno \d+\]"),
        (
            "an exception class name",
            r"\b(?:[A-Z][a-z0-9]+)+(?:Error|Exception)\b(?=: |\()|"
            r"\b(?:KeyError|IndexError|AttributeError|ZeroDivisionError|TypeError|"
            r"NameError|AssertionError|RecursionError|UnboundLocalError)\b",
        ),
        (
            "an internal path",
            r"(?<![\w/])/(?:home|srv|opt|usr|var|app)/[\w.\-/]+\.(?:py|js|ts|go|rb)\b",
        ),
    )
)


def entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def key_matches(text: str) -> list[tuple[str, str]]:
    """(label, matched text) for every credential-looking string in ``text``."""
    found = [(label, m.group(0)) for label, p in KEY_FORMATS for m in p.finditer(text)]
    for m in ASSIGNMENT.finditer(text):
        value = m.group(2)
        if entropy(value) >= MIN_ENTROPY and any(c.isdigit() for c in value):
            found.append((f"{m.group(1)} assignment", m.group(0)))
    return found


def exception_signs(text: str) -> list[str]:
    return [label for label, p in EXCEPTION_SIGNS if p.search(text)]


def _redact(value: str) -> str:
    return value[:8] + "..." if len(value) > 12 else value


def _finding(check: str, level: str, message: str, call: Call, evidence: str, spec: str) -> Finding:
    return Finding(
        check=check,
        family=FAMILY,
        grade="security" if level == "error" else "warning",
        level=level,  # type: ignore[arg-type]
        message=message,
        tool=call.tool,
        where=f"{call.purpose} call ({call.status})",
        evidence=evidence[:300],
        reference=TOOLS_SECURITY,
        reproduction=call_line(spec, call.tool, call.args),
    )


@family(
    FAMILY,
    checks=("canary_leak", "key_pattern_leak", "error_details_exposed"),
    phase="after",
)
async def check_secrets(ctx: Context) -> list[Finding]:
    """The canary, credential formats and exception internals in every result or error."""
    called = {c.tool for c in ctx.session.calls}
    for tool in ctx.callable_tools:
        if tool.name not in called:
            await ctx.session.call(tool.name, base_args(tool.input_schema), "secrets")
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
                    "error",
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
                    "error",
                    f"a credential-looking string ({label}) in a result",
                    call,
                    _redact(value),
                    ctx.spec,
                )
            )
        signs = exception_signs(call.text) if call.status != "ok" else []
        if signs and ("error_details_exposed", call.tool) not in seen:
            seen.add(("error_details_exposed", call.tool))
            findings.append(
                _finding(
                    "error_details_exposed",
                    "warning",
                    "an error text shows the server's internals (" + ", ".join(signs) + ")",
                    call,
                    call.text,
                    ctx.spec,
                )
            )
    return findings
