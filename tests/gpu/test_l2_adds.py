"""On the GPU, DAXPY's `y[i] += a * x[i]` runs as atomic adds in the L2 where x and y fit there, and with
loads beyond it, with rustc's result in both cases, bitwise (an f64 atomic add rounds to nearest and keeps
subnormals, as `+` does)."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def awkward(n: int, seed: int) -> np.ndarray:
    """Values whose sums round, underflow to subnormals, cancel to +0.0 or keep -0.0."""
    rng = np.random.default_rng(seed)
    pool = np.array([1.0, -1.0, 1e-308, -3e-310, 5e-324, 0.0, -0.0, 1e308, np.pi, 1 / 3])
    return np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.standard_normal(n))


def l2_bytes() -> int:
    import cupy as cp

    return int(cp.cuda.Device().attributes["L2CacheSize"])


@pytest.mark.parametrize(("elements", "entry"), [
    (lambda l2: 1_000_000, "rs2gpu_daxpy_0_l2_adds"),
    (lambda l2: l2 // 16, "rs2gpu_daxpy_0_l2_adds"),       # x and y fill the L2
    (lambda l2: l2 // 16 + 2, "rs2gpu_daxpy_0_vector"),    # one pair of elements more
])
def test_daxpy_adds_in_the_l2_while_its_data_fit_there(cuda_kernels, cpu_kernels, elements, entry: str) -> None:
    import cupy as cp

    n = elements(l2_bytes())
    x = awkward(n, 1)
    expected, y = awkward(n, 2), cp.asarray(awkward(n, 2))
    cpu_kernels.daxpy(expected, x, 0.75)
    cuda_kernels.daxpy(y, cp.asarray(x), 0.75)
    assert cuda_kernels.daxpy.last_variants == [entry]
    assert cp.asnumpy(y).tobytes() == expected.tobytes()


def test_repeated_calls_keep_the_l2_adds(cuda_kernels, cpu_kernels) -> None:
    import cupy as cp

    n = 100_003
    x = awkward(n, 3)
    expected, y, device_x = awkward(n, 4), cp.asarray(awkward(n, 4)), cp.asarray(x)
    before = cuda_kernels.daxpy.repeats
    for a in (-1.25, 0.5, 3.0):
        cpu_kernels.daxpy(expected, x, a)
        cuda_kernels.daxpy(y, device_x, a)
    assert cuda_kernels.daxpy.repeats > before  # the later calls took the repeat path
    assert cuda_kernels.daxpy.last_variants == ["rs2gpu_daxpy_0_l2_adds"]
    assert cp.asnumpy(y).tobytes() == expected.tobytes()
