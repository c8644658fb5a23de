"""The HIP backend's launch path with the real hip-python, up to the calls that need an AMD GPU.

There is no GPU here, so every call that needs one must fail with HIP's own status (no device, invalid
device or invalid handle), which proves that hip-python accepted the argument types the backend passes;
a Python TypeError would mean that the first launch on a real GPU fails too. What happens before those
calls (argument binding, staging, packing) runs for real, with host memory standing in for device memory.
"""
from __future__ import annotations

import ctypes
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rs2gpu import pipeline
from rs2gpu.ir.abi import EntryKind
from rs2gpu.runtime import hip as hipmod
from rs2gpu.runtime.base import DeviceKernel
from rs2gpu.runtime.cache import BinaryCache
from rs2gpu.runtime.errors import LaunchError, ToolchainUnavailable
from rs2gpu.runtime.hip import DeviceMemory, HipBackend, HipError, HipQueue, hip_python
from rs2gpu.runtime.hipclang import find_toolchain
from rs2gpu.runtime.readback import PANIC_RECORD_BYTES
from rs2gpu.runtime.resources import code_object_metadata

# What HIP answers on a machine without a usable AMD GPU: ROCm 5 says invalid device for most calls and
# no device for hipGetDeviceCount; a null handle may be reported as invalid first.
NO_DEVICE = {"hipErrorNoDevice", "hipErrorInvalidDevice", "hipErrorInvalidHandle", "hipErrorInvalidResourceHandle",
             "hipErrorNotInitialized", "hipErrorInvalidContext"}


def status_name(error: HipError) -> str:
    return error.status.name


@pytest.fixture(scope="module")
def hip():
    return hip_python()


# ---------------------------------------------------------------- loading hip-python and the HIP libraries


def test_hip_python_loads_the_installed_runtime(hip) -> None:
    status, version = hip.hipRuntimeGetVersion()
    assert not status and version > 0


def test_hiprtc_is_callable_through_hip_python(hip) -> None:
    # ROCm 5 has no libhiprtc.so: hip_python() points hip-python's hiprtc binding at libamdhip64.
    from hip import hiprtc

    status, major, minor = hiprtc.hiprtcVersion()
    assert not status and major >= 9


def test_without_a_gpu_there_are_no_devices() -> None:
    assert hipmod.device_count() == 0


def test_backend_without_a_device_is_unavailable_naming_hips_status(tmp_path: Path) -> None:
    with pytest.raises(ToolchainUnavailable, match=r"no usable HIP device 0 \((hipErrorNoDevice|0 devices found)"):
        HipBackend(BinaryCache(tmp_path))


def test_missing_runtime_library_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setattr(hipmod, "RUNTIME_LIBRARIES", ("libamdhip64-no-such-library.so",))
    hipmod.runtime_library.cache_clear()
    try:
        with pytest.raises(ToolchainUnavailable, match="libamdhip64-dev"):
            hipmod.runtime_library()
    finally:
        hipmod.runtime_library.cache_clear()


# ---------------------------------------------------------------- every call checked, errors named


def test_launch_with_a_null_function_is_hips_error_not_a_type_error(hip) -> None:
    params = (ctypes.c_void_p * 2)()
    with pytest.raises(HipError) as caught:
        HipQueue(hip).launch(None, (1, 1, 1), (256, 1, 1), ctypes.addressof(params))
    assert status_name(caught.value) in NO_DEVICE
    assert str(caught.value).startswith("hipModuleLaunchKernel failed: hipError")


@pytest.mark.parametrize("call", ["hipMalloc", "hipHostMalloc", "hipEventCreateWithFlags", "hipStreamSynchronize",
                                  "hipMemsetAsync", "hipDeviceGetAttribute"])
def test_each_call_that_needs_a_device_raises_naming_itself(hip, call: str) -> None:
    queue = HipQueue(hip)
    host = np.zeros(16, dtype=np.uint8)
    backend = HipBackend.__new__(HipBackend)  # just enough of a backend for the attribute query
    backend.hip, backend.device = hip, 0
    actions = {"hipMalloc": lambda: DeviceMemory(hip, 64), "hipHostMalloc": lambda: queue.pinned(64),
               "hipEventCreateWithFlags": queue.new_event, "hipStreamSynchronize": queue.synchronize,
               "hipMemsetAsync": lambda: queue.zero(host.ctypes.data, host.nbytes),
               "hipDeviceGetAttribute": backend.multiprocessors}
    with pytest.raises(HipError, match=f"^{call} failed: hipError") as caught:
        actions[call]()
    assert status_name(caught.value) in NO_DEVICE and isinstance(caught.value, LaunchError)


