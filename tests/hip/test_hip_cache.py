"""The HIP backend's compiles go through the disk cache like the CUDA backend's: keyed by the source,
the options and the hiprtc library, so a second compile (in this process or another) finds the code
object without running hiprtc, which needs no GPU either way."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rs2gpu.runtime import hiprtc
from rs2gpu.runtime.cache import BinaryCache
from rs2gpu.runtime.hipclang import code_object_symbols
from rs2gpu.runtime.hiprtc import cached_compile_hip, hip_cache_key

SOURCE = """\
typedef double f64;
extern "C" __global__ void rs2gpu_scale(f64* __restrict__ a, f64 s) { a[threadIdx.x] *= s; }
"""


def no_hiprtc(*args, **kwargs):
    raise AssertionError("hiprtc ran although the code object was in the cache")


def test_second_compile_is_a_cache_hit(tmp_path: Path, monkeypatch) -> None:
    cache = BinaryCache(tmp_path)
    first, compiled = cached_compile_hip(cache, SOURCE, "scale.hip.cpp", "gfx90a")
    assert compiled and code_object_symbols(first) == ["rs2gpu_scale"]
    monkeypatch.setattr(hiprtc, "compile_hip", no_hiprtc)
    second, compiled = cached_compile_hip(BinaryCache(tmp_path), SOURCE, "scale.hip.cpp", "gfx90a")
    assert second == first and not compiled


@pytest.mark.parametrize(("arch", "fast_math", "source"), [
    ("gfx1030", False, SOURCE), ("gfx90a", True, SOURCE), ("gfx90a", False, SOURCE + "\n"),
    ("gfx90a:xnack-", False, SOURCE)])
def test_key_depends_on_source_arch_and_fast_math(arch: str, fast_math: bool, source: str) -> None:
    assert hip_cache_key(source, arch, fast_math) != hip_cache_key(SOURCE, "gfx90a", False)


def test_key_names_the_hiprtc_library_file(monkeypatch) -> None:
    # hiprtcVersion() is 9.0 for every ROCm 5 release: the library's versioned file tells them apart.
    before = hip_cache_key(SOURCE, "gfx90a", False)
    monkeypatch.setattr(hiprtc, "hiprtc_library", lambda: "/opt/rocm/lib/libamdhip64.so.5.7.31921")
    assert hip_cache_key(SOURCE, "gfx90a", False) != before


def test_another_process_finds_the_code_object(tmp_path: Path) -> None:
    binary, _ = cached_compile_hip(BinaryCache(tmp_path), SOURCE, "scale.hip.cpp", "gfx90a")
    script = (
        "import sys\n"
        "from rs2gpu.runtime import hiprtc\n"
        "from rs2gpu.runtime.cache import BinaryCache\n"
        "def fail(*a, **k): raise SystemExit('hiprtc ran')\n"
        "hiprtc.compile_hip = fail\n"
        f"binary, compiled = hiprtc.cached_compile_hip(BinaryCache(sys.argv[1]), {SOURCE!r}, 'scale.hip.cpp',"
        " 'gfx90a')\n"
        "sys.stdout.buffer.write(binary)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == binary


def test_backend_compile_uses_the_cache(tmp_path: Path) -> None:
    from rs2gpu.runtime.hip import HipBackend

    backend = HipBackend.__new__(HipBackend)  # compile needs no device: only the cache and the arch
    backend.cache, backend.arch, backend.compiles = BinaryCache(tmp_path), "gfx90a", 0
    first = backend.compile(SOURCE, "scale.hip.cpp", False)
    second = backend.compile(SOURCE, "scale.hip.cpp", False)
    assert first == second and backend.compiles == 1
