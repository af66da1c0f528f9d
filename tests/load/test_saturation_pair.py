"""The paired saturation comparison (load/saturation_pair.py) and the bench's mix option, on
described numbers and fake servers: the ABBA order, the per-pair ratios and their median and
range, one fresh server and folder per run, the mix reaching the interleaved calls, the server
cache counts read from `_meta.cache`, and the regression report's saturation section."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from load import against_base
from load.parallel import SideCalls
from load.profiles import SaturationProfile
from load.regression import judge
from load.saturation_pair import SaturationRun, abba_order, pair_ratios, run_pairs, summarise
from ocm_cli.program import main as ocm_main
from ocm_common.run_record import REGRESSION_SATURATION_VERSION
from tests.run_records import bench_markdown

PROFILE = SaturationProfile(steps=[2, 8], step_time_s=4)


def _run(pair: int, side: str, rps: float, errors: int = 0) -> SaturationRun:
    return SaturationRun(pair, side, rps, calls=int(rps * 8), errors=errors, exit_code=0,
                         cache_hit_rate=None, out_dir=f"saturation-{pair}-{side}")  # fmt: skip


def test_abba_order_alternates_which_side_goes_first_per_pair() -> None:
    assert abba_order(2) == [(0, "working"), (0, "base"), (1, "base"), (1, "working")]
    assert [side for _, side in abba_order(3)] == [
        "working", "base", "base", "working", "working", "base",
    ]  # fmt: skip


def test_pair_ratios_are_working_over_base_within_each_pair() -> None:
    # W 40, B 32 | B 30, W 36 -> 40/32 = 1.25, 36/30 = 1.2
    runs = [
        _run(0, "working", 40),
        _run(0, "base", 32),
        _run(1, "base", 30),
        _run(1, "working", 36),
    ]
    assert pair_ratios(runs) == pytest.approx([1.25, 1.2])
    section = summarise(runs, workers=2, profile=PROFILE, mix="golden")
    assert section["median_ratio"] == pytest.approx(1.225)
    assert (section["min_ratio"], section["max_ratio"]) == (pytest.approx(1.2), pytest.approx(1.25))
    assert section["order"] == ["working", "base", "base", "working"]
    assert section["version"] == REGRESSION_SATURATION_VERSION


def test_a_base_that_sustained_nothing_gives_no_ratio_and_errors_are_summed() -> None:
    runs = [
        _run(0, "working", 40, errors=1),
        _run(0, "base", 0, errors=3),
        _run(1, "base", 20),
        _run(1, "working", 10),
    ]
    section = summarise(runs, workers=2, profile=PROFILE, mix="golden")
    assert section["pair_ratios"] == [None, 0.5]
    assert section["median_ratio"] == section["min_ratio"] == section["max_ratio"] == 0.5
    assert section["errors"] == 4


def test_each_run_gets_a_fresh_server_and_its_own_folder(tmp_path: Path) -> None:
    started: list[tuple[str, str]] = []
    stopped: list[str] = []
    figures = {"working": iter([50.0, 44.0]), "base": iter([40.0, 44.0])}

    @contextmanager
    def server_for(side: str, tag: str) -> Iterator[str]:
        started.append((side, tag))
        yield f"http://127.0.0.1:1/{side}/{tag}"
        stopped.append(tag)

    folders: list[Path] = []

    def run_saturation(url: str, run_dir: Path) -> tuple[int, dict[str, Any]]:
        side = url.split("/")[3]
        assert stopped == [tag for _, tag in started[:-1]]  # the previous server is stopped
        folders.append(run_dir)
        rps = next(figures[side])
        steps = [{"users": 2, "rps": rps, "worst_p95_ms": 90.0, "sustained": True, "errors": 0}]
        return 1, {"saturation_rps": rps, "calls": 100, "errors": 0, "steps": steps}

    runs = run_pairs(server_for, run_saturation, tmp_path, pairs=2, progress=lambda _: None)
    assert [s for s, _ in started] == ["working", "base", "base", "working"]
    assert len(set(folders)) == 4 and all(f.parent == tmp_path for f in folders)
    assert [r.calls_per_s for r in runs] == [50.0, 40.0, 44.0, 44.0]
    assert runs[0].steps == ({"users": 2, "rps": 50.0, "worst_p95_ms": 90.0, "sustained": True},)
    assert pair_ratios(runs) == pytest.approx([1.25, 1.0])
    assert all(r.exit_code == 1 for r in runs)  # a missed SLO bar is kept, not a failure


def test_the_mix_option_reaches_the_interleaved_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distinct = {
        "a.get": [{"q": f"a{i}"} for i in range(3)],
        "b.get": [{"q": f"b{i}"} for i in range(3)],
    }
    mix_file = tmp_path / "mix.json"
    mix_file.write_text(json.dumps(distinct))
    seen: list[tuple[str, dict[str, Any]]] = []

    def fake_calls(urls: Any, calls: Any, *, validate: bool = False) -> dict[str, SideCalls]:
        seen.extend(calls)
        out = {side: SideCalls() for side in urls}
        # described counts: working 10 hits 5 misses -> 13 / 6 (3 of 4 hit); base stays put
        for meta in ({"process": "w1", "embed_hits": 10, "embed_misses": 5},
                     {"process": "w1", "embed_hits": 13, "embed_misses": 6}):  # fmt: skip
            out["working"].see_cache(meta)
        out["base"].see_cache({"process": "b1", "embed_hits": 2, "embed_misses": 2})
        return out

    monkeypatch.setattr(against_base, "interleaved_calls", fake_calls)
    urls = {"working": "http://127.0.0.1:1/mcp", "base": "http://127.0.0.1:2/mcp"}
    done = against_base.interleave(urls, 3, mix=f"examples:{mix_file}")
    by_tool: dict[str, list[str]] = {}
    for tool, arguments in seen:
        by_tool.setdefault(tool, []).append(arguments["q"])
    # three rounds over three distinct calls per tool: each call exactly once
    assert {t: sorted(qs) for t, qs in by_tool.items()} == {
        t: sorted(a["q"] for a in args) for t, args in distinct.items()
    }
    assert done.cache_hit_rate == {"working": 0.75, "base": None}


def test_the_bench_command_passes_the_mix_and_the_saturation_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    got: dict[str, Any] = {}

    def fake_run(rev: str, out_root: Path, **kwargs: Any) -> int:
        got.update(kwargs, rev=rev)
        return 0

    monkeypatch.setattr(against_base, "run_against_base", fake_run)
    argv = ["bench", "--base", "abc", "--mix", "examples:m.json", "--saturation"]
    assert ocm_main(argv) == 0
    assert (got["mix"], got["saturation_pairs"]) == ("examples:m.json", 2)
    assert ocm_main([*argv, "--saturation-pairs", "3"]) == 0
    assert got["saturation_pairs"] == 3
    assert ocm_main(["bench", "--base", "abc"]) == 0
    assert (got["mix"], got["saturation_pairs"]) == ("golden", 0)


def _regression(saturation: dict[str, Any] | None) -> dict[str, Any]:
    base = [10.0 + 0.1 * (i % 7) for i in range(60)]
    summary = {
        "kind": "regression",
        "base_rev": "23c8d11",
        "base_sha": "23c8d11f07c5",
        "machine": {},
        "rounds": 60,
        "mix": "examples:build/mix/distinct-30000-0.json",
        "cache_hit_rate": {"working": 0.125, "base": None},
        "regression": judge({"odb.get": (base, base)}).to_json(),
        "hard_failures": [],
        "exit_code": 0,
    }
    if saturation is not None:
        summary["saturation"] = saturation
    return summary


def test_the_report_renders_the_saturation_section_from_a_described_record() -> None:
    runs = [
        _run(0, "working", 40),
        _run(0, "base", 32),
        _run(1, "base", 30),
        _run(1, "working", 36),
    ]
    bar = {"step_p95_ms": 500.0, "factor": 2.0, "note": "larger reading 19.6 ms / 9.8 ms"}
    section = summarise(runs, workers=2, profile=PROFILE, mix="examples:m.json", step_bar=bar)
    section["runs"][1]["steps"] = [
        {"users": 2, "rps": 32.0, "worst_p95_ms": 120.0, "sustained": True},
        {"users": 8, "rps": 35.5, "worst_p95_ms": 300.0, "sustained": False},
    ]
    text = bench_markdown(_regression(section))
    assert "task mix: examples:build/mix/distinct-30000-0.json" in text
    assert "working 12.5%, base not stated" in text
    part = text.split("Saturation, one side at a time", 1)[1]
    assert "1.250, 1.200" in part and "median 1.225 (min 1.200, max 1.250)" in part
    assert "(working, base, base, working)" in part and "2 server workers per side" in part
    for rps in ("40.00", "32.00", "30.00", "36.00"):
        assert rps in part
    assert "2: 32.0 (120); 8: 35.5 (300) not sustained" in part
    assert "every tool's p95 under 500 ms on both sides (load/slo.yaml's bar x 2.0" in part


def test_a_record_without_saturation_has_no_section_and_an_unknown_version_is_refused() -> None:
    assert "Saturation, one side at a time" not in bench_markdown(_regression(None))
    later = {"version": REGRESSION_SATURATION_VERSION + 1, "runs": []}
    text = bench_markdown(_regression(later))
    part = text.split("Saturation, one side at a time", 1)[1]
    assert f"version {REGRESSION_SATURATION_VERSION + 1}" in part
