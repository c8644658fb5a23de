"""Where a module of kernels comes from, so that another process (a Dask worker) can load the same ones."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelSource:
    """The path `rs2gpu.load` was given (absolute), the backend and the device."""

    path: str
    backend: str
    device: int
