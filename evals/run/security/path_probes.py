"""Path escapes that a check for absolute paths and ``../`` does not see. A server that
refuses both may still expand ``~``, ``~user``, ``$HOME`` or ``${VAR}`` after its check,
decode ``%2e%2e`` or turn ``\\`` into ``/`` after it, accept a ``file://`` URL, or follow a
symbolic link inside its root that points out of it.

Every path-like argument (:func:`evals.run.security.paths.path_like`) of a callable tool is
given each form in turn, aimed at a marker file the harness planted outside the declared
root (in the sandbox's outside folder, or in the ``HOME`` a stdio server gets); a result
carrying the marker is the escape, and so is an answer (result or error) that shows the form
resolved outside the root (:func:`.paths.revealed`: the server's ``HOME`` path, or the
aimed-at file's path, in the text although the value never spelled it out; a version-control
server that answers ``<home>/ocm-marker.txt`` used the file whether or not it returned it).
An answer that shows the resolved path but refuses it as outside what is allowed expanded
first and checked after, correctly: ``path_expanded_refused``, a warning (the text discloses
the location). An argument that already escapes with a plain absolute path is left to the
``paths`` family (every form would then escape too, and say nothing new).
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from pathlib import Path

from evals.conformance.grading import grade_of
from evals.run.security.findings import ROOTS_SECURITY, Finding
from evals.run.security.paths import path_like, refused_outside, revealed
from evals.run.security.probe import probe_call
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import call_line
from evals.run.security.sandbox import HOME_MARKER, LINK_NAME, OUTSIDE_ENV
from evals.run.security.surface import ToolSurface
from ocm_common.json_types import Arguments

FAMILY = "path_probes"
EXPANSION = "path_escape_expansion"
ENCODED = "path_escape_encoded"
SYMLINK = "path_escape_symlink"
REFUSED_AFTER = "path_expanded_refused"
WHAT = {
    EXPANSION: "expands a home directory or an environment variable after checking the path",
    ENCODED: "decodes or rewrites the path (percent-encoding, backslashes, file:// URLs) "
    "after checking it",
    SYMLINK: "follows a symbolic link inside the root that points out of it",
}


@dataclass(frozen=True)
class Probe:
    check: str
    form: str  # what the value tries, for the report
    value: str


def _walk(start: Path, target: Path) -> str:
    return os.path.relpath(target, start)


def expansion_probes(ctx: Context) -> list[Probe]:
    """``~``, ``~user``, ``$HOME``, ``${HOME}`` and ``${VAR}`` forms. A stdio server has the
    sandbox's ``HOME`` (the marker directly in it); any other target keeps its own, so the
    value walks from the real home to the outside file."""
    outside = ctx.sandbox.outside_file
    stdio = ctx.session.kind == "stdio"
    from_home = HOME_MARKER if stdio else _walk(Path.home(), outside)
    probes = [
        Probe(EXPANSION, "~", f"~/{from_home}"),
        Probe(EXPANSION, "$HOME", f"$HOME/{from_home}"),
        Probe(EXPANSION, "${HOME}", f"${{HOME}}/{from_home}"),
    ]
    user = _user_home()
    if user is not None:
        name, home = user
        probes.append(Probe(EXPANSION, "~user", f"~{name}/{_walk(home, outside)}"))
    if ctx.session.kind == "stdio":
        probes.append(Probe(EXPANSION, "${VAR}", f"${{{OUTSIDE_ENV}}}/{outside.name}"))
    return probes


def _user_home() -> tuple[str, Path] | None:
    """This user's name and home as the password database has them (``~user`` ignores HOME)."""
    try:
        import pwd

        name = getpass.getuser()
        return name, Path(pwd.getpwnam(name).pw_dir)
    except (KeyError, OSError, ImportError):
        return None


def _relative_walks(ctx: Context) -> list[str]:
    """``../`` walks to the outside file from the places a server resolves relative paths:
    the declared root and the working directory (a stdio server keeps the harness's)."""
    walks = [_walk(ctx.sandbox.root, ctx.sandbox.outside_file)]
    here = _walk(Path.cwd(), ctx.sandbox.outside_file)
    return walks if here in walks else [*walks, here]


