"""What machine a result was computed on: CPU model, the instruction sets that pick
onnxruntime's and BLAS's kernels, cores, and the numeric libraries' versions.

One function, `describe()`, returning a `MachineDescription` (a plain dict of plain values) that
run logs, baselines, the reproducibility fixture and bench summaries store as is. The flags
listed are the ones that change which kernels run, so both how fast the server's work is and,
for integer models, what it computes: AVX2, FMA, AVX-512, VNNI (AVX-512 and AVX forms), AMX on
x86, the dot-product extension on ARM. A latency bar or a vector from one of these machines says
little about another without it. Linux reads `/proc/cpuinfo`; elsewhere the model is
`platform.processor()` and the flags are unknown (all False).
"""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from ocm_common.json_types import JsonObject

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


# ARM's /proc/cpuinfo names no model, only an implementer and a part number (the kernel's
# arch/arm64/include/asm/cputype.h): the common server cores, by (implementer, part).
ARM_CORES: dict[tuple[str, str], str] = {
    ("0x41", "0xd08"): "ARM Cortex-A72",
    ("0x41", "0xd0b"): "ARM Cortex-A76",
    ("0x41", "0xd0c"): "ARM Neoverse-N1",
    ("0x41", "0xd40"): "ARM Neoverse-V1",
    ("0x41", "0xd49"): "ARM Neoverse-N2",
    ("0x41", "0xd4f"): "ARM Neoverse-V2",
    ("0xc0", "0xac3"): "Ampere AmpereOne",
    ("0x61", "0x022"): "Apple M1",
}


def read_cpuinfo(path: Path = CPUINFO) -> tuple[str | None, set[str]]:
    """The first processor's model name and flags, or (None, empty) when unreadable. On ARM the
    model is named from its implementer and part number."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, set()
    model: str | None = None
    flags: set[str] = set()
    arm: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "cpu model") and model is None:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
        elif key in ("cpu implementer", "cpu part") and key not in arm:
            arm[key] = value.strip().lower()
    if model is None and arm:
        implementer, part = arm.get("cpu implementer", "?"), arm.get("cpu part", "?")
        model = ARM_CORES.get((implementer, part), f"ARM implementer {implementer} part {part}")
    return model, flags


@with_config(ConfigDict(extra="allow"))
class MachineDescription(TypedDict, total=False):
    """What `describe()` gives, in its key order. Every key is there in a description made now;
    a stored one may lack some (a test's, or one written by other code) and is read as it is,
    any other key kept."""

    cpu_model: str | None
    # {our flag name: present} for every name in FLAGS
    flags: dict[str, bool]
    arch: str | None
    cores: int | None
    onnxruntime: str | None
    numpy: str | None
    python: str | None


def describe(
    cpuinfo: Path = CPUINFO, *, arch: str | None = None, cores: int | None = None
) -> MachineDescription:
    """{cpu_model, flags: {avx2, fma, avx512f, avx512_vnni, avx_vnni, amx, asimddp}, arch, cores,
    onnxruntime, numpy, python}: plain values only. `arch` and `cores` default to this machine's;
    a test describing another machine gives its cpuinfo file, arch and cores."""
    model, flags = read_cpuinfo(cpuinfo)
    if model is None and cpuinfo == CPUINFO:  # this machine, without a readable cpuinfo
        model = platform.processor() or None
    return {
        "cpu_model": model,
        "flags": {name: any(f in flags for f in kernel) for name, kernel in FLAGS.items()},
        "arch": arch or platform.machine(),
        "cores": cores if cores is not None else os.cpu_count(),
        "onnxruntime": _version("onnxruntime"),
        "numpy": _version("numpy"),
        "python": platform.python_version(),
    }


X86 = frozenset({"x86_64", "amd64", "i386", "i686"})
ARM = frozenset({"aarch64", "arm64", "armv8l"})
X86_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx")
ARM_FLAGS = ("asimddp",)


def relevant_flags(machine: MachineDescription | JsonObject) -> dict[str, bool]:
    """The flags that can exist on the machine's architecture: an ARM machine is not said to
    lack AVX2, nor an x86 one the ARM dot product (unknown architecture: every flag)."""
    found = machine.get("flags") or {}
    flags = found if isinstance(found, dict) else {}  # not an object: no flags recorded
    arch = str(machine.get("arch") or "").lower()
    names = X86_FLAGS if arch in X86 else ARM_FLAGS if arch in ARM else tuple(flags)
    return {name: bool(flags.get(name)) for name in names if name in flags}


def one_line(machine: MachineDescription | JsonObject | None = None) -> str:
    """`AMD EPYC (x86_64), 2 cores, avx2, fma (no avx512f, avx512_vnni, avx_vnni, amx),
    onnxruntime 1.31.1`."""
    machine = machine if machine is not None else describe()
    flags = relevant_flags(machine)
    have = [f for f, on in flags.items() if on]
    lack = [f for f, on in flags.items() if not on]
    text = f"{machine.get('cpu_model') or 'unknown CPU'}"
    if machine.get("arch"):
        text += f" ({machine['arch']})"
    text += f", {machine.get('cores')} cores, {', '.join(have) or 'no listed flags'}"
    if lack:
        text += f" (no {', '.join(lack)})"
    return text + f", onnxruntime {machine.get('onnxruntime') or '-'}"


def lacking(
    machine: MachineDescription | JsonObject, other_flags: dict[str, bool]
) -> tuple[list[str], list[str]]:
    """(flags this machine has that the other lacks, flags the other has that this one lacks),
    among those both record: kernels that differ make the same work take other times."""
    mine = relevant_flags(machine)
    shared = [f for f in mine if f in other_flags]
    return (
        [f for f in shared if mine[f] and not other_flags[f]],
        [f for f in shared if other_flags[f] and not mine[f]],
    )
