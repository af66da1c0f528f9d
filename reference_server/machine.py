"""What machine a result was computed on: CPU model, the instruction sets that pick
onnxruntime's and BLAS's kernels, cores, and the numeric libraries' versions.

One function, `describe()`, returning a plain dict that run logs, baselines, the reproducibility
fixture and bench summaries store as is. The flags listed are the ones that change which kernels
run, so both how fast the server's work is and, for integer models, what it computes: AVX2,
FMA, AVX-512, VNNI (AVX-512 and AVX forms), AMX on x86, the dot-product extension on ARM. A
latency bar or a vector from one of these machines says little about another without it.
Linux reads `/proc/cpuinfo`; elsewhere the model is `platform.processor()` and the flags are
unknown (all False).
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
    "fma": ("fma",),
    "avx512f": ("avx512f",),
    "avx512_vnni": ("avx512_vnni",),
    "avx_vnni": ("avx_vnni",),
    "amx": ("amx_tile", "amx_int8", "amx_bf16"),
    "asimddp": ("asimddp",),  # ARM's int8 dot product
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
        key = key.strip().lower()
        if key in ("model name", "cpu model") and model is None:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
        if model is not None and flags:
            break
    return model, flags


def describe(cpuinfo: Path = CPUINFO) -> dict[str, Any]:
    """{cpu_model, flags: {avx2, fma, avx512f, avx512_vnni, avx_vnni, amx, asimddp}, arch, cores,
    onnxruntime, numpy, python}: plain values only."""
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


def one_line(machine: dict[str, Any] | None = None) -> str:
    """`AMD EPYC, 2 cores, avx2 (no avx512f, avx512_vnni, amx), onnxruntime 1.31.1`."""
    machine = machine if machine is not None else describe()
    flags = machine.get("flags") or {}
    have = [f for f, on in flags.items() if on]
    lack = [f for f, on in flags.items() if not on]
    text = f"{machine.get('cpu_model') or 'unknown CPU'}, {machine.get('cores')} cores"
    text += f", {', '.join(have) or 'no listed flags'}"
    if lack:
        text += f" (no {', '.join(lack)})"
    return text + f", onnxruntime {machine.get('onnxruntime') or '-'}"