def encoded_probes(ctx: Context) -> list[Probe]:
    """Percent-encoded ``..`` (dots only, and dots with the slash), backslash separators,
    and the file as a ``file://`` URL."""
    probes: list[Probe] = []
    for walk in _relative_walks(ctx):
        parts = walk.split("/")
        dots = ["%2e%2e" if p == ".." else p for p in parts]
        probes.append(Probe(ENCODED, "percent-encoded ..", "/".join(dots)))
        slashes = "%2e%2e%2f" * parts.count("..") + "/".join(p for p in parts if p != "..")
        probes.append(Probe(ENCODED, "percent-encoded ../", slashes))
        probes.append(Probe(ENCODED, "backslash separators", "\\".join(parts)))
        mixed = "".join(("..\\", "../")[i % 2] for i in range(parts.count("..")))
        probes.append(
            Probe(ENCODED, "mixed separators", mixed + "/".join(p for p in parts if p != ".."))
        )
    probes.append(Probe(ENCODED, "file:// URL", ctx.sandbox.outside_file.as_uri()))
    return probes


def symlink_probes(ctx: Context) -> list[Probe]:
    """The outside file through the link the harness put in the root, relative to the root
    and as an absolute path inside it."""
    inside = Path(LINK_NAME) / ctx.sandbox.outside_file.name
    return [
        Probe(SYMLINK, "symlink (relative to the root)", str(inside)),
        Probe(SYMLINK, "symlink (absolute, inside the root)", str(ctx.sandbox.root / inside)),
    ]


def server_home(ctx: Context) -> Path:
    """The ``HOME`` the server expands ``~`` to: the sandbox's for stdio, else this user's."""
    return ctx.sandbox.home if ctx.session.kind == "stdio" else Path.home()


def _finding(
    ctx: Context, tool: ToolSurface, name: str, probe: Probe, args: Arguments, shown: str | None
) -> Finding:
    how = (
        f"the answer shows it resolved to {shown}"
        if shown
        else "returned the marker planted outside the root"
    )
    return Finding(
        check=probe.check,
        family=FAMILY,
        grade=grade_of(probe.check),
        level="error",
        message=f"argument {name!r} reaches a file outside the declared root with a "
        f"{probe.form} path: the tool {WHAT[probe.check]} (servers SHOULD validate paths "
        "against the roots)",
        tool=tool.name,
        where=f"arguments/{name}",
        evidence=f"{name}={probe.value!r} {how}",
        reference=ROOTS_SECURITY,
        reproduction=call_line(ctx.spec, tool.name, args),
    )


def _refused_after(
    ctx: Context, tool: ToolSurface, name: str, probe: Probe, args: Arguments, shown: str
) -> Finding:
    return Finding(
        check=REFUSED_AFTER,
        family=FAMILY,
        grade=grade_of(REFUSED_AFTER),
        message=f"argument {name!r}: a {probe.form} path was resolved outside the declared root "
        "and then refused; the answer discloses the location it resolved to",
        tool=tool.name,
        where=f"arguments/{name}",
        evidence=f"{name}={probe.value!r}: the answer names {shown}",
        reference=ROOTS_SECURITY,
        reproduction=call_line(ctx.spec, tool.name, args),
    )


async def probe_argument(ctx: Context, tool: ToolSurface, name: str) -> list[Finding]:
    """Each check's forms in turn until one escapes (one finding per check and argument)."""
    marker = ctx.sandbox.marker
    absolute: Arguments = {name: str(ctx.sandbox.outside_file)}
    if marker in (await probe_call(ctx.session, tool, absolute, FAMILY)).output():
        ctx.notes.append(
            f"path_probes: {tool.name}.{name} reads any absolute path (the paths family "
            "reports it); its other forms were not tried"
        )
        return []
    findings: list[Finding] = []
    home = server_home(ctx)
    warned = False
    for group in (expansion_probes(ctx), encoded_probes(ctx), symlink_probes(ctx)):
        for probe in group:
            call = await probe_call(ctx.session, tool, {name: probe.value}, FAMILY)
            output = call.output()
            shown = (
                None if marker in output else revealed(output, probe.value, ctx.sandbox.root, home)
            )
            if shown and refused_outside(output):
                if not warned:
                    findings.append(_refused_after(ctx, tool, name, probe, call.args, shown))
                    warned = True
                continue
            if marker in output or shown:
                findings.append(_finding(ctx, tool, name, probe, call.args, shown))
                break
    return findings


@family(FAMILY, checks=(EXPANSION, ENCODED, SYMLINK, REFUSED_AFTER), phase="calls")
async def check_path_probes(ctx: Context) -> list[Finding]:
    """``~``, ``~user``, ``$HOME``, ``${VAR}``, percent-encoded ``..``, mixed separators,
    ``file://`` and a symbolic link out of the root, for every path-like argument."""
    findings: list[Finding] = []
    probed = 0
    for tool in ctx.callable_tools:
        for name, schema in tool.properties.items():
            if path_like(name, schema):
                probed += 1
                findings += await probe_argument(ctx, tool, name)
    if not probed:
        ctx.notes.append("path_probes: 0 calls: no callable tool has a path-like argument")
    return findings
