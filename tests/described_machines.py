"""Machines described for tests, so no test outcome depends on the CPU that runs it: each is a
real /proc/cpuinfo shape (tests/fixtures/cpuinfo/) with its architecture and core count given,
never read from the live machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ocm_common.machine import describe

CPUINFO = Path(__file__).parent / "fixtures" / "cpuinfo"


def described(name: str, arch: str, cores: int) -> dict[str, Any]:
    return describe(CPUINFO / f"{name}.txt", arch=arch, cores=cores)


AVX2_ONLY = described("avx2_epyc_7b12", "x86_64", 2)
AVX512_VNNI = described("avx512_vnni_epyc_9b14", "x86_64", 2)
AVX512_AMX = described("amx_xeon_8481c", "x86_64", 2)
ARM64_ASIMDDP = described("arm64_neoverse_n1", "aarch64", 4)
MACHINES = {
    "avx2-only": AVX2_ONLY,
    "avx512-vnni": AVX512_VNNI,
    "avx512-amx": AVX512_AMX,
    "arm64-asimddp": ARM64_ASIMDDP,
}

# How each must be stated, written from the cpuinfo files above (not from the code under test).
STATED = {
    "avx2-only": "AMD EPYC 7B12 (x86_64), 2 cores, avx2, fma (no avx512f, avx512_vnni, avx_vnni, amx)",
    "avx512-vnni": "AMD EPYC 9B14 (x86_64), 2 cores, avx2, fma, avx512f, avx512_vnni (no avx_vnni, amx)",
    "avx512-amx": "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz (x86_64), 2 cores, avx2, fma, avx512f, avx512_vnni, avx_vnni, amx",
    "arm64-asimddp": "ARM Neoverse-N1 (aarch64), 4 cores, asimddp,",
}
