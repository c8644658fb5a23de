"""A GPU backend whose device is this CPU: the generated C++ itself, compiled by the host's C++ compiler,
run block after block (the threads of a block one after another, or as real threads where they meet at
barriers), in host memory. Everything else of a call is the real `DeviceKernel`: argument checks, the
transfer plan, the schedule of launches, the packed launch arguments, device panics.

It runs the HIP file (its prelude has a compile-time `offsetof`); the preludes differ in nothing else a
kernel computes. The CUDA index built-ins, atomics and barriers come from bench/emulate.py's prelude.
"""
from __future__ import annotations

import ctypes
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from rs2gpu.runtime.base import DeviceBackend, DeviceKernel

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # for `bench`; appended, so the installed rs2gpu wins
from bench import emulate  # noqa: E402

BUILTINS = r"""
#include <thread>
#include <vector>
using std::signbit;
static int __popc(unsigned x) { return __builtin_popcount(x); }
static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static int __ffs(int x) { return __builtin_ffs(x); }
static int __ffsll(long long x) { return __builtin_ffsll(x); }
static float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
// One launch: the blocks one after another; a block's threads one after another, or, where they meet at
// barriers (`together`), as real threads.
template <typename F> static void rs2gpu_emulate(F body, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                 unsigned by, unsigned bz, int together) {
    for (unsigned z = 0; z < gz; z++)
        for (unsigned y = 0; y < gy; y++)
            for (unsigned x = 0; x < gx; x++) {
                bench_begin_block(x, y, z, gx, gy, gz, bx, by, bz);
                std::vector<std::thread> threads;
                for (unsigned tz = 0; tz < bz; tz++)
                    for (unsigned ty = 0; ty < by; ty++)
                        for (unsigned tx = 0; tx < bx; tx++) {
                            auto thread = [=] { bench_set_thread(tx, ty, tz); body(); };
                            if (together) threads.emplace_back(thread); else thread();
                        }
                for (auto& t : threads) t.join();
            }
}
"""
_ENTRY = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+\) (\w+)\((.*)\) \{')
GARBAGE = 0xA5  # what fresh device memory holds: a kernel that reads memory it was never given shows it


def _wrapper(symbol: str, params: str, together: bool) -> str:
    """`rs2gpu_emulate_<symbol>(void** args, grid, block)`: the launch as the driver would make it."""
    values = []
    for i, param in enumerate(p for p in params.split(", ") if p):
        cxx_type = param.replace(" __restrict__", "").rsplit(" ", 1)[0]
        values.append(f"*({cxx_type}*)args[{i}]")
    return (f'extern "C" void rs2gpu_emulate_{symbol}(void** args, unsigned gx, unsigned gy, unsigned gz, '
            f"unsigned bx, unsigned by, unsigned bz) {{\n"
            f"    rs2gpu_emulate([=] {{ {symbol}({', '.join(values)}); }}, gx, gy, gz, bx, by, bz, "
            f"{int(together)});\n}}\n")


class _HostMemory:
    def __init__(self, nbytes: int) -> None:
        self.array = np.full(nbytes, GARBAGE, dtype=np.uint8)
        self.ptr = self.array.ctypes.data


class EmulatedBackend(DeviceBackend):
    name = "emulated"

    def __init__(self, workdir: Path) -> None:
        if emulate.unavailable():
            raise RuntimeError(f"cannot run kernels on the CPU: {emulate.unavailable()}")
        self.workdir = Path(workdir)
        self.launches: list[str] = []  # the symbol of every launch, in order
        self.memory: list[_HostMemory] = []

    def compile(self, source: str, source_name: str, fast_math: bool) -> bytes:
        wrappers = []
        for match in _ENTRY.finditer(source):
            body = source[match.end():source.find("\n}\n", match.end())]
            wrappers.append(_wrapper(match.group(1), match.group(2), "rs2gpu_reduce_block" in body))
        text = emulate.PRELUDE + BUILTINS + source + "\n" + "".join(wrappers)
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        library = self.workdir / f"lib{Path(source_name).stem.split('.')[0]}_{key}.so"
        if not library.exists():
            cpp = library.with_suffix(".cpp")
            cpp.write_text(text, encoding="utf-8")
            done = subprocess.run([emulate.compiler(), "-std=c++20", "-O1", "-ffp-contract=off", "-fPIC", "-shared",
                                   "-pthread", "-w", "-o", str(library), str(cpp)], capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{source_name} does not compile for the CPU:\n{done.stderr[-3000:]}")
        return str(library).encode()

    def load(self, binary: bytes):
        return ctypes.CDLL(binary.decode())

    def function(self, module, symbol: str):
        entry = getattr(module, f"rs2gpu_emulate_{symbol}")
        entry.restype = None
        entry.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 6
        return symbol, entry

    def device_ordinal(self) -> int:
        return 0

    def global_address(self, module, name: str) -> int:
        return ctypes.addressof(ctypes.c_char.in_dll(module, name))

    def alloc(self, nbytes: int) -> _HostMemory:
        self.memory.append(_HostMemory(nbytes))
        return self.memory[-1]

    def upload(self, dst_ptr: int, host) -> None:
        host = np.ascontiguousarray(host)
        ctypes.memmove(dst_ptr, host.ctypes.data, host.nbytes)

    def download(self, host, src_ptr: int) -> None:
        ctypes.memmove(host.ctypes.data, src_ptr, host.nbytes)

    def launch_packed(self, function, grid, block, params_address: int) -> None:
        symbol, entry = function
        self.launches.append(symbol)
        entry(params_address, *grid, *block)

    def synchronize(self) -> None:
        pass


def emulated_kernels(translation, workdir: Path) -> dict[str, DeviceKernel]:
    """Every kernel of a translation (with the hip target) on one emulated device."""
    device = EmulatedBackend(workdir)
    emitted = translation.emitted
    return {name: DeviceKernel(device, name, entry, emitted.files[entry["files"]["hip"]], entry["files"]["hip"])
            for name, entry in emitted.manifest["kernels"].items()}
