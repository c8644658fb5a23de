"""A GPU backend whose device is this CPU (bench/emulate.py's `EmulatedBackend`): the generated CUDA file
compiled by the host's C++ compiler and run block after block in host memory, driven by the real
`DeviceKernel` (argument checks, the transfer plan, the schedule of launches, the packed launch
arguments, reductions, device panics)."""
from __future__ import annotations

import sys
from pathlib import Path

from rs2gpu.runtime.base import DeviceKernel

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # for `bench`; appended, so the installed rs2gpu wins
from bench.emulate import EmulatedBackend  # noqa: E402


def emulated_kernels(translation, workdir: Path) -> dict[str, DeviceKernel]:
    """Every kernel of a translation (with the cuda target) on one emulated device."""
    device = EmulatedBackend(workdir)
    emitted = translation.emitted
    return {name: DeviceKernel(device, name, entry, emitted.files[entry.files["cuda"]], entry.files["cuda"])
            for name, entry in emitted.abi.kernels.items()}


def launched(kernel: DeviceKernel) -> list[str]:
    """The symbols the kernel's device has launched, in order."""
    return [symbol for symbol, _, _ in kernel.backend.launches]
