"""The HIP backend: hiprtc to an AMDGPU code object (disk-cached; each compile runs in a child process,
because hiprtc aborts its process on an architecture it does not know), then hip-python for modules,
memory, copies and launches.

Every HIP call's status is checked and a failure raises `HipError` (a `LaunchError`) naming the call;
faults of asynchronous work surface at the next synchronize. On AMD GPUs a memory fault inside a kernel
is usually fatal to the whole process (the HSA runtime aborts it), so an out-of-bounds access the
checker could not rule out is caught by the kernels' own bounds checks, not by this module.
"""
from __future__ import annotations

import contextlib
import ctypes
from functools import lru_cache

from rs2gpu.runtime.base import DeviceBackend
from rs2gpu.runtime.cache import BinaryCache
from rs2gpu.runtime.errors import LaunchError, ToolchainUnavailable
from rs2gpu.runtime.options import HipOptions
from rs2gpu.runtime.staging import StagingRing

HIP_PYTHON_HINT = ("the HIP backend needs hip-python and the HIP runtime: pip install 'rs2gpu[hip]' "
                   "(hip-python 7.x) and ROCm, or on Debian/Ubuntu `apt-get install libamdhip64-dev`")

# hip-python 7 opens `libamdhip64.so` and `libhiprtc.so` by these exact names. Debian's ROCm 5.2 runtime
# package has only the versioned libamdhip64.so.5 (the plain name comes with -dev) and no libhiprtc:
# hiprtc is part of libamdhip64 before ROCm 6.
RUNTIME_LIBRARIES = ("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5")
HIPRTC_LIBRARIES = ("libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6")

# ROCm 5's hipDeviceProp_t, which hip-python 7 does not describe (it calls ROCm 6's
# hipGetDevicePropertiesR0600, absent from ROCm 5): offsetof(hipDeviceProp_t, gcnArchName) and its size,
# the same in every ROCm 5 release. The buffer is larger than the struct (792 bytes in 5.2).
_ROCM5_ARCH_NAME = slice(396, 396 + 256)
_ROCM5_PROPS_SIZE = 4096

_STICKY = ("hipErrorIllegalAddress", "hipErrorLaunchFailure", "hipErrorAssert", "hipErrorECCNotCorrectable")


class HipError(LaunchError):
    """A HIP call returned an error; `call` names it and `status` is hip-python's `hipError_t`."""

    def __init__(self, call: str, status, text: str) -> None:
        sticky = any(mark in text for mark in _STICKY)
        note = "; the device is now unusable, so this process cannot run GPU work again" if sticky else ""
        super().__init__(f"{call} failed: {text}{note}")
        self.call = call
        self.status = status


def _first_loadable(names: tuple[str, ...]) -> tuple[str, ctypes.CDLL] | None:
    for name in names:
        try:
            return name, ctypes.CDLL(name)
        except OSError:
            continue
    return None


@lru_cache(maxsize=1)
def runtime_library() -> tuple[str, ctypes.CDLL]:
    """The HIP runtime library's name as it loads, and the library (for the calls hip-python cannot make)."""
    found = _first_loadable(RUNTIME_LIBRARIES)
    if found is None:
        raise ToolchainUnavailable(f"the HIP runtime (any of {', '.join(RUNTIME_LIBRARIES)}) is not installed: "
                                   f"{HIP_PYTHON_HINT}")
    return found


