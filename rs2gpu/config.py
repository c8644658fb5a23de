"""Every environment setting rs2gpu reads, in one place.

RS2GPU_CACHE_DIR   where compiled kernels (cubins, code objects, CPU libraries) and translations
                   (`rs2gpu translate`'s, in translations/) are kept between processes; default:
                   $XDG_CACHE_HOME/rs2gpu or ~/.cache/rs2gpu. Set it to "off" to disable the disk cache.
RS2GPU_BACKEND     the backend `rs2gpu.load(..., backend="auto")` picks: cuda, hip or cpu.
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path | None:
    value = os.environ.get("RS2GPU_CACHE_DIR")
    if value == "off":
        return None
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rs2gpu"


def default_backend() -> str | None:
    return os.environ.get("RS2GPU_BACKEND") or None
