"""Data sent where the caller did not say. A tool that sends (an argument named or described
as a recipient, address, channel or destination) is called with one recipient the harness
made up at a reserved domain (``example.org``); every e-mail address and host its result
names that the arguments do not (a ``bcc`` the tool added, a relay it copies the message
to), and every absolute file path (a copy it keeps), is a destination the caller never chose. An address labelled as the sender (``from``,
``sender``, ``reply-to``) is not a destination."""

from __future__ import annotations

import json
import re
import secrets
from urllib.parse import urlsplit

from evals.run.security.capability import finding, is_string, name_tokens, recognised
from evals.run.security.findings import Finding
from evals.run.security.inputs import plain
from evals.run.security.probe import probe_call
from evals.run.security.registry import Context
from evals.run.security.surface import ToolSurface
from ocm_common.json_types import Arguments, JsonValue

CHECK = "undeclared_recipient"
RECIPIENT_NAMES = frozenset(
    {"to", "recipient", "recipients", "cc", "bcc", "email", "emails", "channel", "destination"}
    | {"dest", "addressee", "mailto", "phone"}
)
RECIPIENT_WORDS = re.compile(
    r"\b(recipients?|e-?mail address(es)?|send (it |the \w+ )?to|addressee|destination)\b",
    re.I,
)
EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")
LOCAL_PART, DOMAIN_PART = 64, 255  # RFC 5321 limits: how far around an @ an address reaches
URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s\"'<>)\]]+", re.I)
SENDER_LABEL = re.compile(
    r"(from|sender|reply[-_ ]?to|sent[-_ ]by)[\\\"']*\s*[:=]?\s*[\[\\\"']*\s*$", re.I
)
ABSOLUTE_PATH = re.compile(r"(?<![\w:/.\\])/(?:[\w.\-]+/)+[\w.\-]+")
RESERVED_DOMAIN = "example.org"
SENDS = re.compile(
    r"\b(send|sends|sending|mail|e-?mails?|messages?|notify|notification|forward|share|invite|"
    r"post|deliver|publish|reply|sms|text)\b",
    re.I,
)


def sends(tool: ToolSurface) -> bool:
    """The tool's name or description speaks of sending something to someone."""
    words = " ".join(name_tokens(tool.name))
    return bool(SENDS.search(words) or SENDS.search(tool.description or ""))


def recipient_value(schema: object, address: str) -> JsonValue:
    """The made-up address in the argument's shape (a list for an array argument)."""
    s = plain(schema)
    return [address] if s.get("type") == "array" else address


def _emails(output: str) -> list[tuple[int, str]]:
    """(start, address) of every e-mail address, found from each ``@`` outwards (a scan from
    every position would take quadratic time on a long run of word characters)."""
    out: list[tuple[int, str]] = []
    end = 0
    for at in (m.start() for m in re.finditer("@", output)):
        if at < end:
            continue
        start = max(end, at - LOCAL_PART)
        m = EMAIL.search(output, start, min(len(output), at + DOMAIN_PART))
        while m is not None and m.end() <= at:
            m = EMAIL.search(output, m.end(), min(len(output), at + DOMAIN_PART))
        if m is not None and m.start() <= at < m.end():
            out.append((m.start(), m.group(0)))
            end = m.end()
    return out


def destinations(output: str) -> list[str]:
    """Every e-mail address, URL host and absolute file path in ``output``, except addresses
    labelled as the sender."""
    found: list[str] = []
    for start, address in _emails(output):
        if not SENDER_LABEL.search(output[max(0, start - 24) : start]):
            found.append(address.lower().rstrip("."))
    for m in URL.finditer(output):
        host = (urlsplit(m.group(0)).hostname or "").lower()
        if host:
            found.append(host)
    without_urls = URL.sub(" ", output)
    found += [m.group(0) for m in ABSOLUTE_PATH.finditer(without_urls)]
    return list(dict.fromkeys(found))


def unasked(output: str, args: Arguments) -> list[str]:
    """Destinations in ``output`` that the arguments do not name (a path counts as named
    when its file name is in the arguments: a server may report it resolved)."""
    given = json.dumps(args, ensure_ascii=False).lower()
    return [
        d
        for d in destinations(output)
        if d.lower() not in given and not (d.startswith("/") and d.rsplit("/", 1)[-1] in given)
    ]


async def probe(ctx: Context, tool: ToolSurface) -> tuple[list[Finding], int]:
    """Findings for ``tool`` (one per recipient argument) and the number of probes; only a
    tool that says it sends is probed (a lookup that returns addresses is not sending)."""
    findings: list[Finding] = []
    probed = 0
    if not sends(tool):
        return findings, probed
    for name, schema in tool.properties.items():
        items = plain(schema).get("items") if plain(schema).get("type") == "array" else None
        if not is_string(items if items is not None else schema):
            continue
        if not recognised(name, schema, RECIPIENT_NAMES, RECIPIENT_WORDS, frozenset({"email"})):
            continue
        probed += 1
        address = f"ocm-{secrets.token_hex(4)}@{RESERVED_DOMAIN}"
        fixed = {name: recipient_value(schema, address)}
        call = await probe_call(ctx.session, tool, fixed, CHECK)
        args = call.args
        if call.status != "ok":
            continue
        extra = unasked(call.output(), args)
        if not extra:
            continue
        message = (
            f"given one recipient in {name!r}, the tool reports sending to "
            f"{', '.join(extra[:3])} as well, which no argument named"
        )
        evidence = f"asked: {address}; also in the result: {', '.join(extra[:5])}"
        findings.append(finding(ctx, CHECK, tool, name, message, evidence, args))
    return findings, probed
