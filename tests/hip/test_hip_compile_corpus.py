"""Every kernel of the corpus (the example crates and tests/cases/*.rs) compiles for AMD GPUs on the path
the HIP backend takes (hiprtc for CDNA, gfx90a, wave64, through the disk cache) and with clang, for RDNA
(gfx1030, wave32) and, in the `slow` tier, CDNA. Each code object holds exactly the entry points the ABI lists, each entry
point's metadata says the wave size the arch runs it with, and its kernel arguments are the ones the
launch plan packs, in number and size."""
from __future__ import annotations

import pytest

from rs2gpu.ir.abi import KernelABI
from rs2gpu.runtime.callplan import CallPlan
from rs2gpu.runtime.hipclang import code_object_symbols
from rs2gpu.runtime.resources import code_object_metadata

from tests.support.code_objects import CLANG_ARCHS, CLANG_GROUP, HIPRTC_GROUP

WAVE_SIZE = {"gfx90a": 64, "gfx1030": 32}


def check_code_object(binary: bytes, entry: KernelABI, name: str, arch: str) -> None:
    plan = CallPlan(name, entry)
    # every entry point, with the argument buffer its launches pack: a launch's entry points share the
    # loop's, and its index-list verification has its own
    layouts = {e.symbol: lp for lp in plan.launches for e in lp.entry_points}
    layouts.update({lp.verify.symbol: lp.verify for lp in plan.launches if lp.verify})
    assert sorted(code_object_symbols(binary)) == sorted(layouts)
    metadata = code_object_metadata(binary)
    assert metadata["amdhsa.target"].endswith(f"--{arch}")
    for kernel in metadata["amdhsa.kernels"]:
        assert kernel[".wavefront_size"] == WAVE_SIZE[arch], kernel[".name"]
        assert kernel[".vgpr_count"] > 0 and kernel[".sgpr_count"] > 0
        layout = layouts[kernel[".name"]]
        explicit = [arg for arg in kernel[".args"] if not arg[".value_kind"].startswith("hidden_")]
        # hipModuleLaunchKernel copies args[i]'s size bytes from pointers[i]: one pointer per argument,
        # each pointing at a value of exactly the argument's size.
        assert [arg[".size"] for arg in explicit] == [field[3] for field in layout.fields], kernel[".name"]
        assert len(layout.pointers) == len(explicit)


@pytest.mark.xdist_group(HIPRTC_GROUP)
def test_kernel_compiles_with_hiprtc_for_gfx90a(kernel_source, code_objects) -> None:
    name, entry, text = kernel_source
    check_code_object(code_objects.hiprtc(text, entry.files["hip"], "gfx90a", entry.fast_math), entry, name, "gfx90a")


@pytest.mark.xdist_group(CLANG_GROUP)
@pytest.mark.parametrize("arch", CLANG_ARCHS)
def test_kernel_compiles_with_clang(kernel_source, arch: str, code_objects) -> None:
    name, entry, text = kernel_source
    check_code_object(code_objects.clang(text, entry.files["hip"], arch, entry.fast_math), entry, name, arch)
