import struct

import pytest

from rs2gpu.runtime.elf import elf_symbols
from rs2gpu.runtime.hipclang import code_object_symbols
from rs2gpu.runtime.nvrtc import cubin_symbols
from rs2gpu.runtime.offload_bundle import MAGIC, unbundle


def test_elf_symbols_reject_other_data():
    with pytest.raises(ValueError, match="not an ELF file"):
        elf_symbols(b"PK\x03\x04 not an ELF file at all, but long enough for a header")


def test_cubin_symbols_reject_an_amd_code_object(hiprtc_triad):
    with pytest.raises(ValueError, match="not a cubin"):
        cubin_symbols(hiprtc_triad.binary)


def test_code_object_symbols_reject_a_cubin(nvrtc_triad):
    with pytest.raises(ValueError, match="not an AMDGPU code object"):
        code_object_symbols(nvrtc_triad.binary)


def test_unbundle_maps_triples_to_entries():
    header_size = len(MAGIC) + 8 + 24 + len(b"hipv4-amdgcn-amd-amdhsa--gfx90a")
    bundle = MAGIC + struct.pack("<QQQQ", 1, header_size, 4, 31) + b"hipv4-amdgcn-amd-amdhsa--gfx90a" + b"CODE"
    assert unbundle(bundle) == {"hipv4-amdgcn-amd-amdhsa--gfx90a": b"CODE"}


def test_unbundle_rejects_a_truncated_bundle():
    with pytest.raises(ValueError, match="truncated"):
        unbundle(MAGIC + struct.pack("<QQ", 1, 0))
