"""The device a behaviour of the generated kernels is specified on, so that one test states it once: the
emulated device on every machine, and the cuda backend's GPU under `pytest -m gpu`.

The emulated device is the generated CUDA compiled for this CPU (bench/emulate.py) behind the runtime's own
`DeviceKernel`: the same argument checks, transfers, schedules, packed launch arguments, reductions and
panic records as on the GPU, with one multiprocessor (so a reduction's capped grid is 8 blocks) and no L2
for the L2-adds entry points unless a test asks for one (`with_l2`). Its threads run one after another, so
a test sizes its data from the device (`grid_threads`) where the GPU needs millions of iterations.

Tests take a device through the `device` fixture (tests/conftest.py), whose cuda parameter is marked
`gpu`; both count what the runtime asks of the device (`activity`).
"""
from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

import rs2gpu
from bench.emulate import EmulatedBackend, EmulatedDeviceArray, EmulatedKernels, compiler
from rs2gpu import pipeline
from rs2gpu.api import lazy_generics
from rs2gpu.runtime.base import REDUCTION_BLOCKS_PER_MULTIPROCESSOR
from rs2gpu.runtime.dispatch import group_instances

# The `device` fixture's parameters; a test that picks its devices parametrizes `device` indirectly with them.
EMULATED = pytest.param("emulated", id="emulated")
CUDA = pytest.param("cuda", id="cuda", marks=pytest.mark.gpu)
DEVICES = (EMULATED, CUDA)
EMULATED_L2_BYTES = 16_000  # the L2 of the emulated device `with_l2` gives: a few thousand f64 elements


def on(device, *values, id: str):
    """`device` (EMULATED or CUDA) and a test's other parameters, for a parametrization that names the
    devices of each case itself (`indirect=["device"]`)."""
    return pytest.param(device.values[0], *values, id=f"{device.id}-{id}", marks=device.marks)


@functools.cache
def rustc_build(source: Path):
    """The kernels of `source` built by rustc (the cpu backend): what every device must compute."""
    return rs2gpu.load(source, backend="cpu")


class Activity(NamedTuple):
    """What the runtime has asked of a device's backend so far."""
    launches: int
    stream_waits: int
    word_waits: int


class _Counting:
    """Records the launches (grid and block) and counts the waits a backend is asked for, wrapping its
    methods on the instance."""

    def __init__(self, backend) -> None:
        self.shapes: list[tuple[tuple, tuple]] = []
        self.waits = {"synchronize": 0, "wait_for_word": 0}
        launch = backend.launch_packed

        def recorded_launch(function, grid, block, params_address):
            self.shapes.append((tuple(grid), tuple(block)))
            return launch(function, grid, block, params_address)
        backend.launch_packed = recorded_launch
        for method in self.waits:
            setattr(backend, method, self._counted(method, getattr(backend, method)))

    def _counted(self, method: str, call):
        def counted(*args, **kwargs):
            self.waits[method] += 1
            return call(*args, **kwargs)
        return counted

    def activity(self) -> Activity:
        return Activity(len(self.shapes), self.waits["synchronize"], self.waits["wait_for_word"])


class Device(ABC):
    """One device: its kernel modules (one per Rust file, kept for the session), its arrays, its size."""

    name: str

    def __init__(self) -> None:
        self._modules: dict[Path, object] = {}
        self._counting: dict[int, _Counting] = {}

    def load(self, source: Path):
        """The kernels of a Rust file on this device, as attributes (a generic kernel under its Rust name
        too, choosing its instantiation from the arguments)."""
        if source not in self._modules:
            self._modules[source] = self._load(source)
        return self._modules[source]

    def activity(self, kernel) -> Activity:
        """What the runtime has asked so far of the backend `kernel` runs on."""
        return self._counting[id(kernel.backend)].activity()

    def launch_shapes(self, kernel, since: Activity) -> list[tuple[tuple, tuple]]:
        """The (grid, block) of each launch on `kernel`'s backend after `since`."""
        return self._counting[id(kernel.backend)].shapes[since.launches:]

    def grid_threads(self) -> int:
        """The threads of a reduction's capped grid: past this many iterations, each thread strides over
        several."""
        return self.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR * 256

    def _count(self, backend) -> None:
        if id(backend) not in self._counting:
            self._counting[id(backend)] = _Counting(backend)

    @abstractmethod
    def _load(self, source: Path): ...

    @abstractmethod
    def to_device(self, host: np.ndarray):
        """A device array holding a copy of `host`."""

    @abstractmethod
    def to_host(self, array) -> np.ndarray:
        """A host copy of a device array."""

    @abstractmethod
    def shifted(self, host: np.ndarray, elements: int):
        """A device array holding a copy of `host` that starts `elements` elements into an allocation: off
        the 16-byte grid where those elements are not a multiple of 16 bytes."""

    @abstractmethod
    def multiprocessors(self) -> int: ...

    @abstractmethod
    def l2_bytes(self) -> int:
        """The L2 the L2-adds entry points may fill (0: they never run)."""

    def with_l2(self) -> Device:
        """This device, or one like it, with an L2 that the L2-adds entry points run in."""
        return self


