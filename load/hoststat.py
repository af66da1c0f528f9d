"""How much of the machine's CPU time was busy, and how much the hypervisor took (steal), over a
stretch of a bench.

On a shared virtual machine the host can run other guests on "our" cores: the kernel counts that
time as steal. On this 2-core machine, within one hour, `paced` runs of the same code measured
worst-tool p95 of 157-539 ms with steal at 13-41 % and 90-96 ms with steal under 5 %, so every
latency profile records the share next to its numbers. A slow phase without steal (a busy
neighbour's caches, clock speed) shows only in the reference workload (`load/calibrate.py`).
Linux only (`/proc/stat`); None elsewhere.
"""

from __future__ import annotations

from pathlib import Path

PROC_STAT = Path("/proc/stat")
# /proc/stat's aggregate "cpu" line: user nice system idle iowait irq softirq steal guest guest_nice
IDLE, IOWAIT, STEAL = 3, 4, 7


def cpu_times(stat: Path = PROC_STAT) -> list[int] | None:
    """The machine's cumulative CPU time counters (clock ticks), or None when unreadable."""
    try:
        first = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if not first or first[0] != "cpu":
        return None
    # guest time is already counted in user time: leave it out of the total
    return [int(x) for x in first[1:9]]


def cpu_shares(before: list[int] | None, after: list[int] | None) -> dict[str, float] | None:
    """Busy and steal shares of all CPU time between two readings (0..1), or None."""
    if before is None or after is None:
        return None
    delta = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(delta)
    if total <= 0:
        return None
    idle = delta[IDLE] + delta[IOWAIT]
    return {
        "busy": round((total - idle) / total, 3),
        "steal": round(delta[STEAL] / total, 3),
    }