def test_mapped_host_memory_is_asked_of_hip_with_the_mapped_flag(hip) -> None:
    with pytest.raises(HipError, match="^hipHostMalloc failed: hipError") as caught:
        HipQueue(hip).mapped(64)
    assert status_name(caught.value) in NO_DEVICE


def test_the_device_address_of_host_memory_is_asked_with_an_integer_address(hip) -> None:
    host = np.zeros(16, dtype=np.uint8)
    status, _ = hip.hipHostGetDevicePointer(host.ctypes.data, 0)
    assert status != hip.hipError_t.hipSuccess  # refused (no device, or memory HIP did not allocate), not a TypeError


def test_copies_take_integer_addresses(hip) -> None:
    host = np.zeros(16, dtype=np.uint8)
    queue = HipQueue(hip)
    for copy in (queue.copy_to_device, queue.copy_to_host):
        with pytest.raises(HipError, match="^hipMemcpyAsync failed") as caught:
            copy(host.ctypes.data, host.ctypes.data, host.nbytes)
        assert status_name(caught.value) in NO_DEVICE


def test_loading_a_code_object_without_a_device_is_hips_error(hip) -> None:
    with pytest.raises(HipError, match="^hipModuleLoadData failed") as caught:
        hipmod.Module(hip, b"\x7fELF" + bytes(60))
    assert status_name(caught.value) in NO_DEVICE


def test_device_arch_without_a_device_is_hips_error() -> None:
    with pytest.raises(HipError, match="^hipGetDeviceProperties failed") as caught:
        hipmod.device_arch(0)
    assert status_name(caught.value) in NO_DEVICE


def test_sticky_errors_say_the_process_cannot_use_the_gpu_again(hip) -> None:
    error = HipError("hipStreamSynchronize", hip.hipError_t.hipErrorIllegalAddress,
                     hipmod.error_text(hip, hip.hipError_t.hipErrorIllegalAddress))
    assert "hipErrorIllegalAddress" in str(error) and "cannot run GPU work again" in str(error)


# ---------------------------------------------------------------- the device's architecture on ROCm 5


class _Rocm5Library:
    """libamdhip64 of ROCm 5 as device_arch sees it: no hipGetDevicePropertiesR0600, and a
    hipGetDeviceProperties that fills the ROCm 5 struct."""

    def __init__(self, arch: bytes, status: int = 0) -> None:
        self.arch, self.status = arch, status

    def hipGetDeviceProperties(self, props, device) -> int:
        ctypes.memmove(ctypes.addressof(props) + hipmod._ROCM5_ARCH_NAME.start, self.arch, len(self.arch))
        return self.status


@pytest.mark.parametrize("arch", ["gfx90a:sramecc+:xnack-", "gfx1030", "gfx942:sramecc+:xnack-"])
def test_rocm5_arch_is_read_from_gcn_arch_name(monkeypatch, arch: str) -> None:
    monkeypatch.setattr(hipmod, "runtime_library", lambda: ("libamdhip64.so.5", _Rocm5Library(arch.encode())))
    assert hipmod.device_arch(0) == arch


def test_a_malformed_arch_name_is_refused_before_compiling(monkeypatch) -> None:
    monkeypatch.setattr(hipmod, "runtime_library", lambda: ("libamdhip64.so.5", _Rocm5Library(b"\x01junk")))
    with pytest.raises(ToolchainUnavailable, match="cannot compile for"):
        hipmod.device_arch(0)


