"""The harness judges facts, shown on two backends written apart from the reference server.

`examples/alt_backend` (odb.get, schedule.get, adp.get, source.passages) and `examples/alt_opa`
(opa.search_sections, opa.get_section, opa.freshness_probe) read the official source files
themselves, rank with their own BM25, word their answers their own way and give their own ids
(alt_opa's freshness probe answers with the spec's fields only). On the golden scenarios of
their tools each fails exactly the scenarios listed in its `known_misses.yaml`,
every one with the reason the backend is wrong; any other failure is a check grading our
wording or ids, or a regression of that backend. Each seeded defect (ALT_BACKEND_DEFECTS,
ALT_OPA_DEFECTS) is then named by the harness's own commands: `evals compare` of the good run
against the defective one, or, for latency, of the two backends called interleaved.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("ALT_BACKEND_DATA", REPO.parent / "shared" / "data"))

pytestmark = [
    pytest.mark.skipif(
        not (DATA / "odb").is_dir() or not (DATA / "opa").is_dir(),
        reason=f"the second backends read the official source files, absent at {DATA}",
    ),
    pytest.mark.xdist_group("second-backends"),
]


def target(backend: str, defects: str = "") -> str:
    env = f"env {defects} " if defects else ""
    return f"stdio:{env}{sys.executable} -m examples.{backend}"


def evals(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ocm_cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def known(backend: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(
        (REPO / "examples" / backend / "known_misses.yaml").read_text()
    )
    return data


def golden_of(backend: str, into: Path) -> Path:
    """The golden files of the backend's tools, in one folder (a run reads a folder)."""
    into.mkdir(parents=True, exist_ok=True)
    for name in known(backend)["golden"]:
        shutil.copy(REPO / name, into / Path(name).name)
    return into


def run(backend: str, golden: Path, out: Path, defects: str = "") -> Path:
    done = evals(
        "run", "--target", target(backend, defects), "--golden", str(golden),
        "--allow-missing", "--no-ragas", "--quiet", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def failed(run_dir: Path) -> set[str]:
    lines = (run_dir / "scenarios.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return {r["id"] for r in records if r["status"] != "passed" and r["mode"] == "default"}


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Each backend's golden folder and its run without defects."""
    root = tmp_path_factory.mktemp("second-backends")
    out: dict[str, tuple[Path, Path]] = {}
    for backend in ("alt_backend", "alt_opa"):
        golden = golden_of(backend, root / backend / "golden")
        out[backend] = (golden, run(backend, golden, root / backend / "good"))
    return out


@pytest.mark.parametrize("backend", ["alt_backend", "alt_opa"])
def test_a_correct_backend_fails_only_where_it_is_wrong(
    backend: str, good: dict[str, tuple[Path, Path]]
) -> None:
    misses = known(backend)["misses"]
    assert all(isinstance(reason, str) and reason.strip() for reason in misses.values())
    got = failed(good[backend][1])
    assert got - set(misses) == set(), "failures the backend is not known to deserve"
    assert set(misses) - got == set(), "listed misses that now pass: update known_misses.yaml"


def newly_failing(report: Path) -> dict[str, set[str]]:
    flips = json.loads((report / "compare.json").read_text())["flips"]["newly_failing"]
    by_tool: dict[str, set[str]] = {}
    for flip in flips:
        by_tool.setdefault(flip["tool"], set()).add(flip["scenario"])
    return by_tool


# defect -> the tool whose scenarios it turns from pass to fail
FACT_DEFECTS = {
    ("alt_backend", "price"): "odb.get",
    ("alt_backend", "citations"): "schedule.get",
    ("alt_backend", "section"): "adp.get",
    ("alt_backend", "wrong_product"): "odb.get",
    ("alt_backend", "missing_field"): "odb.get",
    ("alt_backend", "highlights"): "source.passages",
    ("alt_opa", "wrong_document"): "opa.search_sections",
    ("alt_opa", "no_url"): "opa.search_sections",
}


@pytest.mark.parametrize(("backend", "defect"), sorted(FACT_DEFECTS))
def test_a_seeded_defect_is_named_by_compare(
    backend: str, defect: str, good: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    golden, good_run = good[backend]
    switch = "ALT_BACKEND_DEFECTS" if backend == "alt_backend" else "ALT_OPA_DEFECTS"
    bad = run(backend, golden, tmp_path / "bad", f"{switch}={defect}")
    done = evals(
        "compare", "--run-a", str(good_run), "--run-b", str(bad), "--allow-missing",
        "--out", str(tmp_path / "compare"), "--no-latest",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    named = newly_failing(tmp_path / "compare")
    assert named.get(FACT_DEFECTS[backend, defect]), named


def test_good_against_degraded_names_three_planted_defects_and_the_slow_tool(
    tmp_path: Path,
) -> None:
    """The team's case: the same backend with prices 15 % high, schedule.get's citations
    dropped, adp.get 300 ms slower and source.passages without highlights."""
    golden = golden_of("alt_backend", tmp_path / "golden")
    degraded = "ALT_BACKEND_DEFECTS=price,citations,slow,highlights"
    done = evals(
        "compare", "--a", target("alt_backend"), "--b", target("alt_backend", degraded),
        "--golden", str(golden), "--allow-missing", "--no-ragas", "--quiet",
        "--latency-rounds", "2", "--out", str(tmp_path / "compare"), "--no-latest",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    named = newly_failing(tmp_path / "compare")
    assert {"odb.get", "schedule.get", "source.passages"} <= set(named), named
    report = json.loads((tmp_path / "compare" / "compare.json").read_text())
    slower = [t for t in report["latency"]["tools"] if t["verdict"] == "slower"]
    assert [t["tool"] for t in slower] == ["adp.get"], report["latency"]
    changed = {fact["tool"] for fact in report["flips"]["changed_facts"]}
    assert "odb.get" in changed


def test_the_second_backends_share_no_code_with_the_reference_server() -> None:
    """Written apart: no module of examples/ imports reference_server (or the harness)."""
    import ast

    for path in sorted((REPO / "examples").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                root = name.split(".")[0]
                assert root not in {"reference_server", "evals", "ocm_common"}, (path, name)
