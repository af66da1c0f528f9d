"""What every answer says: each result and error of the run (every family's probes and the
plain schema-valid calls alike) is read for

- ``result_injection``: text that speaks to the model (the wording :mod:`.poisoning` looks
  for in descriptions that speaks to a model wherever it is read: instruction tags,
  "ignore previous instructions", "you must now", chat-template markers, a note to the AI)
  or Unicode tag characters spelling a hidden message; text the arguments already held (an
  echo of the harness's own probe) is not counted;
- ``information_leak``: a stack trace in an answer that is not an error (errors are the
  secrets family's ``no_stack_trace``), or an absolute path that exists on this machine,
  lies outside the declared root, and that no argument and nothing the tool publishes named
  (the server's HOME, its source files, its working folder); the path families' own probes
  are judged by those families;
- ``undeclared_destination``: an e-mail address, URL host or path the answer says it sent
  or copied something to (one after "sent", "cc", "bcc", "forwarded", "copied"... within a
  few words; a lookup that returns an address sends nothing) that neither the arguments nor
  the tool's published text named (:mod:`.recipients`' reading, applied to every call);
- ``result_too_large``: an answer over the size bound (``--max-result-bytes``, 1 MB), to
  arguments under a tenth of it (an echo of a huge argument is the unbounded family's);
- ``text_not_utf8``: a lone surrogate in the text that reached the harness, or an answer the
  client could not read because it held bytes that are not UTF-8 or a lone surrogate escape
  (the stdio transport reads bytes and says which, :mod:`evals.run.stdio_process`; another
  transport's parse error names a surrogate or a hex escape).

One finding per check and tool, naming the probe (its family and arguments) that showed it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path

from evals.conformance.calls import STACK_TRACE
from evals.run.security import recipients
from evals.run.security.findings import Finding
from evals.run.security.paths import PATH_IN_TEXT
from evals.run.security.poisoning import SPOKEN_TO_MODEL
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import call_finding
from evals.run.security.session import SURROGATE, Call, printable
from evals.run.security.surface import ToolSurface

FAMILY = "results"
INJECTION, LEAK, DESTINATION = "result_injection", "information_leak", "undeclared_destination"
TOO_LARGE, NOT_UTF8 = "result_too_large", "text_not_utf8"
TAG_CHARS = re.compile("[\U000e0000-\U000e007f]")
SENT = re.compile(
    r"\b(sent|sending|send|forward(ed|ing)?|b?cc|copied|copy|deliver(ed|ing)?|e-?mailed|mailed|"
    r"posted|uploaded|shared|notified|relay(ed)?|exported|synced|also to|and to)\b",
    re.I,
)
# Locations every machine has (the system's programs, libraries and settings), named by tools
# for reasons of their own; what a server discloses about itself lies elsewhere.
SYSTEM_PLACES = (
    "/dev/",
    "/proc/",
    "/sys/",
    "/bin/",
    "/sbin/",
    "/usr/",
    "/lib/",
    "/lib64/",
    "/etc/",
)
PATH_FAMILIES = ("paths", "path_probes")
NOT_UTF8_SIGNS = (
    (
        re.compile(r"invalid UTF-8[^\n]{0,60}|utf-?8' codec can't decode[^\n]{0,60}", re.I),
        "bytes that are not UTF-8",
    ),
    (
        re.compile(r"lone (?:leading )?surrogate[^\n]{0,40}|end of hex escape", re.I),
        "a lone surrogate escape",
    ),
)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _given(call: Call) -> str:
    return json.dumps(call.args, ensure_ascii=False).lower()


def _published(tool: ToolSurface | None) -> str:
    return "\n".join(text for _, text in tool.texts()).lower() if tool else ""


def injection(call: Call) -> str | None:
    """The first instruction-like wording in the answer the arguments did not hold."""
    output, given = call.output(), _given(call)
    for pattern, label in SPOKEN_TO_MODEL:
        for match in pattern.finditer(output):
            if match.group(0).lower() not in given:
                return f"{label}: {output[max(0, match.start() - 40) : match.end() + 60]!r}"
    tags = TAG_CHARS.findall(output)
    if tags and not TAG_CHARS.search(given):
        hidden = "".join(chr(ord(c) - 0xE0000) for c in tags if 0xE0020 <= ord(c) <= 0xE007E)
        return f"{len(tags)} Unicode tag characters spelling {hidden!r}"
    return None


def configured_places(spec: str) -> tuple[Path, ...]:
    """The absolute paths the operator gave the server on its command line (a filesystem
    server's allowed folder, a repository): the server naming them discloses nothing."""
    try:
        words = shlex.split(spec.removeprefix("stdio:"))
    except ValueError:
        words = spec.split()
    places = []
    for word in words:
        value = word.split("=", 1)[-1]
        if value.startswith("/") and len(value) > 1:
            places.append(Path(value))
    return tuple(places)


def leaked(
    call: Call, tool: ToolSurface | None, root: Path, configured: tuple[Path, ...] = ()
) -> str | None:
    """A stack trace in a non-error answer, or an existing path outside ``root`` and the
    places the server was configured with, that no argument and no published text named."""
    output = call.output()
    if call.status == "ok" and STACK_TRACE.search(output):
        return f"a stack trace: {output[:160]!r}"
    if call.purpose in PATH_FAMILIES:
        return None
    given, published = _given(call), _published(tool)
    for match in PATH_IN_TEXT.finditer(output):
        found = match.group(0).rstrip(".:'\"")
        parts = found.strip("/").split("/")
        if len(parts) < 2 or ".." in parts or found.startswith(SYSTEM_PLACES):
            continue
        if found.lower() in given or found.lower() in published:
            continue
        path = Path(found)
        allowed = {root, root.resolve(), *configured}
        if any(path == r or r in path.parents for r in allowed):
            continue
        if os.path.exists(found):
            return f"the path {found} (it exists on the server's machine)"
    return None


def destinations(call: Call, tool: ToolSurface | None) -> list[str]:
    """Destinations the answer says something went to that nobody named."""
    if call.purpose == recipients.CHECK or call.status != "ok":
        return []
    output = call.output()
    published = _published(tool)
    unasked = [d for d in recipients.unasked(output, call.args) if d.lower() not in published]
    said = []
    for place in unasked:
        at = output.find(place)
        if at < 0:
            at = output.lower().find(place.lower())
        if at >= 0 and SENT.search(output[max(0, at - 60) : at]):
            said.append(place)
    return said


def not_utf8(call: Call) -> str | None:
    """A lone surrogate in the answer's text, or what made the answer unreadable."""
    at = SURROGATE.search(call.output())
    if at is not None:
        return f"a lone surrogate (U+{ord(at.group(0)):04X}) at character {at.start()}"
    for message in [*call.unparsed, call.text if call.status == "protocol-error" else ""]:
        for sign, what in NOT_UTF8_SIGNS:
            found = sign.search(message)
            if found:
                return f"{what}, so the client could not read it ({found.group(0)})"
    return None


@family(FAMILY, checks=(INJECTION, LEAK, DESTINATION, TOO_LARGE, NOT_UTF8), phase="after")
async def check_results(ctx: Context) -> list[Finding]:
    """Every answer read for instructions to the model, internals, destinations nobody
    named, its size, and text that is not UTF-8."""
    surfaces = {t.name: t for t in ctx.tools}
    configured = configured_places(ctx.spec)
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()

    def add(check: str, call: Call, message: str, evidence: str) -> None:
        if (check, call.tool) in seen:
            return
        seen.add((check, call.tool))
        findings.append(call_finding(ctx.spec, FAMILY, check, call, message, printable(evidence)))

    readers: list[tuple[str, Callable[[Call], str | None], str]] = [
        (INJECTION, injection, "the answer speaks to the model"),
        (
            LEAK,
            lambda c: leaked(c, surfaces.get(c.tool), ctx.sandbox.root, configured),
            "the answer discloses",
        ),
        (NOT_UTF8, not_utf8, "the answer is not valid UTF-8 text"),
    ]
    for call in ctx.session.calls:
        if not call.output() and not call.unparsed:
            continue
        for check, read, what in readers:
            found = read(call)
            if found:
                add(check, call, f"{what}: {found.split(':')[0]}", found)
        places = destinations(call, surfaces.get(call.tool))
        if places:
            add(
                DESTINATION,
                call,
                f"the answer names {', '.join(places[:3])} as somewhere it sent or copied to, "
                "which no argument and nothing the tool publishes named",
                f"also in the answer: {', '.join(places[:5])}; arguments "
                f"{printable(json.dumps(call.args, ensure_ascii=False))[:160]}",
            )
        size = call.size_bytes()
        asked = len(json.dumps(call.args, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        # a big answer to the unbounded family's own boundary-sized request is that family's
        # (it reports the missing maximum); here, only answers to ordinary calls
        amplified = call.purpose.startswith("unbounded")
        if size > ctx.max_result_bytes and asked * 10 < ctx.max_result_bytes and not amplified:
            add(
                TOO_LARGE,
                call,
                f"the answer is {size:,} bytes, over the bound of {ctx.max_result_bytes:,}",
                f"{size:,} bytes: text {_bytes(call.text):,}, structuredContent "
                f"{_bytes(json.dumps(call.structured, ensure_ascii=False)) if call.structured is not None else 0:,}; "
                f"arguments {asked:,} bytes",
            )
    return findings
