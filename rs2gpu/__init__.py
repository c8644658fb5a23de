"""rs2gpu: run plain, safe Rust kernels on NVIDIA and AMD GPUs.

    rs2gpu translate src/ -o out/      # CUDA + HIP C++ and a manifest for each #[kernel]
    rs2gpu check src/                  # diagnostics only

From Python, `rs2gpu.pipeline.translate(path)` gives the crate, the checked kernels and the
generated text.
"""
from importlib.metadata import PackageNotFoundError, version as _version
from pathlib import Path

try:
    __version__ = _version("rs2gpu")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from rs2gpu.ir.diagnostics import CompileFailed  # noqa: E402


def support_crate_path() -> Path:
    """Where the `rs2gpu` Rust support crate (the `#[kernel]` attribute) is installed."""
    return Path(__file__).resolve().parent / "support"


__all__ = ["CompileFailed", "__version__", "support_crate_path"]


def load(path, backend: str = "auto", device: int = 0):
    """Translate the kernels under `path` and return a module of callable kernels; see `rs2gpu.api.load`."""
    from rs2gpu.api import load as _load

    return _load(path, backend, device)


from rs2gpu.runtime.errors import AliasError, KernelPanic, LaunchError, RaceError  # noqa: E402
from rs2gpu.runtime.indexlist import IndexList  # noqa: E402

__all__ += ["load", "AliasError", "IndexList", "KernelPanic", "LaunchError", "RaceError"]
