"""Every `OCM_*` environment variable the project reads or sets is documented in
docs/configuration.md: the names are found in the code (literal `OCM_...` strings in the packages,
the tests' benchmarks, the Makefile and CI) and from the server's settings (pydantic-settings reads
`OCM_<FIELD>`), never from a hand-kept list."""

from __future__ import annotations

import re
from pathlib import Path

from reference_server.config import Faults, Settings, _Environment

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "configuration.md"
SOURCES = ("reference_server", "evals", "load", "scale", "ocm_common", "tool_search", "ocm_cli")
NAME = re.compile(r"\bOCM_[A-Z][A-Z0-9_]*[A-Z0-9]\b")


def names_in_code() -> set[str]:
    files = [p for d in SOURCES for p in (ROOT / d).rglob("*.py")]
    files += [
        *(ROOT / "tests" / "bench").rglob("*.py"),
    ]
    files += [ROOT / "Makefile", *(ROOT / ".ci").glob("*")]
    found: set[str] = set()
    for path in files:
        if path.is_file():
            found |= set(NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return found


def settings_names() -> set[str]:
    """What pydantic-settings reads: `OCM_<FIELD>` (or the field's alias), and for the faults
    `OCM_FAULT_<NAME>` each (reference_server/config.py)."""
    names: set[str] = set()
    for name, info in _Environment.model_fields.items():
        if name == "faults":
            names |= {f"OCM_FAULT_{fault.upper()}" for fault in Faults.model_fields}
        elif isinstance(info.validation_alias, str):
            names.add(info.validation_alias)
        else:
            names.add(f"OCM_{name.upper()}")
    assert set(Settings.model_fields) <= set(_Environment.model_fields)
    return names


def documented(name: str, text: str) -> bool:
    return re.search(rf"`{re.escape(name)}`", text) is not None


def test_the_finder_sees_variables_and_would_miss_an_undocumented_one() -> None:
    found = names_in_code()
    assert {"OCM_INDEX_DIR", "OCM_CANARY_SECRET", "OCM_DISTINCT_MIX"} <= found
    assert not documented("OCM_NOT_A_REAL_VARIABLE", DOC.read_text(encoding="utf-8"))


def test_every_variable_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    # a name that prefixes others in code (OCM_FAULT_ as a prefix) is not a variable of its own
    names = {n for n in names_in_code() | settings_names() if not n.endswith("_")}
    missing = sorted(n for n in names if not documented(n, text))
    assert not missing, f"undocumented in {DOC.relative_to(ROOT)}: {missing}"
