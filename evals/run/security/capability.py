"""What the capability probes share: how an argument is recognised by its name, description
or format, the finding they report, and which of a tool's annotations a proven capability
contradicts."""

from __future__ import annotations

import re

from evals.conformance.grading import grade_of
from evals.run.security.findings import TOOLS_SECURITY, Finding
from evals.run.security.inputs import plain
from evals.run.security.registry import Context
from evals.run.security.reproduce import call_line
from evals.run.security.surface import ToolSurface
from ocm_common.json_types import Arguments

FAMILY = "capabilities"
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
TOKEN = re.compile(r"[A-Za-z0-9]+")


def name_tokens(name: str) -> set[str]:
    """``sendTo`` / ``send_to`` / ``send-to`` -> {"send", "to"} (lower case)."""
    return {t.lower() for t in TOKEN.findall(CAMEL.sub("_", name))}


def is_string(schema: object) -> bool:
    types = plain(schema).get("type")
    return types == "string" or (isinstance(types, list) and "string" in types)


def free_text(schema: object) -> bool:
    """A string argument that takes any text (no enum or const, not a date or an address)."""
    s = plain(schema)
    if not is_string(s) or "enum" in s or "const" in s:
        return False
    return s.get("format") not in ("date", "date-time", "time", "email", "uuid")


def fits(schema: object, value: str) -> bool:
    """``value`` satisfies the argument's pattern and maximum length, so the probe reaches the
    tool instead of its input validation."""
    s = plain(schema)
    if len(value) > int(s.get("maxLength", len(value)) or len(value)):
        return False
    pattern = s.get("pattern")
    try:
        return pattern is None or re.search(str(pattern), value) is not None
    except re.error:
        return True


def recognised(
    name: str,
    schema: object,
    names: frozenset[str],
    words: re.Pattern[str],
    formats: frozenset[str] = frozenset(),
) -> bool:
    """The argument's name has one of ``names`` as a word, its description matches
    ``words``, or its format is one of ``formats``."""
    s = plain(schema)
    if s.get("format") in formats:
        return True
    return bool(name_tokens(name) & names) or bool(words.search(str(s.get("description") or "")))


def finding(
    ctx: Context,
    check: str,
    tool: ToolSurface,
    argument: str,
    message: str,
    evidence: str,
    args: Arguments,
) -> Finding:
    return Finding(
        check=check,
        family=FAMILY,
        grade=grade_of(check),
        level="error",
        message=message,
        tool=tool.name,
        where=f"arguments/{argument}",
        evidence=evidence[:300],
        reference=TOOLS_SECURITY,
        reproduction=call_line(ctx.spec, tool.name, args),
    )


# What each proven capability contradicts: a shell or a message changes the world outside
# the tool (not read-only) and reaches past the tool's own data (not a closed world); a
# fetch of a caller-chosen URL reaches past it too.
CONTRADICTS: dict[str, tuple[str, ...]] = {
    "command_execution": ("readOnlyHint", "openWorldHint"),
    "outbound_request": ("openWorldHint",),
    "undeclared_recipient": ("readOnlyHint", "openWorldHint"),
}
CLAIMS = {"readOnlyHint": True, "openWorldHint": False}
SHOWN = {"readOnlyHint": "readOnlyHint: true", "openWorldHint": "openWorldHint: false"}


def annotation_findings(ctx: Context, proven: list[Finding]) -> list[Finding]:
    """One finding per tool whose annotations claim read-only or closed-world while a probe
    proved a capability that contradicts the claim."""
    by_tool: dict[str, list[Finding]] = {}
    for f in proven:
        if f.tool is not None:
            by_tool.setdefault(f.tool, []).append(f)
    surfaces = {t.name: t for t in ctx.tools}
    out: list[Finding] = []
    for name, found in sorted(by_tool.items()):
        annotations = surfaces[name].annotations if name in surfaces else {}
        broken = sorted(
            {
                SHOWN[hint]
                for f in found
                for hint in CONTRADICTS.get(f.check, ())
                if annotations.get(hint) is CLAIMS[hint]
            }
        )
        if not broken:
            continue
        what = ", ".join(sorted({f.check for f in found}))
        first = found[0]
        out.append(
            Finding(
                check="annotation_contradicted",
                family=FAMILY,
                grade=grade_of("annotation_contradicted"),
                level="error",
                message=f"the tool's annotations claim {' and '.join(broken)}, but a probe "
                f"proved {what}: a client that trusts the hints lets it run unasked",
                tool=name,
                where="annotations",
                evidence=f"annotations {annotations}; proven: {what}",
                reference=TOOLS_SECURITY,
                reproduction=first.reproduction,
            )
        )
    return out
