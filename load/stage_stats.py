"""Per tool and stage, the server's own timers as a load run saw them in its replies.

Each reply's `_meta.timings_ms` carries the call's stages (reference_server/stage_timer.py) and
`handler` (the server's whole handling of the call); the client's latency less `handler` is the
MCP + HTTP layer (transport, JSON-RPC, FastMCP's dispatch, the load client itself). Locust
workers send their samples to the master with each report; the master's summary gives median,
p95 and mean per tool and stage. A server that reports no stages (another server, an older
checkout) leaves the table empty rather than wrong.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence

from ocm_common.json_types import JsonValue

# The client-side stage: the reply's latency as the client saw it less the server's handler.
MCP_HTTP = "mcp_http"
HANDLER = "handler"


def _percentile(sorted_values: list[float], share: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    rank = max(1, math.ceil(share * len(sorted_values)))
    return sorted_values[rank - 1]


def figures(values: list[float]) -> dict[str, float | int]:
    """n, median, p95 and mean (ms, 2 decimals) of one tool's one stage."""
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "median_ms": round(_percentile(ordered, 0.5), 2),
        "p95_ms": round(_percentile(ordered, 0.95), 2),
        "mean_ms": round(sum(ordered) / len(ordered), 2),
    }


class StageSamples:
    """Stage timings (ms) per tool and stage, as replies arrive; drained to the master."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.samples: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))

    def see(self, tool: str, client_ms: float, timings: JsonValue) -> None:
        """One reply: its stages, the server's handler time and the MCP + HTTP layer."""
        if not isinstance(timings, dict):
            return
        stages = timings.get("stages")
        handler = timings.get(HANDLER)
        if not isinstance(stages, dict) or not isinstance(handler, int | float):
            return
        with self._lock:
            per_stage = self.samples[tool]
            for name, ms in stages.items():
                if isinstance(ms, int | float):
                    per_stage[str(name)].append(float(ms))
            per_stage[HANDLER].append(float(handler))
            per_stage[MCP_HTTP].append(max(0.0, client_ms - float(handler)))

    def drain(self) -> dict[str, dict[str, list[float]]]:
        """What was seen since the last drain (a worker's report to the master)."""
        with self._lock:
            out = {tool: dict(stages) for tool, stages in self.samples.items()}
            self.samples.clear()
        return out

    def merge(self, data: Mapping[str, Mapping[str, Sequence[float]]]) -> None:
        with self._lock:
            for tool, stages in data.items():
                for name, values in stages.items():
                    self.samples[tool][name].extend(float(v) for v in values)

    def clear(self) -> None:
        with self._lock:
            self.samples.clear()

    def summary(self) -> dict[str, dict[str, dict[str, float | int]]]:
        """{tool: {stage: {n, median_ms, p95_ms, mean_ms}}}, tools and stages sorted."""
        with self._lock:
            return {
                tool: {name: figures(v) for name, v in sorted(stages.items()) if v}
                for tool, stages in sorted(self.samples.items())
            }
