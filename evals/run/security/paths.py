"""Path and root escapes. The client declares one root (a sandbox directory) and plants a
marked file outside it. Every argument that looks like a path (its name or description
speaks of a path, file, directory or folder, or its format is a URI) is called with that
file's absolute path, a ``../`` walk to it from the working directory, ``/etc/passwd`` and a
deep ``../`` walk to it. A result carrying the marker or ``/etc/passwd``'s first line is
file content from outside the roots; so is an answer (result or error) that shows the walk
resolved to the file outside the root (:func:`revealed`: the resolved path in the text, which
the value never spelled out), unless the same answer refuses it as outside what is allowed."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

from evals.conformance.grading import grade_of
from evals.run.security.findings import ROOTS_SECURITY, Finding
from evals.run.security.inputs import plain
from evals.run.security.probe import probe_call
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import call_line
from evals.run.security.surface import ToolSurface

FAMILY = "paths"
PATH_NAME = re.compile(
    r"(^|_|-|\b)(path|file|filename|filepath|dir|directory|folder|location|uri)s?($|_|-|\b)",
    re.I,
)
CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
PATH_WORDS = re.compile(r"\b(path|file ?name|file|directory|folder)\b", re.I)
PASSWD = re.compile(r"root:[x*]?:0:0:")
URI_FORMATS = {"uri", "uri-reference", "iri", "iri-reference"}
PATH_IN_TEXT = re.compile(r"(?<![\w:/.\\~$}])/[^\s'\"`<>|,;()\[\]{}*?]+")
REFUSED = re.compile(
    r"outside|not allowed|denied|not permitted|forbidden|not within|not in (?:the )?allowed|"
    r"escapes?|leaves? the",
    re.I,
)
HOME_FORMS = ("~/", "$HOME/", "${HOME}/")


def _spelled(found: str, value: str) -> bool:
    """``value`` names ``found`` as an absolute path (not as the tail of a ``../`` walk)."""
    plain_value = unquote(value).replace("\\", "/")
    return re.search(rf"(?<![\w.]){re.escape(found)}", plain_value) is not None


def _inside(path: Path, root: Path) -> bool:
    return any(path == r or r in path.parents for r in {root, root.resolve()})


def revealed(output: str, value: str, root: Path, home: Path) -> str | None:
    """A location outside ``root`` that the answer shows ``value`` resolved to: a path in the
    text, with no ``..`` left in it, that ``value`` did not spell out, and that is ``home``
    (or under it) when ``value`` starts with ``~`` or ``$HOME``, or ends with the file name
    ``value`` aimed at; None when the text shows none."""
    aimed = PurePosixPath(unquote(value).replace("\\", "/")).name
    from_home = value.startswith(HOME_FORMS)
    for match in PATH_IN_TEXT.finditer(output):
        found = match.group(0).rstrip(".:'\"")
        parts = found.split("/")
        if ".." in parts or "." in parts or _spelled(found, value):
            continue
        path = Path(found)
        if _inside(path, root):
            continue
        if from_home and (path == home or home in path.parents):
            return found
        if aimed and path.name == aimed:
            return found
    return None


def refused_outside(output: str) -> bool:
    """The answer refuses the path as outside what the server allows."""
    return REFUSED.search(output) is not None


def path_like(name: str, schema: Any) -> bool:
    s = plain(schema)
    if "enum" in s or "const" in s:
        return False
    if s.get("type") not in (None, "string") and "string" not in (s.get("type") or []):
        return False
    if s.get("format") in URI_FORMATS:
        return True
    words = CAMEL.sub("_", name)
    return bool(PATH_NAME.search(words) or PATH_WORDS.search(str(s.get("description") or "")))


def probes(ctx: Context, schema: Any) -> list[str]:
    outside = ctx.sandbox.outside_file
    relative = os.path.relpath(outside, os.getcwd())
    values = [str(outside), relative, "/etc/passwd", "../" * 12 + "etc/passwd"]
    if plain(schema).get("format") in URI_FORMATS:
        values = [outside.as_uri(), "file:///etc/passwd", *values[:2]]
    return values


def _escaped(output: str, marker: str) -> str | None:
    if marker in output:
        return "the content of a file outside the declared root"
    if PASSWD.search(output):
        return "the content of /etc/passwd"
    return None


async def probe_tool(ctx: Context, tool: ToolSurface) -> list[Finding]:
    findings: list[Finding] = []
    for name, schema in tool.properties.items():
        if not path_like(name, schema):
            continue
        for value in probes(ctx, schema):
            call = await probe_call(ctx.session, tool, {name: value}, "paths")
            args = call.args
            output = call.output()
            what = _escaped(output, ctx.sandbox.marker)
            shown = revealed(output, value, ctx.sandbox.root, ctx.sandbox.home)
            if what is None and shown and not refused_outside(output):
                what = f"the path the walk resolved to outside the root ({shown})"
            if what:
                findings.append(
                    Finding(
                        check="path_escape",
                        family=FAMILY,
                        grade=grade_of("path_escape"),
                        level="error",
                        message=f"argument {name!r} reads outside the roots the client "
                        f"declared: the result holds {what} (servers SHOULD validate paths "
                        "against the roots)",
                        tool=tool.name,
                        where=f"arguments/{name}",
                        evidence=f"{name}={value!r}",
                        reference=ROOTS_SECURITY,
                        reproduction=call_line(ctx.spec, tool.name, args),
                    )
                )
                break
    return findings


@family(FAMILY, checks=("path_escape",), phase="calls")
async def check_paths(ctx: Context) -> list[Finding]:
    """Path-like arguments given paths outside the declared root."""
    findings: list[Finding] = []
    for tool in ctx.callable_tools:
        findings += await probe_tool(ctx, tool)
    if not any(path_like(n, s) for t in ctx.callable_tools for n, s in t.properties.items()):
        ctx.notes.append("paths: no callable tool has an argument that looks like a path")
    return findings