class _EmulatedModule:
    """The kernels of one Rust file on the emulated device, each compiled by g++ when first used (a generic
    kernel without `types(...)` instantiated at the first call that names its types, as on the GPU)."""

    def __init__(self, source: Path, backend: EmulatedBackend) -> None:
        translation = pipeline.translate(source, ("cuda",))
        self._kernels = EmulatedKernels(translation, backend)
        self.abi = translation.emitted.abi
        self._generic = {entry.generic.name for entry in self.abi.kernels.values() if entry.generic}
        self._lazy = lazy_generics(translation, source, ("cuda",), lambda instantiated, names: {
            name: getattr(EmulatedKernels(instantiated, backend), name) for name in names})

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._lazy:
            return self._lazy[name]
        if name in self._generic:
            self.__dict__.update(group_instances(_ByKey(self._kernels), self.abi))
            return self.__dict__[name]
        return getattr(self._kernels, name)


class _ByKey:
    """The kernels of a module by their key in the kernel ABI, as `group_instances` reads them."""

    def __init__(self, kernels: EmulatedKernels) -> None:
        self._kernels = kernels

    def __getitem__(self, key: str):
        return getattr(self._kernels, key)


class EmulatedDevice(Device):
    name = "emulated"

    def __init__(self, workdir: Path, l2_bytes: int = 0) -> None:
        super().__init__()
        if compiler() is None:
            pytest.fail("the emulated device needs g++")
        self._workdir = workdir
        self.backend = EmulatedBackend(workdir / f"l2-{l2_bytes}", l2_bytes=l2_bytes)
        self.backend.workdir.mkdir(parents=True, exist_ok=True)
        self._count(self.backend)
        self._with_l2: EmulatedDevice | None = None

    def _load(self, source: Path) -> _EmulatedModule:
        return _EmulatedModule(source, self.backend)

    def to_device(self, host: np.ndarray) -> EmulatedDeviceArray:
        return EmulatedDeviceArray(host.copy())

    def to_host(self, array: EmulatedDeviceArray) -> np.ndarray:
        return array.array.copy()

    def shifted(self, host: np.ndarray, elements: int) -> EmulatedDeviceArray:
        return EmulatedDeviceArray(np.concatenate([np.zeros(elements, host.dtype), host])[elements:])

    def multiprocessors(self) -> int:
        return self.backend.multiprocessors()

    def l2_bytes(self) -> int:
        return self.backend.l2_adds_bytes()

    def with_l2(self) -> EmulatedDevice:
        if self.l2_bytes():
            return self
        if self._with_l2 is None:
            self._with_l2 = EmulatedDevice(self._workdir, EMULATED_L2_BYTES)
        return self._with_l2


class CudaDevice(Device):
    name = "cuda"

    def __init__(self) -> None:
        super().__init__()
        import cupy  # the cuda backend's own dependency: a GPU machine without it fails here

        self._cupy = cupy

    def _load(self, source: Path):
        module = rs2gpu.load(source, backend="cuda")
        self._count(module.device_backend)
        return module

    def to_device(self, host: np.ndarray):
        return self._cupy.asarray(host)

    def to_host(self, array) -> np.ndarray:
        return self._cupy.asnumpy(array)

    def shifted(self, host: np.ndarray, elements: int):
        return self._cupy.asarray(np.concatenate([np.zeros(elements, host.dtype), host]))[elements:]

    def multiprocessors(self) -> int:
        return int(self._cupy.cuda.Device().attributes["MultiProcessorCount"])

    def l2_bytes(self) -> int:
        return int(self._cupy.cuda.Device().attributes["L2CacheSize"])


def device_word(kernel, name: str) -> int:
    """The value of a 32-bit `__device__` variable of the module `kernel` runs from."""
    value = np.zeros(1, dtype=np.uint32)
    kernel.backend.download(value, kernel.backend.global_address(kernel._module, name))
    return int(value[0])
