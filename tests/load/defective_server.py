"""A reference server with one seeded defect, for the tests that the load profiles catch it.

    python tests/load/defective_server.py DEFECT [reference_server args...]

DEFECT is one a backend team could ship:
  sequential-paths    the dual path runs SQL, then vector (instead of both at once)
  sequential-fanout   coverage.answer calls its domain tools one after another
  blocking-delay      the path delay blocks the event loop (time.sleep instead of asyncio.sleep)
The server must run with --workers 1 so the patch lives in the serving process.
"""

from __future__ import annotations

import asyncio
import sys
import time
import types
from typing import Any

from reference_server.retrieval import dual_path


def _shim(**overrides: Any) -> types.SimpleNamespace:
    """The asyncio module with some functions replaced, for one module's use."""
    return types.SimpleNamespace(**{**vars(asyncio), **overrides})


async def _sequential_gather(*aws: Any, **_: Any) -> list[Any]:
    return [await a for a in aws]


async def _blocking_sleep(seconds: float, *_: Any) -> None:
    time.sleep(seconds)


def apply(defect: str) -> None:
    if defect == "sequential-paths":
        dual_path.asyncio = _shim(gather=_sequential_gather)  # type: ignore[attr-defined]
    elif defect == "sequential-fanout":
        from reference_server.tools import pipeline  # composed tools fan out there

        pipeline.asyncio = _shim(gather=_sequential_gather)  # type: ignore[attr-defined]
    elif defect == "blocking-delay":
        dual_path.asyncio = _shim(sleep=_blocking_sleep)  # type: ignore[attr-defined]
    else:
        raise SystemExit(f"unknown defect {defect!r}")


if __name__ == "__main__":
    apply(sys.argv[1])
    from reference_server.__main__ import main

    sys.exit(main(sys.argv[2:]))
