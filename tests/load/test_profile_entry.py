"""A load profile is one entry of the profiles file: added there, the bench runs it, judges it by
the bars beside it and reports its verdict rows, with nothing else edited. Omitted settings take
the kind's defaults; `quick` settings replace the entry's own for a short run; the entries the
bench gives a role must be present with their kind."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from load.bar_verdicts import calibrated_latency
from load.bench import planned_steps
from load.bench_judge import judge_bench
from load.profiles import PROFILES_FILE, LocustProfile, Profiles, load_profiles
from load.slo import load_slo
from ocm_common.latency_records import LatencyRecord
from ocm_common.profile_results import LocustResult
from tests.described_machines import AVX2_ONLY
from tests.load.test_bench_verdict import described_bench

BURST = {"kind": "locust", "users": 40, "quick": {"time_s": 4}, "slo": {"p95_ms": 120}}


@pytest.fixture
def with_burst(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The committed profiles file with one more entry, named by LOAD_PROFILES."""
    raw = yaml.safe_load(PROFILES_FILE.read_text(encoding="utf-8"))
    raw["profiles"]["burst"] = BURST
    path = tmp_path / "profiles.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    monkeypatch.setenv("LOAD_PROFILES", str(path))
    monkeypatch.delenv("LOAD_QUICK", raising=False)
    return path


def test_an_added_entry_is_run_with_defaults_for_what_it_omits(with_burst: Path) -> None:
    profiles = load_profiles()
    assert profiles.locust() == ("latency", "paced", "saturation", "burst")
    burst = profiles.locust_settings("burst")
    assert isinstance(burst, LocustProfile)
    assert (burst.users, burst.rate, burst.time_s, burst.warmup_s) == (40, 0.0, 30.0, 0.0)
    assert load_profiles(quick=True).locust_settings("burst").time_s == 4
    # the bench's step count follows the file: one more locust profile, one more step
    assert planned_steps(4, False, 1) == planned_steps(3, False, 1) + 1


def test_an_added_entry_is_judged_by_the_bars_beside_it(with_burst: Path) -> None:
    slo = load_slo()
    assert slo.profiles["burst"] == {"p95_ms": 120.0}
    assert ("burst", "p95_ms") in calibrated_latency(slo)
    summary, records, codes = described_bench(
        AVX2_ONLY, reference_ms=9.8, cpu_ratio=1.8, saturation_rps=200.0,
        p50_ms=10.0, p95_ms=20.0, paced_p95_ms=40.0,
    )  # fmt: skip
    summary.profiles["burst"] = LocustResult(calls=400, errors=0)
    slow = LatencyRecord(profile="burst", tool="odb.get", n=100, p50_ms=50, p95_ms=200, p99_ms=250)
    judge_bench(
        summary, [*records, slow], {**codes, "burst": 0}, slo,
        locust_profiles=load_profiles().locust(),
    )  # fmt: skip
    assert summary.exit_code == 1 and summary.tools["odb.get"].missed
    row = next(r for r in summary.verdicts if r.name == "burst p95_ms (worst tool)")
    assert row.passed is False and row.measured == 200 and row.subject == "odb.get"
    assert any("burst" in m for m in summary.misses)


def test_a_locust_profile_that_did_not_run_clean_fails_the_bench(with_burst: Path) -> None:
    summary, records, codes = described_bench(
        AVX2_ONLY, reference_ms=9.8, cpu_ratio=1.8, saturation_rps=200.0,
        p50_ms=10.0, p95_ms=20.0, paced_p95_ms=40.0,
    )  # fmt: skip
    judge_bench(summary, records, codes, load_slo(), locust_profiles=load_profiles().locust())
    assert summary.exit_code == 1 and not summary.slo_pass  # "burst" has no exit code: not run


def test_the_bench_needs_its_role_entries_with_their_kind() -> None:
    raw = yaml.safe_load(PROFILES_FILE.read_text(encoding="utf-8"))
    del raw["profiles"]["parallel"]
    with pytest.raises(
        ValidationError, match=r"profiles\.parallel: .*'parallel' entry \(missing\)"
    ):
        Profiles.model_validate(raw)
    raw = yaml.safe_load(PROFILES_FILE.read_text(encoding="utf-8"))
    raw["profiles"]["latency"] = {"kind": "saturation"}
    with pytest.raises(ValidationError, match=r"profiles\.latency: .*kind 'saturation'"):
        Profiles.model_validate(raw)
    raw = yaml.safe_load(PROFILES_FILE.read_text(encoding="utf-8"))
    raw["profiles"]["burst"] = {**BURST, "userz": 3}
    with pytest.raises(ValidationError, match="userz"):
        Profiles.model_validate(raw)
