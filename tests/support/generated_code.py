"""Generated code in the emit tests: a source file translated, the entry points of a generated file with
their C++ parameters, and the PTX NVRTC makes of each entry point of a kernel's CUDA file."""
from __future__ import annotations

import re
from pathlib import Path

from rs2gpu import pipeline
from rs2gpu.runtime.nvrtc import compile_cuda

CXX_ENTRY = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+(?:, \w+\(\d+\))?\) (\w+)\((.*)\) \{$', re.M)
PTX_ENTRY = re.compile(r"\.visible \.entry (\w+)\((.*?)^\}", re.S | re.M)


def translate_source(folder: Path, name: str, source: str) -> pipeline.Translation:
    """The translation of `source`, written to `folder`/`name`.rs."""
    path = folder / f"{name}.rs"
    path.write_text(source)
    return pipeline.translate(path)


def entry_points(cxx: str) -> dict[str, list[str]]:
    """Each `extern "C" __global__` entry point of a file, with its C++ parameters."""
    return {m.group(1): _split_parameters(m.group(2)) for m in CXX_ENTRY.finditer(cxx)}


def _split_parameters(text: str) -> list[str]:
    """A parameter list split at its top-level commas (not those of `rs2gpu_array<f64, 16>`)."""
    params, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            params.append(text[start:k].strip())
            start = k + 1
    return params + [text[start:].strip()]


def ptx_entries(translation, kernel: str, arch: str = "compute_90") -> dict[str, str]:
    """The PTX of each entry point of `kernel`'s CUDA file (for `arch`), by symbol: its parameters and body."""
    ptx = compile_cuda(translation.emitted.files[f"{kernel}.cu"], f"{kernel}.cu", arch).binary
    return dict(PTX_ENTRY.findall(ptx.decode(errors="replace")))
