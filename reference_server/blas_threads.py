"""BLAS threads as the package means them, whatever imported numpy first.

`reference_server/__init__.py` sets OPENBLAS_NUM_THREADS=1 (unless the environment already
says otherwise), which OpenBLAS reads only when numpy loads it: a harness that imports numpy
before this package gets one BLAS thread per core, and a 3,001 x 384 flat-index product then
cost 7.1 CPU ms instead of 0.34 on a busy 2-core machine. The server calls `enforce_blas_threads`
when it makes its query embedder (at warm-up), which sets the running OpenBLAS to the
environment's count through its own C entry points (threadpoolctl's method, without the
dependency), and logs a warning when it cannot.
"""

from __future__ import annotations

import ctypes
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

# (set, get) entry points of the OpenBLAS builds numpy ships or links.
ENTRY_POINTS = (
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)


def wanted_threads() -> int:
    """The thread count the environment asks for (the package sets 1 when it says nothing)."""
    try:
        return max(1, int(os.environ.get("OPENBLAS_NUM_THREADS", "1")))
    except ValueError:
        return 1


def _loaded_openblas() -> list[Path]:
    """OpenBLAS libraries mapped into this process (Linux: /proc/self/maps)."""
    try:
        lines = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return []
    paths = {line.split()[-1] for line in lines if "openblas" in line.rsplit("/", 1)[-1]}
    return sorted(Path(p) for p in paths if p.startswith("/"))


def _controls() -> list[tuple[object, object]]:
    """(set, get) functions of every loaded OpenBLAS."""
    found = []
    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(str(path))
        except OSError:
            continue
        for set_name, get_name in ENTRY_POINTS:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                found.append((getattr(lib, set_name), getattr(lib, get_name)))
                break
    return found


def blas_threads() -> list[int]:
    """The thread count of each loaded OpenBLAS (empty when none is loaded or readable)."""
    return [int(get()) for _, get in _controls()]  # type: ignore[operator]


def enforce_blas_threads() -> list[int]:
    """Set every loaded OpenBLAS to `wanted_threads()`; returns the counts read back, and
    warns when numpy's BLAS is loaded but could not be read or set."""
    import numpy  # noqa: F401  (BLAS is loaded with numpy; the server has it loaded by now)

    wanted = wanted_threads()
    controls = _controls()
    for set_threads, _ in controls:
        set_threads(wanted)  # type: ignore[operator]
    counts = blas_threads()
    if not controls:
        log.warning("BLAS threads: no OpenBLAS found to check; products may use every core")
    elif any(count != wanted for count in counts):
        log.warning("BLAS threads: wanted %d, OpenBLAS runs %s", wanted, counts)
    return counts
