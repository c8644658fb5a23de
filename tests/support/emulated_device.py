"""A GPU backend whose device is this CPU (bench/emulate.py's `EmulatedBackend`): the generated CUDA file
compiled by the host's C++ compiler and run block after block in host memory, driven by the real
`DeviceKernel` (argument checks, the transfer plan, the schedule of launches, the packed launch
arguments, reductions, device panics)."""
from __future__ import annotations

from pathlib import Path

from bench.emulate import EmulatedBackend
from rs2gpu.runtime.base import DeviceKernel


def emulated_kernels(translation, workdir: Path) -> dict[str, DeviceKernel]:
    """Every kernel of a translation (with the cuda target) on one emulated device."""
    device = EmulatedBackend(workdir)
    emitted = translation.emitted
    return {name: DeviceKernel(device, name, entry, emitted.files[entry["files"]["cuda"]], entry["files"]["cuda"])
            for name, entry in emitted.manifest["kernels"].items()}


def launched(kernel: DeviceKernel) -> list[str]:
    """The symbols the kernel's device has launched, in order."""
    return [symbol for symbol, _, _ in kernel.backend.launches]
