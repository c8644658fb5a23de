"""Fixtures of the GPU tests: the example crate on the cuda backend and on the cpu backend (the rustc
oracle).

These tests run on a machine with an NVIDIA GPU (`pytest -m gpu`). The cpu backend needs the kernels'
shared library: cargo builds it, or it is taken from RS2GPU_CACHE_DIR when it was built elsewhere.
"""
from __future__ import annotations

import pytest

import rs2gpu

from tests.support.paths import RAJAPERF as EXAMPLE


@pytest.fixture(scope="session")
def cuda_kernels():
    return rs2gpu.load(EXAMPLE, backend="cuda")


@pytest.fixture(scope="session")
def cpu_kernels():
    return rs2gpu.load(EXAMPLE, backend="cpu")
