import pytest

from rs2gpu.runtime import hiprtc_child
from rs2gpu.runtime.errors import GpuCompileError
from rs2gpu.runtime.hipclang import code_object_symbols
from rs2gpu.runtime.hiprtc import compile_hip, hiprtc_version


def test_hiprtc_version_is_a_pair_of_ints():
    major, minor = hiprtc_version()
    assert isinstance(major, int) and isinstance(minor, int)


def test_gfx90a_compiles_to_a_code_object(hiprtc_triad):
    assert hiprtc_triad.binary.startswith(b"\x7fELF")


def test_code_object_has_the_kernel_symbol(hiprtc_triad):
    assert code_object_symbols(hiprtc_triad.binary) == ["rs2gpu_triad"]


def test_compiler_version_names_the_library(hiprtc_triad):
    assert hiprtc_triad.compiler_version.startswith("hiprtc ") and ".so" in hiprtc_triad.compiler_version


def test_crash_on_unknown_arch_becomes_a_compile_error(triad_source):
    # ROCm 5.2's hiprtc aborts its process on gfx9999; only the child process may die.
    with pytest.raises(GpuCompileError, match="gfx9999"):
        compile_hip(triad_source, "triad.hip.cpp", "gfx9999")


def test_malformed_arch_is_rejected_before_compiling(triad_source):
    with pytest.raises(ValueError, match="invalid AMD GPU arch"):
        compile_hip(triad_source, "triad.hip.cpp", "sm_90")


def test_missing_library_is_reported_with_what_to_install(monkeypatch):
    monkeypatch.setattr(hiprtc_child, "LIBRARY_NAMES", ("libhiprtc-no-such-library.so",))
    with pytest.raises(hiprtc_child.LibraryNotFound, match="apt-get install libamdhip64-dev"):
        hiprtc_child.load_library()
