"""The bench report shows what the bench judged by: raw and calibrated bars, the factor and the
machine; and, for `make bench BASE=`, the per-tool ratios against the base."""

from __future__ import annotations

from pathlib import Path

from evals.read import bench_report
from load.calibration import Calibration, factor
from load.regression import judge
from tests.described_machines import AVX2_ONLY
from tests.run_records import write_bench

MACHINE = AVX2_ONLY


def test_bench_report_shows_raw_and_calibrated_bars(tmp_path: Path) -> None:
    cal = Calibration(reference_ms=10.0, cpu_model="AMD EPYC")
    summary = {
        "timestamp": "t",
        "slo_pass": True,
        "gate_pass": True,
        "machine": MACHINE,
        "calibration": {
            "workload": "server-mix",
            "factor": factor([14.0, 12.0], cal).to_json(),
            "reference": cal.model_dump(),
        },
        "bars": {
            "latency": {
                "odb.get": {
                    "p50_ms": {"raw": 15, "calibrated": 21},
                    "p95_ms": {"raw": 40, "calibrated": 56},
                }
            }
        },
        "tools": {"odb.get": {"p50_ms": 5.0, "p95_ms": 9.0, "errors": 0}},
    }
    write_bench(tmp_path, summary)
    text = bench_report.write(tmp_path)["markdown"].read_text()
    assert "Tight bars scaled by **1.4**" in text
    assert "| odb.get | 5.0 | 15 -> 21 | 9.0 | 40 -> 56 |" in text
    assert "AMD EPYC 7B12 (x86_64), 2 cores, avx2, fma (no avx512f, avx512_vnni" in text


def test_bench_report_of_a_base_comparison_names_the_slower_tool(tmp_path: Path) -> None:
    base = [10.0 + 0.1 * (i % 7) for i in range(60)]
    verdict = judge({"odb.get": ([x * 1.3 for x in base], base), "adp.get": (base, base)})
    summary = {
        "kind": "regression",
        "base_rev": "HEAD~1",
        "base_sha": "0123456789abcdef",
        "machine": MACHINE,
        "regression": verdict.to_json(),
        "hard_failures": [],
        "exit_code": 1,
    }
    write_bench(tmp_path, summary)
    text = bench_report.write(tmp_path)["markdown"].read_text()
    assert "slower than base: odb.get" in text and "SLOWER" in text and "HEAD~1" in text


def test_bench_report_puts_golden_and_distinct_traffic_side_by_side(tmp_path: Path) -> None:
    def run(rps: float, hit: float, cpu: float, p95: float, **extra: float) -> dict[str, object]:
        return {
            "rps": rps,
            "errors": 0,
            "cache_hit_rate": hit,
            "server_cpu_ms_per_call": cpu,
            "tools": {"odb.get": {"p95_ms": p95}},
            **extra,
        }

    summary = {
        "timestamp": "t",
        "machine": MACHINE,
        "profiles": {
            "paced": run(50.0, 0.55, 9.0, 30.0),
            "paced-distinct": run(49.5, 0.02, 17.0, 61.0),
            "saturation": run(240.0, 0.5, 8.0, 90.0, saturation_rps=230.0),
            "saturation-distinct": run(150.0, 0.0, 16.0, 140.0, saturation_rps=140.0),
        },
    }
    write_bench(tmp_path, summary)
    text = bench_report.write(tmp_path)["markdown"].read_text()
    assert "Golden and distinct-query traffic" in text
    assert "| paced | distinct | 49.5 |  | 0 | 0.02 | 17.00 |" in text
    assert "| saturation | distinct | 150.0 | 140.0 | 0 | 0.00 | 16.00 |" in text
    assert "| odb.get | 30.0 | 61.0 | 90.0 | 140.0 |" in text


def test_the_slo_judges_a_saturation_run_on_any_mix_by_throughput_only() -> None:
    from load.slo import load_slo

    slo = load_slo()
    assert slo.bars("saturation-distinct", "odb.get") == {}
    assert slo.bars("paced-distinct", "odb.get") == slo.ceiling("odb.get")
