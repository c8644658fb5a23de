"""The Python API: `rs2gpu.load(path)` gives a module whose attributes are the crate's kernels.

    k = rs2gpu.load("examples/rajaperf")          # backend="auto": cuda if a GPU is usable, else cpu
    k.triad(a, b, c, 2.0)                         # numpy, cupy or torch arrays; Python scalars
    k.dot(a, b)                                   # returns what the Rust function returns
    k.axpy(y32, x32, 2.0)                         # a generic kernel: the instantiation the dtypes ask for

Every backend keeps one call contract (docs/call-contract.md): calls check their arguments against the
Rust signature (TypeError/ValueError naming the parameter), refuse aliasing `&mut` arguments
(AliasError), make the same host checks before any kernel code runs (RaceError, KernelPanic), move data
as the transfer plan says, and write results back into the `&mut` host arrays only when the call
succeeds. A generic kernel without `types(...)` is instantiated at the first call that names its types.
"""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Callable

from rs2gpu import config, pipeline, support_crate_path
from rs2gpu.frontend.generics import GenericSignature, admits, open_generics
from rs2gpu.frontend.source import crate_location
from rs2gpu.ir.abi import CrateABI, GenericInstance
from rs2gpu.runtime.cache import BinaryCache
from rs2gpu.runtime.origin import KernelSource
from rs2gpu.runtime.dispatch import LazyGeneric, group_instances
from rs2gpu.runtime.errors import ToolchainUnavailable

BACKENDS = ("cuda", "hip", "cpu")


class KernelModule:
    """The kernels of one crate on one backend, as attributes."""

    def __init__(self, backend: str, kernels: dict, crate: CrateABI, sources: dict[str, str],
                 generics: dict[str, LazyGeneric] | None = None) -> None:
        self.backend = backend
        self.abi = crate
        self.sources = sources  # generated file name → C++ text (GPU backends)
        # a generic kernel under its Rust name, choosing among its instantiations (also there by their names),
        # or making them where the kernel lists none
        self._kernels = {**kernels, **group_instances(kernels, crate), **(generics or {})}
        for name, kernel in self._kernels.items():
            setattr(self, name, kernel)
            kernel.module = self

    def __repr__(self) -> str:
        return f"<rs2gpu kernels of `{self.abi.crate}` on the {self.backend} backend: {', '.join(sorted(self._kernels))}>"

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
    """Translate the kernels under `path` (a .rs file, a crate folder, or its src/ folder) and prepare
    them to run on `backend`: "cuda", "hip", "cpu" (the Rust itself, built by rustc), or "auto" (cuda
    where a CUDA device is usable, else cpu, with a warning that says why)."""
    path = _checked_path(path)
    if backend == "auto":
        backend = config.default_backend() or _auto_backend(device)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)} or 'auto'")
    targets = ("hip",) if backend == "hip" else ("cuda",)
    translation = pipeline.translate(path, targets)
    maker = _CpuKernels(path) if backend == "cpu" else _DeviceKernels(backend, device)
    kernels = maker.make(translation, list(translation.emitted.abi.kernels))
    generics = lazy_generics(translation, path, targets, maker.make)
    module = KernelModule(backend, kernels, translation.emitted.abi,
                          translation.emitted.files if backend != "cpu" else {}, generics)
    if backend == "cpu":
        module.library_path = maker.library_paths[0] if maker.library_paths else None
    else:
        module.device_backend = maker.device_backend
    # what rs2gpu.dask needs: the checker's facts to plan chunks, and where a worker loads the same kernels
    module.checked = translation.checked
    module.origin = KernelSource(str(path.resolve()), backend, device)
    return module


def _checked_path(path) -> Path:
    """`path` if it names kernels `load` can build on every backend, in the words of the command line
    where it does not: a .rs file, or a folder with .rs files inside a crate (with a Cargo.toml)."""
    given = Path(path)
    if not given.exists():
        raise FileNotFoundError(f"no such file or directory: {path}")
    if given.is_file():
        if given.suffix != ".rs":
            raise ValueError(f"{path} is not a .rs file")
        return given
    if not any(given.rglob("*.rs")):
        raise ValueError(f"no .rs files under {path}")
    if crate_location(given)[0] is None:
        raise ValueError(f"{path} has no Cargo.toml: name a crate's folder (or its src/), or one .rs file; the cpu "
                         f"backend builds the kernels with cargo, so every backend takes the same paths")
    return given