@lru_cache(maxsize=1)
def hip_python():
    """hip-python's `hip.hip` module, with its libraries pointed at the ones installed here.

    hip-python 6 and 7 keep the file name each binding opens in a module global (`DLL`) that is read at the
    first call; where the plain names do not load, those globals get the names that do: the versioned
    libamdhip64, and libamdhip64 itself for hiprtc on ROCm 5. (hip-python 10, which re-exports the
    rocm-bindings package, has no such globals and searches ROCM_PATH itself.)
    """
    try:
        from hip import hip
    except ImportError as e:
        raise ToolchainUnavailable(f"{HIP_PYTHON_HINT} ({e})") from e
    name, runtime = runtime_library()
    try:
        from hip import chip, chiprtc
    except ImportError:
        return hip
    chip.DLL = name.encode()
    hiprtc = _first_loadable(HIPRTC_LIBRARIES)
    if hiprtc is not None:
        chiprtc.DLL = hiprtc[0].encode()
    elif hasattr(runtime, "hiprtcCompileProgram"):
        chiprtc.DLL = name.encode()
    return hip


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def error_text(hip, status) -> str:
    """`hipErrorNoDevice: no ROCm-capable device is detected`, as HIP names and describes the status."""
    name = _text(hip.hipGetErrorName(status)[1])
    description = _text(hip.hipGetErrorString(status)[1])
    return name if description in ("", name) else f"{name}: {description}"


def check(hip, result: tuple, call: str):
    """Unpack a hip-python `(status, value...)` tuple, raising HipError unless the status is hipSuccess."""
    status, *values = result
    if status:
        raise HipError(call, status, error_text(hip, status))
    return values[0] if len(values) == 1 else tuple(values) if values else None


def device_count() -> int:
    """The number of usable AMD GPUs (0 when there are none, or no driver)."""
    hip = hip_python()
    status, count = hip.hipGetDeviceCount()
    return 0 if status else count


def device_arch(device: int) -> str:
    """The device's full target ID from hipDeviceProp_t.gcnArchName, e.g. `gfx90a:sramecc+:xnack-`,
    checked to be a well-formed AMD GPU arch before anything is compiled for it."""
    hip = hip_python()
    _, runtime = runtime_library()
    if hasattr(runtime, "hipGetDevicePropertiesR0600"):  # ROCm >= 6: hip-python's struct is the library's
        props = hip.hipDeviceProp_t()
        check(hip, hip.hipGetDeviceProperties(props, device), "hipGetDeviceProperties")
        arch = _text(props.gcnArchName)
    else:
        props = ctypes.create_string_buffer(_ROCM5_PROPS_SIZE)
        status = runtime.hipGetDeviceProperties(props, ctypes.c_int(device))
        if status:
            status = hip.hipError_t(status)
            raise HipError("hipGetDeviceProperties", status, error_text(hip, status))
        arch = props.raw[_ROCM5_ARCH_NAME].split(b"\0", 1)[0].decode("ascii", errors="replace")
    try:
        HipOptions(arch)
    except ValueError as e:
        raise ToolchainUnavailable(f"device {device} reports the architecture {arch!r}, which rs2gpu cannot "
                                   f"compile for: {e}") from e
    return arch


class DeviceMemory:
    """Device memory from hipMalloc, freed with hipFree when the object is dropped; `.ptr` is its address."""

    __slots__ = ("ptr", "nbytes", "_hip", "_pointer")

    def __init__(self, hip, nbytes: int) -> None:
        self._hip = hip
        self._pointer = None
        self._pointer = check(hip, hip.hipMalloc(nbytes), "hipMalloc")
        self.ptr = int(self._pointer)
        self.nbytes = nbytes

    def free(self) -> None:
        pointer, self._pointer = self._pointer, None
        if pointer is not None:
            check(self._hip, self._hip.hipFree(pointer), "hipFree")

    def __del__(self) -> None:
        self.free()  # a failure is printed by Python as an unraisable exception, never dropped silently


