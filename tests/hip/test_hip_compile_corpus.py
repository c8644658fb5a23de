"""Every kernel of the corpus (the example crates and tests/cases/*.rs) compiles for AMD GPUs on the path
the HIP backend takes (hiprtc, through the disk cache) and with clang, for CDNA (gfx90a, wave64) and RDNA
(gfx1030, wave32). Each code object holds exactly the entry points the manifest launches, each entry
point's metadata says the wave size the arch runs it with, and its kernel arguments are the ones the
launch plan packs, in number and size."""
from __future__ import annotations

import pytest

from rs2gpu.runtime.cache import BinaryCache
from rs2gpu.runtime.callplan import CallPlan, launch_symbols
from rs2gpu.runtime.hipclang import code_object_symbols, compile_hip_clang
from rs2gpu.runtime.hiprtc import cached_compile_hip
from rs2gpu.runtime.resources import code_object_metadata

WAVE_SIZE = {"gfx90a": 64, "gfx1030": 32}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> BinaryCache:
    return BinaryCache(tmp_path_factory.mktemp("hip-kernels"))


def check_code_object(binary: bytes, entry: dict, name: str, arch: str) -> None:
    launches = {symbol: launch for launch in entry["launches"] for symbol in launch_symbols(launch)}
    assert sorted(code_object_symbols(binary)) == sorted(launches)
    metadata = code_object_metadata(binary)
    assert metadata["amdhsa.target"].endswith(f"--{arch}")
    plan = CallPlan(name, entry)
    for kernel in metadata["amdhsa.kernels"]:
        assert kernel[".wavefront_size"] == WAVE_SIZE[arch], kernel[".name"]
        assert kernel[".vgpr_count"] > 0 and kernel[".sgpr_count"] > 0
        launch_plan = next(lp for lp in plan.launches if lp.symbol == launches[kernel[".name"]]["symbol"])
        explicit = [arg for arg in kernel[".args"] if not arg[".value_kind"].startswith("hidden_")]
        # hipModuleLaunchKernel copies args[i]'s size bytes from pointers[i]: one pointer per argument,
        # each pointing at a value of exactly the argument's size.
        assert [arg[".size"] for arg in explicit] == [field[3] for field in launch_plan.fields], kernel[".name"]
        assert len(launch_plan.pointers) == len(explicit)


def test_kernel_compiles_with_hiprtc_for_gfx90a(kernel_source, cache: BinaryCache) -> None:
    name, entry, text = kernel_source
    binary, _ = cached_compile_hip(cache, text, entry["files"]["hip"], "gfx90a", entry["fast_math"])
    check_code_object(binary, entry, name, "gfx90a")


@pytest.mark.parametrize("arch", sorted(WAVE_SIZE))
def test_kernel_compiles_with_clang(kernel_source, arch: str) -> None:
    name, entry, text = kernel_source
    compiled = compile_hip_clang(text, entry["files"]["hip"], arch, fast_math=entry["fast_math"])
    check_code_object(compiled.binary, entry, name, arch)
