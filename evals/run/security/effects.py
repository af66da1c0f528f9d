"""What the calls did to files: every call of the run records the files it created, changed
or deleted in the trees the server can reach (the declared root, the folder outside it, and
for a stdio server its own ``HOME`` and temp folder; :mod:`.files`, listed by the session
before and after each call).

- ``read_only_write``: a tool annotated ``readOnlyHint: true`` changed a file: a client that
  trusts the hint lets it run unasked (one finding per tool, naming the files and the probe);
- ``file_written``: any other tool's writes, listed (a warning: a tool that may change state
  is allowed to, and the report says what it changed).

Writes between calls (a server starting up, a background task) are not given to any call;
a write that lands after the call's answer is seen on the next call.
"""

from __future__ import annotations

from evals.run.security.findings import Finding
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import call_finding

FAMILY = "effects"
READ_ONLY_WRITE, FILE_WRITTEN = "read_only_write", "file_written"


@family(FAMILY, checks=(READ_ONLY_WRITE, FILE_WRITTEN), phase="after")
async def check_effects(ctx: Context) -> list[Finding]:
    """Files created, changed or deleted by each call; a read-only tool that wrote fails."""
    surfaces = {t.name: t for t in ctx.tools}
    findings: list[Finding] = []
    seen: set[str] = set()
    for call in ctx.session.calls:
        if not call.files or call.tool in seen:
            continue
        seen.add(call.tool)
        tool = surfaces.get(call.tool)
        read_only = tool is not None and tool.annotations.get("readOnlyHint") is True
        check = READ_ONLY_WRITE if read_only else FILE_WRITTEN
        listed = "; ".join(c.describe() for c in call.files[:5])
        more = f" (+{len(call.files) - 5} more)" if len(call.files) > 5 else ""
        message = (
            f"the tool is annotated readOnlyHint: true, but its {call.purpose} call "
            f"{call.files[0].change} {call.files[0].path}"
            if read_only
            else f"its {call.purpose} call {call.files[0].change} {call.files[0].path}"
        )
        findings.append(call_finding(ctx.spec, FAMILY, check, call, message, listed + more))
    if not any(t.is_dir() for t in ctx.sandbox.trees):
        ctx.notes.append(f"{FAMILY}: no sandbox folder to watch")
    elif ctx.session.kind != "stdio":
        ctx.notes.append(
            f"{FAMILY}: the target ({ctx.session.kind}) keeps its own HOME and temp folder, so "
            "only writes to the declared root and the folder outside it are seen"
        )
    return findings
