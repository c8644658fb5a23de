"""Ordinary Rust that rustc accepts, run on the device: coercions, `use` declarations, the integer
methods of std, stepped and reversed ranges. The kernels are tests/gpu/kernels/ordinary_rust.rs; the
expected values come from the cpu backend (rustc's build of the same file)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.devices import rustc_build

ORDINARY = Path(__file__).resolve().parent / "kernels" / "ordinary_rust.rs"


@pytest.fixture(scope="module")
def cpu():
    return rustc_build(ORDINARY)


@pytest.fixture(scope="module")
def kernels(device):
    return device.load(ORDINARY)


def random(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


def test_a_mut_slice_passed_to_a_helper_taking_a_shared_slice_is_reborrowed(kernels, cpu):
    a, b = random(1000, 1), random(1000, 2)
    want_a, want_b = a.copy(), b.copy()
    cpu.heat_steps(want_a, want_b, 3)
    kernels.heat_steps(a, b, 3)
    assert a.tobytes() == want_a.tobytes() and b.tobytes() == want_b.tobytes()
