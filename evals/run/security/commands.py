"""Command execution: does a tool run what its caller wrote as a shell command? A reply of
"ok" proves nothing, so the probe asks the shell to compute the marker: ``$((a*b))`` of two
random numbers, which only an executing shell turns into the product. The arguments never
hold the marker itself, so a tool that echoes its input cannot fake it. The command also
appends the marker to a file in the sandbox, so a tool that runs it without returning the
output (blind execution) is caught as well.

- every free-text argument gets it as an injection: ``;`` to end the tool's own command and
  ``$( )`` inside double quotes, harmless text to a tool that never reaches a shell;
- an argument named or described as a command, shell, script or code gets the command as
  it is first (and, named as code or an expression, the same command through Python's
  ``os.popen``).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.run.security.capability import finding, fits, free_text, recognised
from evals.run.security.findings import Finding
from evals.run.security.inputs import plain
from evals.run.security.probe import probe_call
from evals.run.security.registry import Context
from evals.run.security.surface import ToolSurface

CHECK = "command_execution"
COMMAND_NAMES = frozenset(
    {"command", "commands", "cmd", "shell", "script", "bash", "sh", "exec", "execute"}
    | {"code", "expression", "expr", "eval", "python", "js", "javascript", "cmdline"}
)
COMMAND_WORDS = re.compile(
    r"\b(shell|bash|command( line)?|script|execute[sd]?|run[s]? (a|the|any)\b|code to run|"
    r"python (code|expression)|expression to evaluate)\b",
    re.I,
)
CODE_NAMES = frozenset({"code", "expression", "expr", "eval", "python", "script"})


@dataclass(frozen=True)
class ExecMarker:
    """Two factors whose product only an executing shell writes, and the file it appends to."""

    a: int
    b: int
    log: Path

    @classmethod
    def create(cls, folder: Path) -> ExecMarker:
        a = 100_003 + secrets.randbelow(800_000)
        b = 100_019 + secrets.randbelow(800_000)
        return cls(a, b, folder / f"exec-{secrets.token_hex(6)}.log")

    @property
    def text(self) -> str:
        return f"ocm-exec-{self.a * self.b}"

    @property
    def shell(self) -> str:
        return f"echo ocm-exec-$(({self.a}*{self.b})) | tee -a {self.log}"

    @property
    def short_shell(self) -> str:
        """The command without the log file, for arguments too short to hold its path."""
        return f"echo ocm-exec-$(({self.a}*{self.b}))"

    def commands(self, name: str, schema: Any) -> list[tuple[str, str]]:
        """(how, value) pairs for one argument, most direct first; each in its full form, or
        without the log file when the argument's length or pattern rules the full one out."""
        if not free_text(schema):
            return []
        injection = "text that ends a command with ';' or holds '$( )'"
        forms = [(injection, f"x; {cmd}; #$({cmd})") for cmd in (self.shell, self.short_shell)]
        pairs = [forms]
        if recognised(name, schema, COMMAND_NAMES, COMMAND_WORDS):
            shell = "a shell command"
            pairs.insert(0, [(shell, self.shell), (shell, self.short_shell)])
            if name.lower() in CODE_NAMES or "python" in str(plain(schema).get("description")):
                code = "Python code"
                popen = [(code, f"__import__('os').popen({c!r}).read()") for c in (self.shell,)]
                pairs.append(popen)
        chosen = [next((f for f in group if fits(schema, f[1])), None) for group in pairs]
        return [f for f in chosen if f is not None]

    def ran(self, output: str) -> str | None:
        """Where the marker showed, or None."""
        if self.text in output:
            return "the result"
        try:
            if self.text in self.log.read_text(encoding="utf-8", errors="replace"):
                return "a file the command wrote (blind execution)"
        except OSError:
            pass
        return None


async def probe(ctx: Context, tool: ToolSurface) -> tuple[list[Finding], int]:
    """Findings for ``tool`` and the number of arguments probed (one finding per tool)."""
    probed = 0
    for name, schema in tool.properties.items():
        marker = ExecMarker.create(ctx.sandbox.base)
        for how, value in marker.commands(name, schema):
            probed += 1
            call = await probe_call(ctx.session, tool, {name: value}, CHECK)
            args = call.args
            where = marker.ran(call.output())
            if where:
                message = (
                    f"argument {name!r} runs shell commands: given {how} that computes a "
                    f"random product, the product appeared in {where}"
                )
                evidence = f"{marker.text} = {marker.a}*{marker.b}, computed by the server"
                return [finding(ctx, CHECK, tool, name, message, evidence, args)], probed
    return [], probed
