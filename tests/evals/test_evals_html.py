"""Every report as a page: the renderer's HTML is self-contained, and (slow) headless Chromium
opens the eval, gate, compare and bench pages, screenshots them and finds every plot."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import matplotlib.image as mpimg
import pytest
from browser import CHROMIUM, visit
from fake_server import build_server

from evals.read import bench_report
from evals.run.runner import RunOptions, execute
from evals.run.scenario import load_scenarios
from evals.run.targets import server_target
from ocm_cli.program import main
from tests.run_records import write_bench

TOOLS = ("opa.search_sections", "schedule.get", "odb.get")


def _urls(page: str) -> list[str]:
    """Every absolute URL a page mentions, except the SVG/XLink namespace names."""
    found = re.findall(
        r"""(?:src|href)\s*=\s*["']([^"']+)["']|url\(([^)]+)\)|(https?://[^\s"'<>]+)""", page
    )
    urls = [next(u for u in groups if u) for groups in found]
    return [u for u in urls if not u.startswith(("http://www.w3.org/", "#"))]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory, golden_fake_dir: Path) -> dict[str, Path]:
    """The eval, gate, compare and bench pages, built from real runs of the fake backend and a
    bench directory shaped like ``make bench`` writes it."""
    root = tmp_path_factory.mktemp("pages")
    import asyncio

    async def run(name: str, broken: str | None) -> None:
        await execute(
            server_target(build_server(broken), spec=f"fake:{broken or 'ok'}"),
            load_scenarios(golden_fake_dir),
            root / name,
            options=RunOptions(ragas=False, ablation=True, concurrency=2),
        )

    asyncio.run(run("a", None))
    asyncio.run(run("b", "rank"))
    assert main(["report", "--run", str(root / "a")]) == 0
    config = root / "gate.yaml"
    config.write_text("floors:\n  overall: {pass_rate: 1.0}\n", encoding="utf-8")
    main(["gate", "--run", str(root / "b"), "--config", str(config), "--no-baseline"])
    out = root / "compare" / "ts"
    assert (
        main(["compare", "--run-a", str(root / "a"), "--run-b", str(root / "b"), "--out", str(out)])
        == 1  # the broken ranking fails a critical scenario: a regression, and its pages render
    )
    bench = write_bench_dir(root / "bench")
    assert main(["report", "--bench", str(bench)]) == 0
    return {
        "eval": root / "a" / "report.html",
        "gate": root / "b" / "gate.html",
        "compare": out / "compare.html",
        "bench": bench / "bench.html",
    }


@pytest.fixture(scope="module")
def golden_fake_dir() -> Path:
    return Path(__file__).parent / "golden_fake"


def write_bench_dir(directory: Path) -> Path:
    """A bench directory in the shape of ``reports/bench/<timestamp>/``."""
    directory.mkdir(parents=True)
    tools = {
        tool: {
            "p50_ms": 4.0 + i,
            "p95_ms": 9.0 + 2 * i,
            "p99_ms": 14.0 + 3 * i,
            "rps": 30.0 - i,
            "errors": 0,
        }
        for i, tool in enumerate(TOOLS)
    }
    summary = {
        "tools": tools,
        "profiles": {
            "latency": {"users": 1, "duration_s": 20},
            "saturation": {"saturation_rps": 212.0},
        },
        "saturation_rps": 212.0,
        "slo_pass": True,
        "gate_pass": True,
        "misses": [],
    }
    write_bench(directory, {"timestamp": "20261127T120000Z", **summary})
    records = [
        {
            "profile": "latency",
            "tool": t,
            "n": 100,
            **{k: v for k, v in row.items() if k != "errors"},
            "errors": 0,
        }
        for t, row in tools.items()
    ]
    (directory / "latency.jsonl").write_text(
        "\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8"
    )
    header = (
        "Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%\n"
    )
    rows = [
        f"{1700000000 + s},20,,Aggregated,{90 + (s % 7)},0,5,6,7,8,9,{12 + (s % 3)},14,16\n"
        for s in range(30)
    ]
    (directory / "paced_stats_history.csv").write_text(header + "".join(rows), encoding="utf-8")
    return directory


# eval: metrics, latency, and the calibration section's reliability and risk-coverage plots
EXPECTED_FIGURES = {"eval": 5, "gate": 0, "compare": 2, "bench": 3}


@pytest.mark.parametrize("name", list(EXPECTED_FIGURES))
def test_pages_are_self_contained(pages: dict[str, Path], name: str) -> None:
    page = pages[name].read_text(encoding="utf-8")
    assert _urls(page) == [], "a report page must not load anything from elsewhere"
    assert page.count('<figure class="plot"') == EXPECTED_FIGURES[name]
    assert page.count("<svg") == EXPECTED_FIGURES[name]
    markdown = pages[name].with_suffix(".md").read_text(encoding="utf-8")
    for figure in re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", markdown):
        assert (pages[name].parent / figure).is_file()


def test_bench_report_needs_a_summary(tmp_path: Path) -> None:
    with pytest.raises(bench_report.BenchReportError, match=r"no run record"):
        bench_report.document(tmp_path)
    assert main(["report", "--bench", str(tmp_path)]) == 2


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")
@pytest.mark.parametrize("name", list(EXPECTED_FIGURES))
def test_page_in_headless_chromium(pages: dict[str, Path], name: str, tmp_path: Path) -> None:
    shot = tmp_path / f"{name}.png"
    seen = visit(pages[name], shot)
    # The page itself is the only request (a browser may also ask for /favicon.ico itself).
    own = [(path, status) for path, status in seen.requests if path != "/favicon.ico"]
    assert own == [(f"/{pages[name].name}", 200)]
    rendered = re.findall(r'<figure class="plot"[^>]*>\s*<svg', seen.dom)
    assert len(rendered) == EXPECTED_FIGURES[name]
    assert "<h1>" in seen.dom
    pixels = mpimg.imread(shot)
    assert pixels.shape[0] > 500 and pixels.std() > 0.02, "screenshot is blank"
    if os.environ.get("EVALS_SCREENSHOTS"):
        target = Path(os.environ["EVALS_SCREENSHOTS"])
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(shot, target / shot.name)
