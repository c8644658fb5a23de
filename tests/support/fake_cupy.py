"""A stand-in for cupy that runs on the CPU, to drive bench/run.py's GPU path without a GPU.

Arrays are numpy arrays; the kernels of the baseline cubins run through bench.emulate on the CPU, events
read the host clock, and the generated side is rs2gpu's CPU backend.
"""
from __future__ import annotations

import ctypes
import sys
import time
import types
from pathlib import Path

import numpy as np

from tests.support.paths import REPO


class _Stream:
    ptr = 0

    def __init__(self, non_blocking: bool = False) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self) -> None:
        pass


class _Event:
    def __init__(self, *args, **kwargs) -> None:
        self.t = 0.0

    def record(self, stream=None) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass


class _Pinned(np.ndarray):
    @property
    def ptr(self) -> int:
        return self.ctypes.data


class _Kernel:
    def __init__(self, library, symbol: str) -> None:
        self.library, self.symbol = library, symbol

    def __call__(self, grid, block, args, shared_mem: int = 0, stream=None) -> None:
        if self.library is None:   # the spin kernel of the timer
            return
        pad = lambda t: tuple(t) + (1,) * (3 - len(t))  # noqa: E731
        self.library.launch(self.symbol, pad(grid), pad(block), args)


class _Module:
    libraries: dict = {}
    workdir: Path | None = None

    def __init__(self, path: str) -> None:
        from bench import emulate

        stem = Path(path).stem
        source = REPO / "bench" / "baselines" / f"{stem}.cu"
        self.library = None
        if source.exists():
            if stem not in _Module.libraries:
                _Module.libraries[stem] = emulate.Library(source, _Module.workdir or Path(path).parent)
            self.library = _Module.libraries[stem]

    def get_function(self, symbol: str) -> _Kernel:
        return _Kernel(self.library, symbol)

    def global_array(self, name: str, ctype, length: int):
        return self.library.global_array(name, ctype, length)


class _Pool:
    def free_all_blocks(self) -> None:
        pass


def _runtime() -> types.SimpleNamespace:
    def memcpy(dst, src, size, kind):
        ctypes.memmove(dst, src, size)

    return types.SimpleNamespace(
        memcpyHostToDevice=1, memcpyDeviceToHost=2, memcpyDeviceToDevice=3,
        memsetAsync=lambda ptr, value, size, stream: None,
        memcpyAsync=lambda dst, src, size, kind, stream: None,
        memcpy=memcpy,
        deviceSynchronize=lambda: None,
        getDeviceProperties=lambda device: {"name": b"CPU stand-in", "l2CacheSize": 60 << 20,
                                            "multiProcessorCount": 1},
        driverGetVersion=lambda: 13000, runtimeGetVersion=lambda: 13000)


class FakeCupy(types.ModuleType):
    """Numpy under cupy's name, with the cupy.cuda parts the benchmark uses."""

    def __init__(self) -> None:
        super().__init__("cupy")
        self.__version__ = "cpu stand-in"
        device = types.SimpleNamespace(use=lambda: None, compute_capability="90", synchronize=lambda: None, id=0)
        self.cuda = types.SimpleNamespace(
            Device=lambda index=0: device, Stream=_Stream, Event=_Event, runtime=_runtime(),
            get_elapsed_time=lambda start, end: (end.t - start.t) * 1e3,
            alloc_pinned_memory=lambda n: np.zeros(n, dtype=np.uint8).view(_Pinned))
        self.RawModule = lambda path=None, **kwargs: _Module(path)
        self.get_default_memory_pool = _Pool
        self.get_default_pinned_memory_pool = _Pool

    def __getattr__(self, name: str):
        return getattr(np, name)


def install(monkeypatch, workdir: Path) -> FakeCupy:
    """Put the stand-in where `import cupy` finds it, and make `rs2gpu.load(..., backend="cuda")` load the
    CPU backend."""
    import rs2gpu

    fake = FakeCupy()
    if _Module.workdir is None:   # the compiled baselines are kept while the tests run
        _Module.workdir = workdir
    monkeypatch.setitem(sys.modules, "cupy", fake)
    real_load = rs2gpu.load
    monkeypatch.setattr(rs2gpu, "load", lambda path, backend="auto", *a, **k: real_load(path, "cpu"))
    return fake
