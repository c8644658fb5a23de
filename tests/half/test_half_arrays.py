"""Half-precision arrays from every array library the runtime takes: numpy float16 and ml_dtypes bfloat16
(tests/half/test_half_arithmetic.py), torch float16/bfloat16 tensors (CPU, and CUDA under `-m gpu`) and cupy
float16 arrays (`-m gpu`). The generic kernel's instantiation is chosen from the elements' type, and the
results are rustc's, bit for bit; an array of the other half type is refused."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

from tests.support.devices import rustc_build

ml_dtypes = pytest.importorskip("ml_dtypes")

OPERATORS = Path(__file__).parent / "kernels" / "operators.rs"
N = 4096


def operands(dtype) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    return tuple(rng.integers(0, 1 << 16, N, dtype=np.uint16).view(dtype) for _ in range(2))


def rust_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The `sum` output of rustc's build on numpy arrays."""
    outputs = [np.zeros(N, a.dtype) for _ in range(6)] + [np.zeros(N, np.uint8)]
    rustc_build(OPERATORS).operators(*outputs, a, b)
    return outputs[0]


def call_sum(kernels, a, b, like):
    """`operators` on arrays made by `like` (an array library's constructor from numpy), its `sum` back."""
    outputs = [like(np.zeros(N, a.dtype)) for _ in range(6)] + [like(np.zeros(N, np.uint8))]
    kernels.operators(*outputs, like(a), like(b))
    return outputs[0]


def test_an_array_of_the_other_half_type_is_refused() -> None:
    a, b = operands(np.float16)
    kernel = rustc_build(OPERATORS).operators_bf16
    outputs = [np.zeros(N, ml_dtypes.bfloat16) for _ in range(6)] + [np.zeros(N, np.uint8)]
    with pytest.raises(TypeError, match=r"argument `a` \(&\[bf16\]\) needs elements of dtype bfloat16, got float16"):
        kernel(*outputs, a, b)


def torch_tensor(torch, x: np.ndarray):
    """A torch tensor of `x`'s elements; half ones cross as their bits (torch.from_numpy takes no bfloat16)."""
    if x.dtype == np.uint8:
        return torch.from_numpy(x.copy())
    name = "float16" if x.dtype == np.float16 else "bfloat16"
    return torch.from_numpy(x.view(np.int16).copy()).view(getattr(torch, name))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_torch_cpu_tensors(emulated_device, name) -> None:
    torch = pytest.importorskip("torch")
    dtype = np.float16 if name == "float16" else ml_dtypes.bfloat16
    a, b = operands(dtype)
    got = call_sum(emulated_device.load(OPERATORS), a, b, lambda x: torch_tensor(torch, x))
    np.testing.assert_array_equal(got.view(torch.int16).numpy().view(np.uint16), rust_sum(a, b).view(np.uint16))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_torch_cuda_tensors(name) -> None:
    torch = pytest.importorskip("torch")
    dtype = np.float16 if name == "float16" else ml_dtypes.bfloat16
    a, b = operands(dtype)
    got = call_sum(rs2gpu.load(OPERATORS, backend="cuda"), a, b, lambda x: torch_tensor(torch, x).cuda())
    np.testing.assert_array_equal(got.view(torch.int16).cpu().numpy().view(np.uint16), rust_sum(a, b).view(np.uint16))


@pytest.mark.gpu
def test_cupy_float16_arrays() -> None:
    cupy = pytest.importorskip("cupy")
    a, b = operands(np.float16)
    got = call_sum(rs2gpu.load(OPERATORS, backend="cuda"), a, b, cupy.asarray)
    np.testing.assert_array_equal(cupy.asnumpy(got).view(np.uint16), rust_sum(a, b).view(np.uint16))
