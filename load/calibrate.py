"""A fixed CPU workload timed at the start and end of a bench, to tell a slow machine from a
slow server.

On shared machines the same code measures very differently from one moment to the next: on this
2-core machine, idle by `top` and with no steal time reported, one query embedding took 7.7 ms
and, half an hour later, 11.5 ms, and in that hour `paced` runs of the same code went from no miss to
twelve. The workload is the server's largest single cost, one query embedding with the local
model (a quarter of its CPU under load with the dynamic-int8 model, about half with the packaged
one), so its time says how fast this machine ran the server's own work around the run.
"""

from __future__ import annotations

import statistics
import time

QUERY = "Is a continuous glucose monitor covered for a patient with type 1 diabetes in Ontario?"
ROUNDS = 40


def reference_ms(rounds: int = ROUNDS) -> float | None:
    """Median milliseconds of one query embedding (local model, one thread), or None when the
    model cannot load (the bench still runs; it only loses this reading)."""
    try:
        from reference_server.config import Settings
        from reference_server.embedding import LocalMiniLM

        model = LocalMiniLM.from_settings(Settings.from_env(), threads=1)
    except (ImportError, OSError) as exc:
        print(f"calibration skipped: {exc}")
        return None
    model.embed([QUERY])  # first run allocates
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        model.embed([QUERY])
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)
