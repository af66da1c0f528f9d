"""Fixed CPU workloads timed at the start and end of a bench, to tell a slow machine from a
slow server.

On shared machines the same code measures very differently from one moment to the next: on this
2-core machine, idle by `top` and with no steal time reported, one query embedding took 7.7 ms
and, half an hour later, 11.5 ms, and in that hour `paced` runs of the same code went from no miss
to twelve. A workload's time says how fast this machine ran that work around the run; the tight
bars of `load/slo.yaml` are scaled by it (`load/calibration.py`).

Two workloads, both independent of the index and of the revision under test (a reference that
changed with the code would calibrate the code away):

- `embedding`: one query embedding with the local model, the server's largest single cost.
- `server-mix`: what one call does, in the proportions one call does it: a query embedding, a
  ranked FTS5 query (bm25) on an in-memory table of seeded text, a numpy product of the query
  vector with a seeded float32 matrix the size of a collection, and a JSON round trip of an
  answer-sized structure (the interpreter's share: pydantic, FastMCP, merging). Machines differ
  per part (AVX-512 VNNI speeds the int8 embedding several times and SQLite not at all), so a
  mix follows the server across machines where the embedding alone would over-correct.

`WORKLOADS` maps names to functions; `load/slo.yaml` names the one its calibration used:
`embedding`, because it tracked the server better when measured. In one process, alternating
a pass over the 132 golden calls in process (embedding cache off) with each workload, 8 rounds
idle or beside two busy-looping processes: server wall ms per call / reference varied with a
coefficient of variation of 0.241 (embedding) and 0.244 (server-mix); with the mix's small
parts repeated to weigh what they weigh in a call, 0.166 and 0.31, and on the idle rounds
the server's CPU ms per call / reference 1.09-1.88 against 0.77-1.46. The embedding is ~9.4
of a call's ~12.6 CPU ms here, so the mix adds little signal, and its sub-millisecond parts add
noise. Its case is machines whose speed-up is in one part only (VNNI, AMX), which this
machine cannot show; it stays selectable (`calibration.workload`) for measuring there.
"""

from __future__ import annotations

import json
import random
import sqlite3
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ocm_common.bench_summary import ReferenceReading

QUERY = "Is a continuous glucose monitor covered for a patient with type 1 diabetes in Ontario?"
ROUNDS = 40
SEED = 20260523
FTS_ROWS = 3000  # about the OPA sections' FTS table
FTS_QUERY = "glucose OR monitor OR diabetes OR covered"
MATRIX_ROWS = 5000  # about the largest collection searched exactly
DIMENSION = 384


def _embedder() -> Callable[[], Any] | None:
    try:
        from reference_server.config import Settings
        from reference_server.embedding import LocalMiniLM

        model = LocalMiniLM.from_settings(Settings.from_env(), threads=1)
    except (ImportError, OSError) as exc:
        print(f"calibration skipped: {exc}")
        return None
    return lambda: model.embed([QUERY])


def _fts() -> Callable[[], Any]:
    """A ranked FTS5 query over seeded text: tokenising, posting lists, bm25, sorting."""
    rng = random.Random(SEED)
    words = QUERY.lower().rstrip("?").split() + [f"w{i}" for i in range(2000)]
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute("CREATE VIRTUAL TABLE t USING fts5(title, text, tokenize='porter unicode61')")
    db.executemany(
        "INSERT INTO t VALUES (?, ?)",
        [
            (" ".join(rng.choices(words, k=6)), " ".join(rng.choices(words, k=120)))
            for _ in range(FTS_ROWS)
        ],
    )
    db.commit()
    sql = "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 20"
    return lambda: db.execute(sql, (FTS_QUERY,)).fetchall()


def _product() -> Callable[[], Any]:
    """Exact nearest neighbours: one query vector against a collection-sized matrix."""
    rng = np.random.default_rng(SEED)
    matrix = rng.standard_normal((MATRIX_ROWS, DIMENSION), dtype=np.float32)
    query = rng.standard_normal(DIMENSION, dtype=np.float32)

    def run() -> Any:
        scores = matrix @ query
        return np.argpartition(-scores, 20)[:20]

    return run


def _json() -> Callable[[], Any]:
    """An answer-sized structure (~10 KB) serialised and parsed: the interpreter's share."""
    rng = random.Random(SEED)
    answer = {
        "results": [
            {
                "id": f"doc-{i}:s{rng.randrange(99):02d}",
                "title": " ".join(rng.choices(QUERY.split(), k=6)),
                "text": " ".join(rng.choices(QUERY.split(), k=40)),
                "score": rng.random(),
                "citations": [{"chunk_id": f"c{i}-{j}", "page": j} for j in range(3)],
            }
            for i in range(20)
        ]
    }
    return lambda: json.loads(json.dumps(answer))


def _median_ms(fn: Callable[[], Any], rounds: int) -> float:
    fn()  # first run allocates
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def embedding_ms(rounds: int = ROUNDS) -> dict[str, float] | None:
    embed = _embedder()
    if embed is None:
        return None
    return {"embedding": round(_median_ms(embed, rounds), 3)}


def server_mix_ms(rounds: int = ROUNDS) -> dict[str, float] | None:
    """Each part's median ms (the parts are timed apart so their medians add up)."""
    embed = _embedder()
    if embed is None:
        return None
    parts = {"embedding": embed, "fts": _fts(), "product": _product(), "json": _json()}
    return {name: round(_median_ms(fn, rounds), 3) for name, fn in parts.items()}


WORKLOADS: dict[str, Callable[[int], dict[str, float] | None]] = {
    "embedding": embedding_ms,
    "server-mix": server_mix_ms,
}
DEFAULT_WORKLOAD = "embedding"


def measure(workload: str = DEFAULT_WORKLOAD, rounds: int = ROUNDS) -> ReferenceReading | None:
    """{workload, ms (the sum of the parts' medians), parts}, or None when the model cannot load
    (the bench still runs; it only loses this reading and scales nothing)."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r}. Available: {', '.join(WORKLOADS)}")
    parts = WORKLOADS[workload](rounds)
    if parts is None:
        return None
    return {"workload": workload, "ms": round(sum(parts.values()), 3), "parts": parts}


def reference_ms(rounds: int = ROUNDS) -> float | None:
    """Median milliseconds of one query embedding (the `embedding` workload), or None."""
    parts = embedding_ms(rounds)
    return None if parts is None else round(parts["embedding"], 2)
