"""Tool poisoning: text a model reads in ``tools/list`` that speaks to the model instead of
describing the tool. Two checks over every name, title, description, annotation string
and schema string (property descriptions included):

- ``hidden_instructions``: instruction tags (``<IMPORTANT>``), "ignore previous
  instructions", keeping something from the user, preconditions that read or send files,
  references to credential files;
- ``invisible_unicode``: zero-width, bidirectional-override, tag (U+E0000-E007F, which can
  spell a hidden ASCII message) and other format or control characters.

Text that tells the model how to use another tool is cross-tool shadowing, reported apart
(:mod:`evals.run.security.shadowing`). Plus ``tool_name_format``, the specification's SHOULD on tool names (1-128 characters of
``A-Za-z0-9_-.``). The patterns are phrases, not words, so ordinary descriptions (the
reference server's twelve tools) raise none.
"""

from __future__ import annotations

import re
import unicodedata

from evals.run.security.findings import MCP_SCAN, TOOL_NAMES, Finding
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import surface_line
from evals.run.security.surface import ToolSurface

FAMILY = "poisoning"
_I = re.IGNORECASE

# Wording that speaks to the model wherever it reads it: in a tool's published text or in
# what a tool returns (the results family reads every answer with these).
SPOKEN_TO_MODEL: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, _I), label)
    for pattern, label in (
        (
            r"<\s*/?\s*(important|system|instructions?|hidden|secret|critical|admin|assistant"
            r"|prompt)\b[^>]*>",
            "an instruction tag",
        ),
        (
            r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|"
            r"above|earlier|other|system)\s+(instructions|prompts?|rules|messages|directions)",
            "an instruction to ignore earlier instructions",
        ),
        (
            r"\b(do\s+not|don'?t|never)\s+(tell|inform|mention|reveal|show|notify|alert|"
            r"disclose)\b[^.\n]{0,40}\buser",
            "an instruction to keep something from the user",
        ),
        (
            r"\bwithout\s+(telling|informing|notifying|alerting|asking)\s+the\s+user",
            "an instruction to act without the user knowing",
        ),
        (
            r"\bthe\s+user\s+(must|should|need|needs)\s+not\s+(know|see|be\s+told)",
            "an instruction to keep something from the user",
        ),
        (r"\byou\s+must\s+now\b", "an order to the model ('you must now')"),
        (
            r"<\|(im_start|im_end|system|assistant|user)\|>|\[/?INST\]|<<\s*/?SYS\s*>>",
            "a chat-template marker",
        ),
        (
            r"\b(note|message|instructions?)\s+(to|for)\s+(the\s+)?(AI|assistant|model|LLM|"
            r"agent)\b",
            "a note addressed to the model",
        ),
    )
)
# Wording that is suspicious in a tool's description but ordinary in content a tool returns
# (a file listing naming /etc/passwd, a document saying "you are now eligible").
HIDDEN: tuple[tuple[re.Pattern[str], str], ...] = SPOKEN_TO_MODEL + tuple(
    (re.compile(pattern, _I), label)
    for pattern, label in (
        (
            r"\b(before|prior\s+to)\s+(using|calling|invoking|running)\s+(this|the|any)\s+"
            r"tool\b[^.\n]{0,100}\b(read|open|cat|load|send|fetch|upload|include|pass)\b",
            "a precondition that reads or sends something",
        ),
        (
            r"(~|\$HOME|/home/[^/\s]+|/root)/\.(ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc|"
            r"cursor|config/gcloud)\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|"
            r"/etc/(passwd|shadow)\b",
            "a reference to a credential or system file",
        ),
        (
            r"\byou\s+are\s+now\b|\bnew\s+instructions\s*:",
            "a role or prompt override",
        ),
    )
)

NAME_OK = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
# Variation selectors 17-256: invisible, and used to smuggle bytes ("sneaky bits").
INVISIBLE_RANGES = ((0xE0100, 0xE01EF),)
ALLOWED_CONTROLS = {"\n", "\r", "\t"}


def invisible_chars(text: str) -> list[tuple[int, str]]:
    """(index, character) of every format (Cf: zero-width, bidi, tags, BOM...), control or
    smuggling character."""
    found = []
    for i, ch in enumerate(text):
        cat = unicodedata.category(ch)
        code = ord(ch)
        if (
            cat == "Cf"
            or (cat == "Cc" and ch not in ALLOWED_CONTROLS)
            or any(lo <= code <= hi for lo, hi in INVISIBLE_RANGES)
        ):
            found.append((i, ch))
    return found


def describe_invisible(found: list[tuple[int, str]]) -> str:
    names = []
    for _, ch in found[:6]:
        names.append(f"U+{ord(ch):04X} {unicodedata.name(ch, 'UNNAMED')}")
    more = f" and {len(found) - 6} more" if len(found) > 6 else ""
    hidden = "".join(chr(ord(ch) - 0xE0000) for _, ch in found if 0xE0020 <= ord(ch) <= 0xE007E)
    return ", ".join(names) + more + (f"; tag characters spell {hidden!r}" if hidden else "")


def _excerpt(text: str, start: int, end: int, pad: int = 40) -> str:
    piece = text[max(0, start - pad) : end + pad].replace("\n", " ")
    return ("..." if start > pad else "") + piece + ("..." if end + pad < len(text) else "")


def scan_tool(tool: ToolSurface, others: set[str], spec: str) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()

    def add(check: str, grade: str, level: str, message: str, where: str, evidence: str) -> None:
        if (check, where) in seen:
            return
        seen.add((check, where))
        findings.append(
            Finding(
                check=check,
                family=FAMILY,
                grade=grade,  # type: ignore[arg-type]
                level=level,  # type: ignore[arg-type]
                message=message,
                tool=tool.name,
                where=where,
                evidence=evidence[:300],
                reference=TOOL_NAMES if check == "tool_name_format" else MCP_SCAN,
                reproduction=surface_line(spec, FAMILY, where),
            )
        )

    if not NAME_OK.match(tool.name):
        add(
            "tool_name_format",
            "spec-should",
            "warning",
            "tool name is not 1-128 characters of A-Z, a-z, 0-9, _, - and .",
            f"/{tool.name}/name",
            repr(tool.name),
        )
    for where, text in tool.texts():
        invisible = invisible_chars(text)
        if invisible:
            add(
                "invisible_unicode",
                "security",
                "error",
                "text a model reads carries characters a person reviewing it does not see",
                where,
                describe_invisible(invisible),
            )
        visible = "".join(ch for ch in text if not invisible_chars(ch))
        for pattern, label in HIDDEN:
            match = pattern.search(visible)
            if match:
                add(
                    "hidden_instructions",
                    "security",
                    "error",
                    f"{label} in the tool's published text",
                    where,
                    _excerpt(visible, match.start(), match.end()),
                )
                break
    return findings


@family(
    FAMILY,
    checks=(
        "hidden_instructions",
        "invisible_unicode",
        "tool_name_format",
    ),
    phase="surface",
)
async def check_poisoning(ctx: Context) -> list[Finding]:
    """Hidden instructions and invisible Unicode in everything ``tools/list`` published."""
    names = {t.name for t in ctx.tools}
    findings: list[Finding] = []
    for tool in ctx.tools:
        findings += scan_tool(tool, names - {tool.name}, ctx.spec)
    return findings
