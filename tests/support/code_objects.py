"""HIP code objects of generated files, each compiled once per test session, in a disk cache of the HIP
backend's kind: tests/emit/test_compile_all.py checks every generated file's entry points and
tests/hip/test_hip_compile_corpus.py the corpus kernels' metadata, of the same compiles. The tests of one
compiler share an `xdist_group`, so that under pytest-xdist they run in one process, one after the other,
while the other compiler's run in another."""
from __future__ import annotations

from pathlib import Path

import pytest

from rs2gpu.runtime.cache import BinaryCache, cache_key
from rs2gpu.runtime.hipclang import compile_hip_clang
from rs2gpu.runtime.hiprtc import cached_compile_hip

HIPRTC_GROUP = "hiprtc-code-objects"
CLANG_GROUP = "clang-code-objects"
# The idiomatic corpus (examples/corpus) is there for the kernel language: the default run translates each of
# its kernels, compiles it with g++ and runs it on the emulated device against rustc, while the prelude's
# code under the vendor compilers is covered by the other sources (tests/cases use every prelude helper).
# Its vendor compiles, one per kernel and compiler, run in the `slow` tier to keep the default run short.
IDIOMATIC_CORPUS = Path(__file__).resolve().parents[2] / "examples" / "corpus"
# The half types' methods, conversions and constants: the default run compiles their operators' file with the
# vendors' compilers (the same prelude code), and runs this one with g++.
HALF_METHODS = Path(__file__).resolve().parents[2] / "tests" / "half" / "kernels" / "methods.rs"
# clang compiles for RDNA (gfx1030, wave32) in the default run: the wave32 path, which hiprtc's gfx90a compiles
# do not take. Its gfx90a compiles repeat hiprtc's arch through the same LLVM backend: the `slow` tier.
CLANG_ARCHS = [pytest.param("gfx90a", marks=pytest.mark.slow, id="gfx90a"), "gfx1030"]


def vendor_compile_marks(source: Path) -> list:
    """The marks of a vendor compile test of a file translated from `source`."""
    return [pytest.mark.slow] if source in (IDIOMATIC_CORPUS, HALF_METHODS) else []


class CodeObjects:
    def __init__(self, folder: Path) -> None:
        self._cache = BinaryCache(folder)

    def hiprtc(self, text: str, name: str, arch: str, fast_math: bool = False) -> bytes:
        """The code object hiprtc makes of `text`, through the disk cache, as the HIP backend gets it."""
        return cached_compile_hip(self._cache, text, name, arch, fast_math)[0]

    def clang(self, text: str, name: str, arch: str, fast_math: bool = False) -> bytes:
        """The code object clang makes of `text`."""
        key = cache_key("clang", text, arch, repr(fast_math))
        binary = self._cache.get(key)
        if binary is None:
            binary = compile_hip_clang(text, name, arch, fast_math=fast_math).binary
            self._cache.put(key, binary)
        return binary
