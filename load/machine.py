"""What machine a measurement was taken on: CPU model, the instruction sets that decide how fast
the server's own work runs, cores, and the numeric libraries' versions.

One function, `describe()`, returning a plain dict so run logs and bench summaries can store it
as is. The flags listed are the ones that change the server's speed the most: the query
embedding is an int8 ONNX model, whose matrix products onnxruntime runs with AVX2, AVX-512,
AVX-512 VNNI or AMX kernels, several times apart; numpy's products follow AVX2/AVX-512 too.
A latency bar from one of these machines says little about another, so every bench names its
machine (and `load/slo.yaml` the one its bars were set on). Linux reads `/proc/cpuinfo`; elsewhere
the model is `platform.processor()` and the flags are unknown (all False).
"""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")
# our names -> the kernel's flag names (any one present counts)
FLAGS: dict[str, tuple[str, ...]] = {
    "avx2": ("avx2",),
    "avx512f": ("avx512f",),
    "avx512_vnni": ("avx512_vnni",),
    "amx": ("amx_tile", "amx_int8", "amx_bf16"),
}


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def read_cpuinfo(path: Path = CPUINFO) -> tuple[str | None, set[str]]:
    """The first processor's model name and flags, or (None, empty) when unreadable."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, set()
    model: str | None = None
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model is None:
            model = value.strip()
        elif key == "flags" and not flags:
            flags = set(value.split())
        if model is not None and flags:
            break
    return model, flags


def describe(cpuinfo: Path = CPUINFO) -> dict[str, Any]:
    """{cpu_model, flags: {avx2, avx512f, avx512_vnni, amx}, arch, cores, onnxruntime, numpy,
    python}: plain values only."""
    model, flags = read_cpuinfo(cpuinfo)
    return {
        "cpu_model": model or platform.processor() or None,
        "flags": {name: any(f in flags for f in kernel) for name, kernel in FLAGS.items()},
        "arch": platform.machine(),
        "cores": os.cpu_count(),
        "onnxruntime": _version("onnxruntime"),
        "numpy": _version("numpy"),
        "python": platform.python_version(),
    }


def one_line(machine: dict[str, Any]) -> str:
    """`AMD EPYC, 2 cores, avx2 (no avx512f, avx512_vnni, amx), onnxruntime 1.31.1`."""
    flags = machine.get("flags") or {}
    have = [f for f, on in flags.items() if on]
    lack = [f for f, on in flags.items() if not on]
    text = f"{machine.get('cpu_model') or 'unknown CPU'}, {machine.get('cores')} cores"
    text += f", {', '.join(have) or 'no listed flags'}"
    if lack:
        text += f" (no {', '.join(lack)})"
    return text + f", onnxruntime {machine.get('onnxruntime') or '-'}"