class _CpuKernels:
    """Makes kernels of a crate's translations on the cpu backend: one library per call of `make` (the
    crate's kernels at load, then each instantiation made for a call on its own)."""

    def __init__(self, path: Path) -> None:
        self.root, self.package, self.single_file = crate_location(path)
        self.cache_dir = config.cache_dir()
        self.library_paths: list[Path] = []

    def make(self, translation: pipeline.Translation, names: list[str]) -> dict:
        import ctypes
        import tempfile

        from rs2gpu.runtime.cpu import CpuKernel, CpuLibrary

        if not names:
            return {}
        if self.cache_dir is None:  # the disk cache is off: a folder of this process's own
            self.cache_dir = Path(tempfile.mkdtemp(prefix="rs2gpu-cpu-"))
        abi = translation.emitted.abi
        chosen = dataclasses.replace(abi, kernels={name: abi.kernels[name] for name in names})
        library = CpuLibrary(self.root, self.package, self.single_file, translation.crate.sources, chosen,
                             self.cache_dir, support_crate_path())
        handle = ctypes.CDLL(str(library.build()))
        self.library_paths.append(library.path)
        source_root = self.root if self.root is not None else self.single_file.parent
        return {name: CpuKernel(handle, name, abi.kernels[name], source_root) for name in names}


class _DeviceKernels:
    """Makes kernels of a crate's translations on a GPU backend, compiled through the disk cache."""

    def __init__(self, backend: str, device: int) -> None:
        cache_dir = config.cache_dir()
        binaries = BinaryCache(cache_dir / "kernels" if cache_dir else None)
        if backend == "cuda":
            from rs2gpu.runtime.cuda import CudaBackend

            self.device_backend = CudaBackend(binaries, device)
        else:
            from rs2gpu.runtime.hip import HipBackend

            self.device_backend = HipBackend(binaries, device)
        self.backend = backend

    def make(self, translation: pipeline.Translation, names: list[str]) -> dict:
        from rs2gpu.runtime.base import DeviceKernel

        emitted = translation.emitted
        kernels = {}
        for name in names:
            entry = emitted.abi.kernels[name]
            file_name = entry.files[self.backend]
            kernels[name] = DeviceKernel(self.device_backend, name, entry, emitted.files[file_name], file_name)
        return kernels


def lazy_generics(translation: pipeline.Translation, path: Path, targets: tuple[str, ...],
                  make: Callable[[pipeline.Translation, list[str]], dict]) -> dict[str, LazyGeneric]:
    """The generic kernels without `types(...)` of `translation` (of the kernels under `path`, for
    `targets`), by name: each call that names new types translates the crate again with that
    instantiation, and `make(translation, names)` gives the kernels of the named entries of its ABI on
    the backend."""
    structs = _struct_dtypes(translation)
    return {signature.name: _lazy_generic(signature, path, targets, make, structs)
            for signature in open_generics(translation.crate)}


def _lazy_generic(signature: GenericSignature, path: Path, targets: tuple[str, ...], make, structs: dict) -> LazyGeneric:
    def instantiate(type_args: tuple[str, ...]):
        translation = pipeline.translate(path, targets, {signature.name: [type_args]})
        wanted = GenericInstance(signature.name, type_args)
        name = next(key for key, entry in translation.emitted.abi.kernels.items() if entry.generic == wanted)
        return make(translation, [name])[name]

    def unmet(param: str, type_name: str, is_struct: bool) -> str | None:
        return admits(signature.bounds[param], type_name, is_struct)

    return LazyGeneric(signature.name, signature.type_params, signature.params, unmet, instantiate, structs)


def _struct_dtypes(translation: pipeline.Translation) -> dict:
    """The numpy dtype of each #[repr(C)] struct the crate's kernels use, by name."""
    from rs2gpu.emit.abi import layout
    from rs2gpu.runtime.arguments import numpy_dtype

    return {struct.ty.name: numpy_dtype(layout(struct.ty)) for struct in translation.crate.structs}


def _auto_backend(device: int) -> str:
    """cuda where cupy reaches CUDA device `device`; else cpu, with a warning that says why."""
    try:
        import cupy
    except ImportError:
        reason = "cupy is not installed (pip install 'rs2gpu[cuda]' on a machine with an NVIDIA GPU)"
    else:
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # no driver, or a driver too old for this cupy: cupy says which
            reason = f"cupy finds no usable CUDA device ({type(e).__name__}: {e})"
        else:
            if count > device:
                return "cuda"
            reason = f"cupy finds {count} CUDA device(s), so there is no device {device}"
    warnings.warn(f"rs2gpu.load(backend='auto') runs the kernels on the cpu backend (the Rust code, built by "
                  f"rustc): {reason}. Pass backend='cpu' (or set RS2GPU_BACKEND=cpu) to choose it without this "
                  f"warning.", RuntimeWarning, stacklevel=4)
    return "cpu"


__all__ = ["load", "lazy_generics", "KernelModule", "ToolchainUnavailable"]