class HipQueue:
    """One HIP stream: launches, asynchronous copies and events on it, and the pinned host memory the
    staging ring copies through. `stream=None` is HIP's null stream."""

    def __init__(self, hip, stream=None) -> None:
        self.hip = hip
        self.stream = stream
        self._launch = hip.hipModuleLaunchKernel
        self._host_buffers: list = []
        self._events: list = []

    def launch(self, function, grid: tuple[int, int, int], block: tuple[int, int, int], params_address: int) -> None:
        """hipModuleLaunchKernel with the `void**` argument array at `params_address`."""
        (status,) = self._launch(function, *grid, *block, 0, self.stream, params_address, None)
        if status:
            raise HipError("hipModuleLaunchKernel", status, error_text(self.hip, status))

    def synchronize(self) -> None:
        check(self.hip, self.hip.hipStreamSynchronize(self.stream), "hipStreamSynchronize")

    # ------------------------------------------------------------ the staging ring's primitives

    def pinned(self, nbytes: int) -> int:
        pointer = check(self.hip, self.hip.hipHostMalloc(nbytes, 0), "hipHostMalloc")
        self._host_buffers.append(pointer)
        return int(pointer)

    def mapped(self, nbytes: int) -> tuple[int, int]:
        """Pinned host memory kernels write directly: (its host address, the address device code uses)."""
        hip = self.hip
        pointer = check(hip, hip.hipHostMalloc(nbytes, hip.hipHostMallocMapped), "hipHostMalloc")
        self._host_buffers.append(pointer)
        device_pointer = check(hip, hip.hipHostGetDevicePointer(int(pointer), 0), "hipHostGetDevicePointer")
        return int(pointer), int(device_pointer)

    def new_event(self):
        hip = self.hip
        event = check(hip, hip.hipEventCreateWithFlags(hip.hipEventDisableTiming), "hipEventCreateWithFlags")
        self._events.append(event)
        return event

    def record(self, event) -> None:
        check(self.hip, self.hip.hipEventRecord(event, self.stream), "hipEventRecord")

    def is_done(self, event) -> bool:
        (status,) = self.hip.hipEventQuery(event)
        if status == self.hip.hipError_t.hipErrorNotReady:
            return False
        if status:
            raise HipError("hipEventQuery", status, error_text(self.hip, status))
        return True

    def wait(self, event) -> None:
        check(self.hip, self.hip.hipEventSynchronize(event), "hipEventSynchronize")

    def copy_to_device(self, dst_ptr: int, src_address: int, nbytes: int) -> None:
        hip = self.hip
        check(hip, hip.hipMemcpyAsync(dst_ptr, src_address, nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice,
                                      self.stream), "hipMemcpyAsync")

    def copy_to_host(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        hip = self.hip
        check(hip, hip.hipMemcpyAsync(dst_address, src_ptr, nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost,
                                      self.stream), "hipMemcpyAsync")

    def zero(self, ptr: int, nbytes: int) -> None:
        check(self.hip, self.hip.hipMemsetAsync(ptr, 0, nbytes, self.stream), "hipMemsetAsync")

    def close(self) -> None:
        """Free the events, the pinned buffers and the stream (after the work queued on it)."""
        hip = self.hip
        if self.stream is not None:
            self.synchronize()
        while self._events:
            check(hip, hip.hipEventDestroy(self._events.pop()), "hipEventDestroy")
        while self._host_buffers:
            check(hip, hip.hipHostFree(self._host_buffers.pop()), "hipHostFree")
        stream, self.stream = self.stream, None
        if stream is not None:
            check(hip, hip.hipStreamDestroy(stream), "hipStreamDestroy")


class Module:
    """A loaded code object, unloaded when dropped (after the kernels that use it)."""

    __slots__ = ("handle", "_hip")

    def __init__(self, hip, binary: bytes) -> None:
        self._hip = hip
        self.handle = None
        self.handle = check(hip, hip.hipModuleLoadData(binary), "hipModuleLoadData")

    def __del__(self) -> None:
        handle, self.handle = self.handle, None
        if handle is not None:
            check(self._hip, self._hip.hipModuleUnload(handle), "hipModuleUnload")


class HipBackend(DeviceBackend):
    name = "hip"

    def __init__(self, cache: BinaryCache, device: int = 0, arch: str | None = None) -> None:
        hip = hip_python()
        self.hip = hip
        self.cache = cache
        self.compiles = 0  # hiprtc invocations by this process (the disk cache avoids them)
        status, count = hip.hipGetDeviceCount()
        if status or not 0 <= device < count:
            found = error_text(hip, status) if status else f"{count} device{'s' if count != 1 else ''} found"
            raise ToolchainUnavailable(f"no usable HIP device {device} ({found})")
        self.device = device
        self._use_device()
        self.arch = arch or device_arch(device)
        HipOptions(self.arch)  # a malformed arch fails here, before any compile
        # the null stream: a call is ordered after the work other libraries queued on their default streams
        # (which produced its device arrays) and before what they queue next
        self.queue = HipQueue(hip)
        self._staging = StagingRing(self.queue)

    def _use_device(self) -> None:
        check(self.hip, self.hip.hipSetDevice(self.device), "hipSetDevice")

    # ------------------------------------------------------------ compile and load

    def compile(self, source: str, source_name: str, fast_math: bool) -> bytes:
        from rs2gpu.runtime.hiprtc import cached_compile_hip

        binary, compiled = cached_compile_hip(self.cache, source, source_name, self.arch, fast_math)
        self.compiles += compiled
        return binary

    def load(self, binary: bytes) -> Module:
        self._use_device()
        return Module(self.hip, binary)

    def function(self, module: Module, symbol: str):
        return check(self.hip, self.hip.hipModuleGetFunction(module.handle, symbol.encode()),
                     f"hipModuleGetFunction({symbol})")

    def global_address(self, module: Module, name: str) -> int:
        pointer, _ = check(self.hip, self.hip.hipModuleGetGlobal(module.handle, name.encode()),
                           f"hipModuleGetGlobal({name})")
        return int(pointer)

    def device_ordinal(self) -> int:
        return self.device

    def multiprocessors(self) -> int:
        hip = self.hip
        return check(hip, hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMultiprocessorCount,
                                                    self.device), "hipDeviceGetAttribute")

    def l2_adds_bytes(self) -> int:
        # never: without -munsafe-fp-atomics hiprtc makes atomicAdd(double*) a compare-and-swap loop, and
        # the L2-adds entry point's speed was measured on NVIDIA only (see emit/l2_adds.py)
        return 0

    # ------------------------------------------------------------ memory

    def alloc(self, nbytes: int) -> DeviceMemory:
        self._use_device()
        return DeviceMemory(self.hip, nbytes)

    def upload(self, dst_ptr: int, host) -> None:
        self._staging.upload(dst_ptr, host)

    def download(self, host, src_ptr: int) -> None:
        self._staging.download(host, src_ptr)

    def pinned(self, nbytes: int):
        import numpy as np

        return np.frombuffer((ctypes.c_uint8 * nbytes).from_address(self.queue.pinned(nbytes)), dtype=np.uint8)

    def mapped(self, nbytes: int):
        import numpy as np

        host_address, device_address = self.queue.mapped(nbytes)
        return np.frombuffer((ctypes.c_uint8 * nbytes).from_address(host_address), dtype=np.uint8), device_address

    def copy_to_host_async(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        self.queue.copy_to_host(dst_address, src_ptr, nbytes)

    def zero_async(self, ptr: int, nbytes: int) -> None:
        self.queue.zero(ptr, nbytes)

    # ------------------------------------------------------------ launch

    def launch_packed(self, function, grid: tuple[int, int, int], block: tuple[int, int, int],
                      params_address: int) -> None:
        self.queue.launch(function, grid, block, params_address)

    def synchronize(self) -> None:
        self.queue.synchronize()

    @contextlib.contextmanager
    def on_stream(self, handle: int):
        """The queue's copies, launches and events on the stream `handle` (0: the null stream) for the call."""
        before, self.queue.stream = self.queue.stream, handle or None
        try:
            yield
        finally:
            self.queue.stream = before

    def close(self) -> None:
        """Wait for the stream and free its pinned buffers, events and the stream itself."""
        self.queue.close()
