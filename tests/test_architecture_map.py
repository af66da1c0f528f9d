"""ARCHITECTURE.md's file map stays true: every module of the packages is named there (by file
name, or by a pattern such as `opa_*.py`), and every file name it gives exists."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("reference_server", "evals", "load", "scale", "ocm_common", "tool_search", "ocm_cli")
NAMED = re.compile(r"(?<![\w.*-])([A-Za-z_*][\w*]*\.(?:py|yaml))\b")


def _names() -> set[str]:
    return set(NAMED.findall((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")))


def _modules() -> list[Path]:
    return sorted(
        p
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
        if p.name != "__init__.py" and "fixtures" not in p.parts
    )


def test_every_module_is_on_the_map() -> None:
    names = _names()
    unnamed = [
        str(p.relative_to(ROOT))
        for p in _modules()
        if p.name not in names and not any(fnmatch.fnmatch(p.name, n) for n in names if "*" in n)
    ]
    assert not unnamed, f"modules ARCHITECTURE.md does not name: {unnamed}"


def test_every_file_on_the_map_exists() -> None:
    present = {
        p.name for p in ROOT.rglob("*") if p.suffix in (".py", ".yaml") and ".venv" not in p.parts
    }
    stale = sorted(
        n
        for n in _names()
        if ("*" in n and not fnmatch.filter(present, n)) or ("*" not in n and n not in present)
    )
    assert not stale, f"ARCHITECTURE.md names files that do not exist: {stale}"
