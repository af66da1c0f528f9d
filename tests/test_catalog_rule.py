"""Run-time code never imports the build side (`index/`, `ingest/`): what both need is in
`reference_server.catalog`. Checked on the import statements of every run-time module."""

from __future__ import annotations

import ast
from pathlib import Path

import reference_server

PACKAGE = Path(reference_server.__file__).parent
BUILD_SIDE = ("reference_server.index", "reference_server.ingest")
# Process entry points may ask the build side, before serving, whether the index is current
# (index/check.py needs the builder's corpus hash); the serving code itself never does.
ENTRY_POINTS = {"__main__.py", "http_app.py"}


def runtime_modules() -> list[Path]:
    build = {PACKAGE / "index", PACKAGE / "ingest"}
    return sorted(p for p in PACKAGE.rglob("*.py") if not any(d in p.parents for d in build))


def imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module if node.level == 0 else f"<relative>.{node.module}")
    return names


def test_runtime_modules_are_found() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in runtime_modules()}
    assert {"catalog.py", "tools/off_odb_get.py", "retrieval/passages.py"} <= names
    assert not any(n.startswith(("index/", "ingest/")) for n in names)


def test_runtime_code_never_imports_index_or_ingest() -> None:
    offenders = {
        p.relative_to(PACKAGE).as_posix(): bad
        for p in runtime_modules()
        if p.relative_to(PACKAGE).as_posix() not in ENTRY_POINTS
        and (bad := [m for m in imported_modules(p) if m.startswith(BUILD_SIDE)])
    }
    assert offenders == {}


def test_the_checker_sees_a_build_side_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from reference_server.index.off_builder import x\nimport os\n")
    assert imported_modules(sample) == ["reference_server.index.off_builder", "os"]
