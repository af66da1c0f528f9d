"""Imports run one way: the import-linter contracts in pyproject.toml hold, and they catch a
forbidden import when one is added (so the check can fail)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("reference_server", "evals", "load", "scale", "ocm_common", "tool_search", "ocm_cli")
PYPROJECT = ROOT / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the packages under `root`, with `root/pyproject.toml`'s contracts."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_every_contract_is_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    declared = len(
        tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    )
    assert "0 broken" in result.stdout and f"{declared} kept" in result.stdout, result.stdout


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's Python sources and contracts, copied (no corpus, no index)."""
    root = tmp_path_factory.mktemp("tree")
    shutil.copy2(ROOT / "pyproject.toml", root)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package,
            root / package,
            ignore=lambda _dir, names: [
                n for n in names if not n.endswith(".py") and not (Path(_dir) / n).is_dir()
            ],
        )
    return root


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        ("load/_probe.py", "import evals.registry\n", "load and evals do not import each other"),
        ("evals/_probe.py", "import load.slo\n", "load and evals do not import each other"),
        (
            "reference_server/tools/_probe.py",
            "from reference_server.index import build\n",
            "run time never imports build time",
        ),
        (
            "reference_server/http_app_probe.py",
            "import reference_server.ingest\n",
            None,  # not a run-time module the contract names: allowed
        ),
        (
            "reference_server/configurations.py",
            "import reference_server.config\n",
            "configurations.py never imports config.py",
        ),
        ("ocm_common/_probe.py", "import load.slo\n", "ocm_common is neutral"),
        ("evals/_probe.py", "import ocm_cli.program\n", "the ocm program sits on top"),
        (
            "evals/run/security/_probe.py",
            "from evals.read import gate\n",
            "the run side never imports the read side",
        ),
        ("evals/read/_probe.py", "import evals.run.runlog\n", None),  # read reads run logs
    ],
)
def test_a_forbidden_import_is_caught(
    source_copy: Path, module: str, statement: str, contract: str | None
) -> None:
    probe = source_copy / module
    original = probe.read_text() if probe.exists() else None
    probe.write_text((original or "") + statement)
    try:
        result = lint_imports(source_copy)
    finally:
        if original is None:
            probe.unlink()
        else:
            probe.write_text(original)
    if contract is None:
        assert result.returncode == 0, result.stdout
    else:
        assert result.returncode == 1, result.stdout
        assert f"{contract}" in result.stdout and "BROKEN" in result.stdout, result.stdout


def test_the_server_process_does_not_load_the_builders() -> None:
    """What the contract says, seen at run time: the entry point's imports pull in no builder."""
    code = (
        "import sys, reference_server.__main__, reference_server.http_app; "
        "print(sorted(m for m in sys.modules if m.startswith(('reference_server.index.build', "
        "'reference_server.index.opa_builder', 'reference_server.index.off_', "
        "'reference_server.ingest'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
