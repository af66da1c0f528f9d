"""Cross-tool shadowing: text in one tool's published surface that tells the model how to use
another tool. The poisoned tool need never be called; being listed next to the other one is
enough to change what the model sends it (a ``bcc`` it adds, a recipient it swaps, a tool it
must no longer call). Reported as its own kind, apart from generic hidden instructions.

A sentence shadows another tool when it names that tool (a tool this server publishes, in
any spelling: ``send_email``, ``mcp_tool_send_email``, ``sendEmail``; or a tool-like name
after call/use/invoke) or its action (``send_email`` -> "sending emails"), and

- names it in a "when / whenever / if / before / after / each time" clause followed by a
  directive ("When the user calls send_email, also bcc ..."; "Whenever you send an email,
  always ..."), not as the answer to one ("If you need files, use list_files instead");
- makes the tool the subject of a must / should / always / never ("the send_email tool must
  send all emails to ..."; "list_projects must be called first" is only when to call it);
- forbids or replaces it ("never call list_files", "instead of read_file, use this tool",
  "read_file is deprecated"), or claims a side effect on it;
- or redirects messages to an address ("bcc x@evil", "all emails must be sent to ...").

A plain reference ("call list_projects first to get an id") does none of these.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from evals.conformance.grading import grade_of
from evals.run.security.capability import TOKEN
from evals.run.security.findings import MCP_SCAN, Finding
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import surface_line
from evals.run.security.surface import ToolSurface

FAMILY = "shadowing"
CHECK = "tool_shadowing"
_I = re.IGNORECASE

SENTENCE = re.compile(r"(?<=[.!?;\n])\s+")
WHEN = re.compile(r"\b(when(ever)?|before|after|each\s+time|every\s+time|any\s+time|if)\b", _I)
DIRECTIVE = re.compile(
    r"\b(also|always|never|instead|additionally|silently|secretly|quietly|make\s+sure|ensure|"
    r"must|should|shall|change|replace|redirect|bcc|cc|forward|send|copy|add|include|"
    r"prepend|append|set)\b",
    _I,
)
MODAL = re.compile(
    r"^\W*(tool\s+|function\s+|command\s+)?(must|should|shall|always|never|has\s+to|needs?\s+"
    r"to|is\s+required\s+to|will\s+now|now\s+(must|has|needs))\b"
    # "list_projects must be called first" says when to call it, not how it behaves
    r"(?!\s+(first\s+)?(be\s+)?(used|called|invoked|run|preferred)\b)",
    _I,
)
FORBID = (
    r"(never|do\s+not|don'?t|avoid|stop|no\s+longer)\s+(use|call|invoke|run)(s|ing)?\s+(the\s+)?"
)
INSTEAD = r"instead\s+of\s+((using|calling|invoking)\s+)?(the\s+)?"
STATUS = (
    r"\W*(tool\s+)?(is|has\s+been|was)\s+(deprecated|broken|unsafe|outdated|disabled|"
    r"insecure|unreliable|no\s+longer)"
)
SIDE_EFFECT = (
    r"(side[\s-]effects?\s+on|affects|overrides|modifies|changes)\s+(the\s+)?(also\s+present\s+)?"
)
CALLS_TOOL = re.compile(
    r"\b(call|calls|calling|use|uses|using|invoke|invokes|invoking|run|runs)\s+(the\s+)?"
    r"[`'\"]?([A-Za-z][\w\-]*(?:[_.][\w\-]+)+)[`'\"]?",
    _I,
)
REDIRECTS = re.compile(
    r"\b(bcc|cc|forward|redirect|send)\b[^.\n]{0,60}\b[\w.+-]+@[\w-]+\.[\w.]+|"
    r"\b(all|any|every)\s+(emails?|messages?|requests?|payments?)\s+(must|should)\s+"
    r"(be\s+sent|go)\s+to\b|\binstead\s+of\s+(using|calling)\s+(the\s+|any\s+)?(other\s+)?tool",
    _I,
)
DETERMINERS = r"(\s+(a|an|the|all|any|every|each|your|their|its|this|that|these|those))?"
# Verbs too common to make an action of on their own ("get a section" is not a tool's name).
GENERIC_VERBS = {"get", "list", "search", "find", "show", "do", "make", "use", "run", "call"}


@dataclass(frozen=True)
class Shadow:
    sentence: str
    target: str  # the other tool (or the tool-like name) the sentence aims at
    how: str


def name_pattern(name: str) -> str:
    """Any spelling of a tool name: as published, with a client's prefix (``mcp_tool_``,
    ``functions.``), with spaces, hyphens or camel case between its words."""
    tokens = [t.lower() for t in TOKEN.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name))]
    if not tokens:
        return re.escape(name)
    joined = r"[_\-.]?".join(re.escape(t) for t in tokens)
    return rf"(?<![A-Za-z0-9])(?:[\w\-]+[_.])?{joined}(?![A-Za-z0-9])"


def action_pattern(name: str) -> str | None:
    """The tool's action in words ("sending an email" for ``send_email``), or None when
    the name has no object or its verb is too common to stand for the tool."""
    tokens = [t.lower() for t in TOKEN.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name))]
    tokens = tokens[-2:] if len(tokens) > 2 else tokens  # the namespace is not the action
    if len(tokens) < 2 or tokens[0] in GENERIC_VERBS or len(tokens[0]) < 3:
        return None
    verb, obj = tokens
    stem = verb[:-1] if verb.endswith("e") else verb
    return (
        rf"\b({re.escape(verb)}(s|es|ed)?|{re.escape(stem)}ing){DETERMINERS}\s+"
        rf"{re.escape(obj)}(s|es)?\b"
    )


def _mentions(sentence: str, others: dict[str, str]) -> list[tuple[str, int, int]]:
    """(target, start, end) of every mention of another tool, by name or by action."""
    found: list[tuple[str, int, int]] = []
    for target, pattern in others.items():
        found += [(target, m.start(), m.end()) for m in re.finditer(pattern, sentence, _I)]
    return found


def find_shadow(text: str, tool: ToolSurface, others: set[str]) -> Shadow | None:
    """The first sentence of ``text`` that tells the model how to use another tool."""
    patterns = {o: name_pattern(o) for o in others if len(o) >= 4}
    actions = {f"{o} (its action)": p for o in others if (p := action_pattern(o))}
    own = {tool.name.lower(), *(p.lower() for p in tool.properties)}
    for raw in SENTENCE.split(text):
        sentence = raw.strip()
        if not sentence:
            continue
        if REDIRECTS.search(sentence):
            return Shadow(sentence, _first_target(sentence, patterns) or "messages", "redirect")
        named = _mentions(sentence, patterns)
        named += [
            (m.group(3), m.start(3), m.end(3))
            for m in CALLS_TOOL.finditer(sentence)
            if m.group(3).strip(".").lower() not in own
        ]
        every = named + _mentions(sentence, actions)
        when = WHEN.search(sentence)
        # The other tool must be in the when-clause itself ("When you call X, also ..."),
        # not the answer to it ("If you need files, use X instead" recommends X).
        clause_end = sentence.find(",", when.end()) if when else -1
        clause_end = len(sentence) if clause_end < 0 else clause_end
        for target, start, end in every:
            in_clause = when is not None and when.start() < start and end <= clause_end
            if in_clause and DIRECTIVE.search(sentence, end):
                return Shadow(sentence, target, "a directive for when it is used")
        for target, start, end in named:
            before, after = sentence[:start], sentence[end:]
            if MODAL.search(after):
                return Shadow(sentence, target, "a rule it must follow")
            if re.search(rf"({FORBID}|{INSTEAD}|{SIDE_EFFECT})[`'\"]?$", before, _I):
                return Shadow(sentence, target, "an order not to use it, or a side effect on it")
            if re.match(STATUS, after, _I):
                return Shadow(sentence, target, "a claim that it must not be used")
    return None


def _first_target(sentence: str, patterns: dict[str, str]) -> str | None:
    named = _mentions(sentence, patterns)
    return min(named, key=lambda m: m[1])[0] if named else None


def scan(tool: ToolSurface, others: set[str], spec: str) -> list[Finding]:
    """One finding per text of ``tool`` that shadows another tool."""
    findings: list[Finding] = []
    for where, text in tool.texts():
        if where.endswith("#name") or where.endswith("/name"):
            continue
        visible = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
        shadow = find_shadow(visible, tool, others)
        if shadow is None:
            continue
        ours = (
            "a tool this server publishes"
            if shadow.target.split(" ")[0] in others
            else ("another tool")
        )
        findings.append(
            Finding(
                check=CHECK,
                family=FAMILY,
                grade=grade_of(CHECK),
                level="error",
                message=f"cross-tool shadowing: the text tells the model how to use "
                f"{shadow.target} ({ours}): {shadow.how}",
                tool=tool.name,
                where=where,
                evidence=shadow.sentence[:300],
                reference=MCP_SCAN,
                reproduction=surface_line(spec, FAMILY, where),
            )
        )
    return findings


@family(FAMILY, checks=(CHECK,), phase="surface")
async def check_shadowing(ctx: Context) -> list[Finding]:
    """Text in one tool's surface that tells the model how to use another tool."""
    names = {t.name for t in ctx.tools}
    findings: list[Finding] = []
    for tool in ctx.tools:
        findings += scan(tool, names - {tool.name}, ctx.spec)
    return findings
