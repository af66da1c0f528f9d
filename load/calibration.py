"""The tight bars of `load/slo.yaml` restated for the machine a bench runs on.

The tight bars (`latency` p50/p95, `paced` p95, `inprocess` p50/p95, the saturation step bar
and floor) were set on one machine, the one the `calibration:` block of `load/slo.yaml` names.
A bench times the same reference workload (`load/calibrate.py`) at its start and end; a tight
latency bar is scaled by

    factor = max(1, measured_reference / calibration_reference)

and the saturation floor (calls/s) is divided by it. What is never scaled: errors, schema
violations, the parallel guarantees and the spec ceilings (opa.* p50 500 / p95 1000 ms, Dr. OFF
800 / 1500 ms), which are the contract on any machine; a scaled bar is still capped by its
tool's spec ceiling (`Slo.bars` keeps the tighter), so no machine is ever judged more leniently
than the specs allow.

Which reading: the larger of start and end. The bench runs between the two; when the machine
slowed (or sped up) part-way, the slower reading is the one that covers the stretch that was
slow, and a miss measured there is the machine's. The cost is a little leniency when the
machine sped up; the working tree's own regressions are caught by `make bench BASE=` (which
compares against a base measured in the same minutes, where the factor cancels), not here.

Clamped below at 1 (`min_factor`), not above:
- not below 1: a faster machine keeps the bars as written. Tightening them would fail a server
  that meets the stated bars, and the reference over-states the speed-up on machines whose gain
  is mostly in one part (AVX-512 VNNI speeds the int8 embedding several times, SQLite and the
  interpreter not at all), so a tightened bar would be a false failure more often than a catch.
- not above (other than by the spec ceilings): a machine twice as slow gets bars twice as wide,
  since that is the question the bench asks ("is this the server's speed on this machine?").
  The ceilings are the upper clamp, and they are the contract.
Readings missing (the model cannot load): factor 1, stated in the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from ocm_common.bench_summary import FactorJson
from ocm_common.slo_file import Calibration

__all__ = ["Calibration", "Factor", "factor"]


@dataclass(frozen=True)
class Factor:
    """The scaling applied to the tight bars, with what it came from."""

    value: float  # what the bars are multiplied by
    raw: float | None  # used_ms / reference_ms before clamping; None without a reading
    used_ms: float | None
    reference_ms: float | None
    readings_ms: tuple[float | None, ...]
    note: str

    def to_json(self) -> FactorJson:
        return {
            "value": self.value,
            "raw": self.raw,
            "used_ms": self.used_ms,
            "reference_ms": self.reference_ms,
            "readings_ms": list(self.readings_ms),
            "note": self.note,
        }


def factor(readings_ms: list[float | None], calibration: Calibration | None) -> Factor:
    """The larger reading over the calibration reference, clamped below at `min_factor`."""
    readings = tuple(readings_ms)
    present = [r for r in readings if r is not None and r > 0]
    if calibration is None:
        return Factor(
            1.0, None, None, None, readings, "no calibration in slo.yaml: bars as written"
        )
    if not present:
        return Factor(
            1.0, None, None, calibration.reference_ms, readings, "no reading: bars as written"
        )
    used = max(present)
    raw = used / calibration.reference_ms
    value = max(calibration.min_factor, raw)
    note = (
        f"larger reading {used:g} ms / calibration {calibration.reference_ms:g} ms = {raw:.3f}"
        + (f", clamped to {value:g}" if value != raw else "")
    )
    return Factor(round(value, 4), round(raw, 4), used, calibration.reference_ms, readings, note)
