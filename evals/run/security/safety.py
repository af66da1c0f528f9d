"""What the run may touch: only loopback targets for active checks (unless allowed), and
only tools that say they change nothing (``readOnlyHint: true``, not destructive) unless
writes are allowed. Annotations are hints a server may get wrong, so a tool that omits them
is treated as one that may change state."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from evals.run.security.findings import Skipped
from evals.run.security.surface import ToolSurface
from evals.run.targets import TargetError
from ocm_common.tool_safety import write_risk

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_target(spec: str, *, allow_remote: bool) -> None:
    """Refuse a remote HTTP target unless ``allow_remote``: probing someone else's server
    with path escapes and huge inputs needs an explicit decision."""
    kind = spec.split(":", 1)[0]
    if kind in ("http", "https") and not allow_remote and not is_loopback_url(spec):
        raise TargetError(
            f"{spec} is not a loopback address; the security checks call tools with hostile "
            "inputs, so they run against loopback targets only (pass --allow-remote to run "
            "against a server you own)"
        )


def skip_reason(tool: ToolSurface) -> str | None:
    """Why ``tool`` must not be called without ``--allow-writes``, or None when it may be."""
    return write_risk(tool.annotations)


def plan(
    tools: list[ToolSurface], *, allow_writes: bool
) -> tuple[list[ToolSurface], list[Skipped]]:
    """The tools the active checks may call, and the ones skipped with the reason."""
    callable_tools: list[ToolSurface] = []
    skipped: list[Skipped] = []
    for tool in tools:
        reason = skip_reason(tool)
        if reason is None or allow_writes:
            callable_tools.append(tool)
        else:
            skipped.append(Skipped(tool.name, f"{reason}; pass --allow-writes to call it"))
    return callable_tools, skipped
