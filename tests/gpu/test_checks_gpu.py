"""What only the GPU shows of the checks: calls that return before the device finishes, a call that waits
for its index list's verdict, and the checks under compute-sanitizer. The kernels are
tests/runtime/data/checks.rs and the example crate; tests/runtime/test_device_checks.py specifies the checks
on every device.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import RAJAPERF as EXAMPLE

pytestmark = pytest.mark.gpu

CHECKS = Path(__file__).resolve().parents[1] / "runtime" / "data" / "checks.rs"


# ---------------------------------------------------------------- calls that need not wait


def _returns_before_the_device_finishes(kernels, call) -> bool:
    import cupy as cp

    call()
    done = cp.cuda.Event(disable_timing=True)
    done.record(kernels.device_backend.stream)
    finished = done.done
    kernels.synchronize()
    return not finished


def test_if_quad_on_cupy_arrays_returns_before_the_kernel_finishes(cuda_kernels) -> None:
    import cupy as cp

    n = 200_000_000  # about 2 ms of kernel on an H200, much longer than the call's host time
    rng = cp.random.default_rng(1)
    a, b, c = (rng.uniform(0.5, 1.5, n) for _ in range(3))
    x1, x2 = cp.empty(n), cp.empty(n)
    cuda_kernels.if_quad(a, b, c, x1, x2)  # warm: compiled and loaded
    cuda_kernels.synchronize()
    assert _returns_before_the_device_finishes(cuda_kernels, lambda: cuda_kernels.if_quad(a, b, c, x1, x2))
    assert cuda_kernels.if_quad.last_variants == ["rs2gpu_if_quad_0"]


def test_a_call_with_an_index_list_waits_for_the_verdict(cuda_kernels) -> None:
    import cupy as cp

    n = 10_000_000
    vol, x = cp.zeros(n + 200), cp.ones(n + 200)
    zones = cp.arange(n, dtype=cp.uint64)
    assert not _returns_before_the_device_finishes(
        cuda_kernels, lambda: cuda_kernels.zonal_accumulation_3d(vol, x, zones, 10, 100))


# ---------------------------------------------------------------- compute-sanitizer


SANITIZED = f"""
import numpy as np, cupy as cp, rs2gpu
k = rs2gpu.load({str(CHECKS)!r}, backend="cuda")
r = rs2gpu.load({str(EXAMPLE)!r}, backend="cuda")
s = np.where(np.arange(5000) < 4000, np.linspace(-1, 1, 5000), -1.0)
k.roots(np.zeros(5000), np.zeros(5000), s)
k.roots(np.zeros(5000), np.zeros(4000), s)
s[4500] = 1.0
try:
    k.roots(np.zeros(5000), np.zeros(4000), s)
except rs2gpu.KernelPanic:
    pass
zones = np.random.default_rng(0).permutation(5000).astype(np.uint64)
k.scatter(cp.zeros(5000), cp.ones(5010), cp.asarray(zones), 10)
zones[7] = zones[8]
try:
    k.scatter(cp.zeros(5000), cp.ones(5010), cp.asarray(zones), 10)
except rs2gpu.RaceError:
    pass
try:
    k.scatter(cp.zeros(5000), cp.ones(5005), cp.asarray(np.arange(5000, dtype=np.uint64)), 10)
except rs2gpu.KernelPanic:
    pass
keep = np.zeros(5000, dtype=np.uint8)
k.scatter_where(np.zeros(5000), np.full(5000, 10**9, dtype=np.uint64), keep)
n = 20000
r.zonal_accumulation_3d(cp.zeros(n + 200), cp.ones(n + 200), cp.arange(n, dtype=cp.uint64), 10, 100)
r.if_quad(*(cp.ones(n) for _ in range(3)), cp.empty(n), cp.empty(n))
r.synchronize()
print("done")
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_the_checks_are_clean_under_compute_sanitizer(tool: str, tmp_path: Path) -> None:
    script = tmp_path / "sanitized.py"
    script.write_text(SANITIZED)
    done = subprocess.run(["compute-sanitizer", "--tool", tool, "--error-exitcode", "1", sys.executable, "-P",
                           str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "done" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    summary = {"memcheck": "ERROR SUMMARY: 0 errors",
               "racecheck": "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"}[tool]
    assert summary in done.stdout + done.stderr
