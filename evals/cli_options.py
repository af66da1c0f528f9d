"""What every eval command of ``ocm`` shares: the target and output options (argparse
parent parsers), the UTC timestamp of a default report directory, and reading a bare
configuration name as the in-process reference server in that configuration."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

TARGET_HELP = (
    "'inprocess[:name,key=value,...]' (the reference server in a named configuration with "
    "Settings overrides), 'stdio:<command line>' or 'http(s)://host:port/mcp' (bearer token "
    "from EVALS_BEARER_TOKEN)"
)


def timestamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def spec(text: str) -> str:
    """A bare configuration name (``keyword``) means that configuration of the in-process
    reference server."""
    return text if ":" in text or text == "inprocess" else f"inprocess:{text}"


def target_parent(*, default: str | None = "inprocess") -> argparse.ArgumentParser:
    """``--target``: one backend, in the spec form every command reads."""
    parent = argparse.ArgumentParser(add_help=False)
    if default is None:
        parent.add_argument("--target", required=True, help=TARGET_HELP)
    else:
        parent.add_argument("--target", default=default, help=f"{TARGET_HELP}; default: {default}")
    return parent


def output_parent(what: str, default_dir: str) -> argparse.ArgumentParser:
    """``--out``: where the command writes ``what``; by default ``default_dir/<UTC timestamp>``
    (or ``default_dir`` itself when it names a fixed directory)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--out", default=None, help=f"directory for {what} (default: {default_dir})"
    )
    return parent


def out_dir(value: str | None, default_root: str) -> Path:
    """The ``--out`` directory, or ``default_root/<UTC timestamp>``."""
    return Path(value) if value else Path(default_root) / timestamp()