def test_rocm5_arch_name_offset_matches_the_installed_header() -> None:
    """The offset device_arch reads on ROCm 5 is the header's offsetof(hipDeviceProp_t, gcnArchName)."""
    toolchain = find_toolchain()
    header = Path(toolchain.rocm_path) / "include/hip/hip_runtime_api.h"
    if toolchain.hip_version[0] != 5:
        pytest.fail(f"this test checks ROCm 5's struct layout, but HIP {toolchain.hip_version} is installed")
    start, stop = hipmod._ROCM5_ARCH_NAME.start, hipmod._ROCM5_ARCH_NAME.stop
    probe = (f'#include "{header}"\n#include <stddef.h>\n'
             f"static_assert(offsetof(hipDeviceProp_t, gcnArchName) == {start}, \"offset\");\n"
             f"static_assert(sizeof(((hipDeviceProp_t*)0)->gcnArchName) == {stop - start}, \"size\");\n"
             f"static_assert(sizeof(hipDeviceProp_t) <= {hipmod._ROCM5_PROPS_SIZE}, \"buffer\");\n")
    done = subprocess.run([toolchain.clang, "-x", "c++", "-std=c++17", "-fsyntax-only", "-D__HIP_PLATFORM_AMD__",
                           f"-I{Path(toolchain.rocm_path) / 'include'}", "-"], input=probe, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- a whole call, up to hipModuleLaunchKernel


class _HostMemory:
    def __init__(self, nbytes: int) -> None:
        self.array = np.zeros(nbytes, dtype=np.uint8)
        self.ptr = self.array.ctypes.data


class HostBackedHip(HipBackend):
    """HipBackend with host memory in place of the device, and the compute-unit count of an MI250X's
    GCD: compile (hiprtc), launch_packed and synchronize are the real ones."""

    COMPUTE_UNITS = 110

    def __init__(self, cache: BinaryCache) -> None:
        self.hip = hip_python()
        self.cache, self.compiles, self.arch, self.device = cache, 0, "gfx90a", 0
        self.queue = HipQueue(self.hip)
        self.memory: list[_HostMemory] = []
        self.globals: dict[str, _HostMemory] = {}
        self.mapped_memory: list[np.ndarray] = []
        self.loaded: list[bytes] = []

    def load(self, binary: bytes):
        self.loaded.append(binary)
        return binary

    def function(self, module, symbol: str):
        return None  # a null hipFunction_t: the launch reaches HIP, which refuses it

    def global_address(self, module, name: str) -> int:
        self.globals[name] = _HostMemory(64)  # zeroed: no panic recorded
        return self.globals[name].ptr

    def alloc(self, nbytes: int) -> _HostMemory:
        self.memory.append(_HostMemory(nbytes))
        return self.memory[-1]

    def upload(self, dst_ptr: int, host) -> None:
        ctypes.memmove(dst_ptr, host.ctypes.data, host.nbytes)

    def download(self, host, src_ptr: int) -> None:
        ctypes.memmove(host.ctypes.data, src_ptr, host.nbytes)

    def multiprocessors(self) -> int:
        return self.COMPUTE_UNITS

    def pinned(self, nbytes: int):
        return np.zeros(nbytes, dtype=np.uint8)

    def mapped(self, nbytes: int):
        memory = np.zeros(nbytes, dtype=np.uint8)
        self.mapped_memory.append(memory)
        return memory, memory.ctypes.data

    def copy_to_host_async(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        ctypes.memmove(dst_address, src_ptr, nbytes)

    def zero_async(self, ptr: int, nbytes: int) -> None:
        ctypes.memset(ptr, 0, nbytes)


def test_a_call_reaches_hip_module_launch_kernel_with_the_packed_arguments(abi_translation, tmp_path, monkeypatch):
    emitted = abi_translation.emitted
    entry = emitted.abi.kernels["mixed"]
    backend = HostBackedHip(BinaryCache(tmp_path))
    kernel = DeviceKernel(backend, "mixed", entry, emitted.files[entry.files["hip"]], entry.files["hip"])
    assert backend.compiles == 1 and backend.loaded == [kernel.binary]

    args_meta = [a for a in code_object_metadata(kernel.binary)["amdhsa.kernels"][0][".args"]
                 if not a[".value_kind"].startswith("hidden_")]
    seen = {}
    real_launch = backend.queue._launch

    def spy(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        pointers = (ctypes.c_void_p * len(args_meta)).from_address(params)
        seen["args"] = [ctypes.string_at(pointers[i], a[".size"]) for i, a in enumerate(args_meta)]
        seen["geometry"] = (gx, gy, gz, bx, by, bz)
        return real_launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra)

    monkeypatch.setattr(backend.queue, "_launch", spy)
    n = 1000
    out, a, idx = np.zeros(n), np.arange(n, dtype=np.float32), np.arange(n, dtype=np.int32)
    coeffs = {"flag": 7, "scale": 2.5, "shift": -3}
    with pytest.raises(LaunchError, match=r"launching kernel `mixed` \(loop at abi.rs:\d+:\d+\) failed: "
                                          r"hipModuleLaunchKernel failed: hipError"):
        kernel(out, a, idx, -5, -300, 70000, 2**40 + 1, 1.5, coeffs, True, np.array([-2, 9, 300], dtype=np.int16))

    # `out` is write-only (never uploaded) and `a`, `idx` were uploaded to their stand-in device buffers;
    # `taps` needs no device memory: its elements are among the arguments.
    out_buf, a_buf, idx_buf = backend.memory
    assert a_buf.array.tobytes() == a.tobytes() and idx_buf.array.tobytes() == idx.tobytes()
    # the lengths of `out` and `a` are not passed: the host proved their accesses in bounds; the body reads
    # `idx.len()`
    expected = [struct.pack("<Q", out_buf.ptr), struct.pack("<Q", a_buf.ptr), struct.pack("<Q", idx_buf.ptr),
                struct.pack("<Q", n),
                struct.pack("<b", -5), struct.pack("<h", -300), struct.pack("<I", 70000),
                struct.pack("<Q", 2**40 + 1), struct.pack("<f", 1.5),
                struct.pack("<B7xdi4x", 7, 2.5, -3), b"\x01", struct.pack("<3h", -2, 9, 300), struct.pack("<Q", 0),
                struct.pack("<Q", n)]
    assert seen["args"] == expected
    assert seen["geometry"] == (-(-n // 256), 1, 1, 256, 1, 1)


def test_a_reduction_launch_takes_seeds_by_value_and_kernel_owned_memory_on_a_capped_grid(reductions_translation,
                                                                                           tmp_path, monkeypatch):
    emitted = reductions_translation.emitted
    entry = emitted.abi.kernels["extremes"]
    backend = HostBackedHip(BinaryCache(tmp_path))
    kernel = DeviceKernel(backend, "extremes", entry, emitted.files[entry.files["hip"]], entry.files["hip"])
    (partials,) = backend.memory  # the one buffer of the kernel's partials, allocated when it is loaded
    # the results' words, after the panic record's place in host memory the device writes directly
    (mapped,) = backend.mapped_memory
    results = mapped.ctypes.data + PANIC_RECORD_BYTES
    max_blocks = 8 * HostBackedHip.COMPUTE_UNITS

    args_meta = [a for a in code_object_metadata(kernel.binary)["amdhsa.kernels"][0][".args"]
                 if not a[".value_kind"].startswith("hidden_")]
    seen = []
    real_launch = backend.queue._launch

    def spy(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        pointers = (ctypes.c_void_p * len(args_meta)).from_address(params)
        seen.append(([ctypes.string_at(pointers[i], a[".size"]) for i, a in enumerate(args_meta)],
                     (gx, gy, gz, bx, by, bz)))
        return real_launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra)

    monkeypatch.setattr(backend.queue, "_launch", spy)
    n = 1_000_000
    a = np.ones(n, dtype=np.float32)
    for _ in range(2):
        with pytest.raises(LaunchError, match="hipModuleLaunchKernel failed"):
            kernel(a, -7)
    assert len(backend.memory) == 1 + 2  # the partials, and the staging buffer of `a` of each call

    (first, geometry), (second, _) = seen
    staged = backend.memory[1]
    # the reductions in the ABI's order, which puts the location reduction first
    assert [r.name for r in entry.launches[0].reductions] == ["low", "total"]
    assert first == [
        struct.pack("<Q", staged.ptr),                                       # a (no length: the host proved a[i])
        struct.pack("<q", -7),                                               # bias
        struct.pack("<Q", 0), struct.pack("<Q", n),                          # the loop's start and count
        struct.pack("<f", np.finfo(np.float32).max), struct.pack("<Q", 0),   # `low` and `at` start at MAX, 0
        struct.pack("<Q", partials.ptr),                                     # their (value, location) partials
        struct.pack("<Q", results), struct.pack("<Q", results + 8),          # their result words
        struct.pack("<q", -7),                                               # `total` starts at `bias`
        struct.pack("<Q", partials.ptr + 16 * max_blocks),                   # its partials
        struct.pack("<Q", results + 16),                                     # its result word
        struct.pack("<Q", results + 24),                                     # the done word, after them
    ]
    assert geometry == (max_blocks, 1, 1, 256, 1, 1)
    assert second[2:] == first[2:]  # the same kernel-owned memory in every call


def test_launch_argument_sizes_match_the_code_objects_kernel_arguments(abi_translation, tmp_path):
    """The launch plan's `void**` array points at one value per kernel argument, of the size the compiled
    kernel reads, in order; the struct's inner layout is pinned by the static_asserts of the C++."""
    from rs2gpu.runtime.callplan import CallPlan
    from rs2gpu.runtime.hiprtc import cached_compile_hip

    emitted = abi_translation.emitted
    entry = emitted.abi.kernels["mixed"]
    binary, _ = cached_compile_hip(BinaryCache(tmp_path), emitted.files[entry.files["hip"]],
                                   entry.files["hip"], "gfx90a")
    kernels = code_object_metadata(binary)["amdhsa.kernels"]
    (lp,) = CallPlan("mixed", entry).launches
    # the general and the covering entry point, with one argument buffer
    covering = lp.launch.entry(EntryKind.COVERING)
    assert sorted(k[".name"] for k in kernels) == sorted([lp.general.symbol, covering.symbol])
    base = ctypes.addressof(lp.buffer)
    offsets = [lp.pointers[i] - base for i in range(len(lp.pointers))]
    sizes = [field[3] for field in lp.fields]
    for kernel in kernels:
        explicit = [a for a in kernel[".args"] if not a[".value_kind"].startswith("hidden_")]
        assert sizes == [a[".size"] for a in explicit], kernel[".name"]
        # the three slices' pointers, then the one length the body reads (`idx.len()`)
        assert [a[".value_kind"] for a in explicit[:4]] == ["global_buffer"] * 3 + ["by_value"]
    # every value sits at an offset aligned for its type, and none overlaps the next
    aligns = [field[4] for field in lp.fields]
    assert all(off % align == 0 for off, align in zip(offsets, aligns))
    assert all(o1 + s1 <= o2 for o1, s1, o2 in zip(offsets, sizes, offsets[1:]))
    assert offsets[-1] + sizes[-1] <= lp.size


def test_load_on_the_hip_backend_without_a_gpu_says_so(tmp_path: Path, monkeypatch) -> None:
    import rs2gpu

    monkeypatch.setenv("RS2GPU_CACHE_DIR", str(tmp_path))
    with pytest.raises(ToolchainUnavailable, match="no usable HIP device 0"):
        rs2gpu.load(Path(__file__).resolve().parent / "data" / "abi.rs", backend="hip")


@pytest.mark.parametrize(("name", "args", "geometry"), [
    # the covering entry point of a nest (1 x 8 x 70 cells): 3 blocks of 32 x 8 threads, 768 threads for the
    # 560 iterations (the general entry point's 128 x 2 blocks would launch 1024)
    ("volume", (np.zeros(560, dtype=np.uint32), 1, 8, 70), (3, 1, 1, 32, 8, 1)),
    # a nest with a vector entry point runs it first (each row tests its own alignment): one thread per
    # pair of f64 columns, 35 x 8 groups on 2 blocks of 32 x 8 threads (the 64 x 4 blocks launch as many
    # threads, and among equals the narrower x wins)
    ("plane", (np.zeros(8 * 70), 0, 8, 70), (2, 1, 1, 32, 8, 1)),
    # no grid covers 600000 rows of one column (65535 blocks of 8 rows at most): the general entry point,
    # 32 x 8 blocks, the grid capped at 65535 along y, threads striding over the rest
    ("plane", (np.zeros(600_000), 0, 600_000, 1), (1, 65535, 1, 32, 8, 1)),
])
def test_a_loop_nest_launches_on_a_grid_that_covers_it_where_one_does(tmp_path, monkeypatch, name, args, geometry):
    translated = pipeline.translate(Path(__file__).resolve().parents[1] / "cases" / "shapes.rs")
    entry = translated.emitted.abi.kernels[name]
    backend = HostBackedHip(BinaryCache(tmp_path))
    kernel = DeviceKernel(backend, name, entry, translated.emitted.files[entry.files["hip"]], entry.files["hip"])
    seen = {}
    real_launch = backend.queue._launch

    def spy(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        seen["geometry"] = (gx, gy, gz, bx, by, bz)
        return real_launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra)

    monkeypatch.setattr(backend.queue, "_launch", spy)
    with pytest.raises(LaunchError):
        kernel(*args)
    assert seen["geometry"] == geometry
