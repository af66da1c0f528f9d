"""Latency records: one format for every run that measures latency.

A record is one tool under one profile: sample count, percentiles, calls/s and errors. Locust
runs, the in-process latency step and `make bench` all write `latency.jsonl` (one record a line)
next to the eval run log, and the SLO check reads nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from ocm_common.percentiles import pct

RECORDS_FILE = "latency.jsonl"


class LatencyRecord(BaseModel):
    profile: str
    tool: str
    source: str = "locust"
    n: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float = 0.0
    rps: float = 0.0
    errors: int = 0

    @classmethod
    def from_samples(
        cls,
        profile: str,
        tool: str,
        samples_ms: Iterable[float],
        *,
        duration_s: float = 0.0,
        errors: int = 0,
        source: str = "locust",
    ) -> LatencyRecord:
        ms = np.asarray(list(samples_ms), dtype=float)
        if ms.size == 0:
            return cls(
                profile=profile,
                tool=tool,
                source=source,
                n=0,
                p50_ms=0.0,
                p95_ms=0.0,
                p99_ms=0.0,
                errors=errors,
            )
        return cls(
            profile=profile,
            tool=tool,
            source=source,
            n=int(ms.size),
            p50_ms=round(pct(ms, 50), 2),
            p95_ms=round(pct(ms, 95), 2),
            p99_ms=round(pct(ms, 99), 2),
            max_ms=round(float(ms.max()), 2),
            rps=round(ms.size / duration_s, 2) if duration_s > 0 else 0.0,
            errors=errors,
        )

    @classmethod
    def from_histogram(
        cls,
        profile: str,
        tool: str,
        histogram: Mapping[int, int] | Mapping[float, int],
        *,
        duration_s: float = 0.0,
        errors: int = 0,
        source: str = "locust",
    ) -> LatencyRecord:
        """From locust's response-time histogram ({rounded ms: count})."""
        values = np.repeat(
            np.array(list(histogram.keys()), dtype=float),
            np.array(list(histogram.values()), dtype=int),
        )
        return cls.from_samples(
            profile, tool, values, duration_s=duration_s, errors=errors, source=source
        )


def write_records(path: Path, records: Iterable[LatencyRecord], *, append: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(record.model_dump_json() + "\n")


def read_records(path: Path) -> list[LatencyRecord]:
    return [
        LatencyRecord.model_validate(json.loads(line))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
