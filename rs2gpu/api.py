"""The Python API: `rs2gpu.load(path)` gives a module whose attributes are the crate's kernels.

    k = rs2gpu.load("examples/rajaperf")          # backend="auto": cuda if a GPU is usable, else cpu
    k.triad(a, b, c, 2.0)                         # numpy, cupy or torch arrays; Python scalars
    k.dot(a, b)                                   # returns what the Rust function returns
    k.axpy(y32, x32, 2.0)                         # a generic kernel: the instantiation the dtypes ask for

Calls check their arguments against the Rust signature (TypeError/ValueError naming the parameter),
refuse aliasing `&mut` arguments (AliasError) before any device work, move data as the transfer plan
says, and write results back into the `&mut` host arrays.
"""
from __future__ import annotations

from pathlib import Path

from rs2gpu import config, pipeline, support_crate_path
from rs2gpu.ir.abi import CrateABI
from rs2gpu.runtime.cache import BinaryCache
from rs2gpu.runtime.dispatch import group_instances
from rs2gpu.runtime.errors import ToolchainUnavailable

BACKENDS = ("cuda", "hip", "cpu")


class KernelModule:
    """The kernels of one crate on one backend, as attributes."""

    def __init__(self, backend: str, kernels: dict, crate: CrateABI, sources: dict[str, str]) -> None:
        self.backend = backend
        self.abi = crate
        self.sources = sources  # generated file name → C++ text (GPU backends)
        # a generic kernel under its Rust name, choosing among its instantiations (also there by their names)
        self._kernels = {**kernels, **group_instances(kernels, crate)}
        for name, kernel in self._kernels.items():
            setattr(self, name, kernel)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._kernels))

    def __getattr__(self, name: str):
        raise AttributeError(f"no kernel named `{name}`; kernels: {', '.join(sorted(self._kernels)) or 'none'}")

    @property
    def kernels(self) -> dict:
        return dict(self._kernels)

    def synchronize(self) -> None:
        """Wait for every launch of this module; raise LaunchError if one failed."""
        backend = self.__dict__.get("device_backend")
        if backend is not None:
            backend.synchronize()


def load(path, backend: str = "auto", device: int = 0) -> KernelModule:
    """Translate the kernels under `path` (a .rs file, a crate's src/, or a crate folder) and prepare
    them to run on `backend`: "cuda", "hip", "cpu" (the Rust itself, built by rustc), or "auto"."""
    path = Path(path)
    if backend == "auto":
        backend = config.default_backend() or _first_usable(device)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)} or 'auto'")
    targets = ("cuda",) if backend == "cuda" else ("hip",) if backend == "hip" else ("cuda",)
    translation = pipeline.translate(path, targets)
    emitted = translation.emitted
    cache_dir = config.cache_dir()
    if backend == "cpu":
        return _load_cpu(path, translation, cache_dir)
    binaries = BinaryCache(cache_dir / "kernels" if cache_dir else None)
    if backend == "cuda":
        from rs2gpu.runtime.cuda import CudaBackend

        device_backend = CudaBackend(binaries, device)
    else:
        from rs2gpu.runtime.hip import HipBackend

        device_backend = HipBackend(binaries, device)
    from rs2gpu.runtime.base import DeviceKernel

    kernels = {}
    for name, entry in emitted.abi.kernels.items():
        file_name = entry.files[backend]
        kernels[name] = DeviceKernel(device_backend, name, entry, emitted.files[file_name], file_name)
    module = KernelModule(backend, kernels, emitted.abi, emitted.files)
    module.device_backend = device_backend
    return module


def _load_cpu(path: Path, translation, cache_dir: Path | None) -> KernelModule:
    import ctypes
    import tempfile

    from rs2gpu.frontend.source import crate_location
    from rs2gpu.runtime.cpu import CpuKernel, CpuLibrary

    root, package, single_file = crate_location(path)
    library = CpuLibrary(root, package, single_file, translation.crate.sources, translation.emitted.abi,
                         cache_dir or Path(tempfile.mkdtemp(prefix="rs2gpu-cpu-")), support_crate_path())
    handle = ctypes.CDLL(str(library.build()))
    source_root = root if root is not None else single_file.parent
    kernels = {name: CpuKernel(handle, name, entry, source_root)
               for name, entry in translation.emitted.abi.kernels.items()}
    module = KernelModule("cpu", kernels, translation.emitted.abi, {})
    module.library_path = library.path
    return module


def _first_usable(device: int) -> str:
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > device:
            return "cuda"
    except Exception:  # no cupy, no driver, or no device: fall through to the next backend
        pass
    return "cpu"


__all__ = ["load", "KernelModule", "ToolchainUnavailable"]
