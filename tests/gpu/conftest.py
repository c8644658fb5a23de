"""Fixtures of the GPU tests: the example crate on the cuda backend and on the cpu backend (the rustc
oracle), and random inputs shaped for each kernel.

These tests run on a machine with an NVIDIA GPU (`pytest -m gpu`). The cpu backend needs the kernels'
shared library: cargo builds it, or it is taken from RS2GPU_CACHE_DIR when it was built elsewhere.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from rs2gpu.ir.abi import KernelABI, ParamKind

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "rajaperf"
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # for `bench` (the benchmark table); appended, so the installed rs2gpu wins
SIZES = (1, 255, 256, 257, 1_000_003)


@pytest.fixture(scope="session")
def cuda_kernels():
    return rs2gpu.load(EXAMPLE, backend="cuda")


@pytest.fixture(scope="session")
def cpu_kernels():
    return rs2gpu.load(EXAMPLE, backend="cpu")


def random_arguments(entry: KernelABI, n: int, rng: np.random.Generator, input_extra: int) -> list:
    """Non-zero random data: outputs of length n, inputs of length n + input_extra (stencils read past
    the loop's end), scalars in (0.5, 1.5)."""
    args = []
    for p in entry.params:
        if p.kind == ParamKind.SLICE:
            length = n if p.mutable else n + input_extra
            args.append(rng.uniform(0.5, 1.5, length) * rng.choice([-1.0, 1.0], length))
        elif p.kind == ParamKind.SCALAR:
            args.append(float(rng.uniform(0.5, 1.5)))
        else:
            raise NotImplementedError(p.kind)
    return args


INPUT_EXTRAS = (lambda n: 0, lambda n: 16, lambda n: 25 * n + 16)  # exact, stencil halo, 26 rows (ARRAY_OF_PTRS)


def input_extra_for(cpu_kernels, name: str, n: int) -> int:
    """The smallest extra input length with which the Rust kernel does not panic at size n."""
    entry = cpu_kernels.abi.kernels[name]
    rng = np.random.default_rng(0)
    for extra in INPUT_EXTRAS:
        try:
            getattr(cpu_kernels, name)(*random_arguments(entry, n, rng, extra(n)))
            return extra(n)
        except rs2gpu.KernelPanic:
            continue
    raise AssertionError(f"{name} panics on the cpu backend with any input length")
