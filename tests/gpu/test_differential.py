"""Differential tests: every kernel of the kernel files below, on random inputs, on a device and on the
cpu backend (the rustc build of the same source), must agree. Each instantiation of a generic kernel is a
kernel of its own here.

Every file runs on the GPU (`-m gpu`); the kernels of tests/gpu/kernels also run on the emulated device
(tests/support/devices.py), which needs no GPU: the same calls, launch arguments, schedules and transfers
as on the GPU, so that those are checked on every machine.

Agreement is tests/support/agreement.py's: bit for bit, except where the arithmetic itself differs (math
functions that are not correctly rounded, float reductions in another order).
When the Rust code panics, the GPU call must raise KernelPanic with the same message.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rs2gpu import pipeline

from tests.support.agreement import arguments, assert_call_agrees
from tests.support.devices import CUDA, EMULATED, on, rustc_build

HERE = Path(__file__).resolve().parent
KERNEL_FILES = sorted((HERE / "kernels").glob("*.rs"))
FILES = sorted([*(HERE.parent / "cases").glob("*.rs"), *KERNEL_FILES])
SIZES = (1, 257, 4099)


def kernels_of(path: Path) -> list[str]:
    """The kernels of a file as the kernel ABI names them (one per instantiation of a generic kernel)."""
    return list(pipeline.translate(path, ("cuda",)).emitted.abi.kernels)


def devices_for(path: Path) -> tuple:
    """Every file runs on the GPU; the GPU tests' own kernel files run on the emulated device too."""
    return (EMULATED, CUDA) if path in KERNEL_FILES else (CUDA,)


CASES = [on(device, f, k, id=f"{f.stem}::{k}") for f in FILES for k in kernels_of(f) for device in devices_for(f)]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("device,path,name", CASES, indirect=["device"])
def test_device_agrees_with_rustc(device, path, name, n):
    cpu, kernels = rustc_build(path), device.load(path)
    entry = cpu.abi.kernels[name]
    rng = np.random.default_rng([n, len(name), sum(map(ord, name))])
    args = arguments(entry, n, rng)
    assert_call_agrees(cpu, kernels, name, args, path.read_text())
