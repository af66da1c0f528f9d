"""What machine computed a result: recorded beside every figure and every run log.

The same code gives last-bit different floats on different instruction sets, and a latency is
the machine's as much as the server's, so a number without its machine cannot be compared.
Only the features that change what onnxruntime or BLAS run are named: AVX2, AVX-512, VNNI (its
AVX-512 and AVX forms), AMX on x86; the dot-product extension on ARM.
"""

from __future__ import annotations

import os
import platform
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile", "asimddp")


def _cpuinfo() -> tuple[str, set[str]]:
    """(CPU model, flags) from /proc/cpuinfo; empty where there is none (not Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or "unknown", set()
    model, flags = "", set[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "cpu model", "hardware") and not model:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
    return model or platform.processor() or "unknown", flags


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


@cache
def describe() -> dict[str, Any]:
    """The machine as a plain record: CPU model, the ISA flags that matter, versions."""
    model, flags = _cpuinfo()
    return {
        "cpu_model": model,
        "arch": platform.machine(),
        "cores": os.cpu_count(),
        "flags": {name: name in flags for name in ISA_FLAGS},
        "onnxruntime": _version("onnxruntime"),
        "numpy": _version("numpy"),
        "python": platform.python_version(),
    }


def one_line(machine: dict[str, Any] | None = None) -> str:
    """`AMD EPYC (x86_64, 2 cores; avx2 fma; onnxruntime 1.31.1)` for reports and notes."""
    m = machine or describe()
    flags = (
        " ".join(name for name, on in (m.get("flags") or {}).items() if on) or "no listed ISA flags"
    )
    return (
        f"{m.get('cpu_model')} ({m.get('arch')}, {m.get('cores')} cores; {flags}; "
        f"onnxruntime {m.get('onnxruntime')})"
    )
