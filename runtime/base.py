"""What every backend shares: binding a call's arguments to a kernel's manifest entry, the checks that
run before any device work, and, for GPU backends, the transfer plan and the launches.

A GPU backend implements `DeviceBackend` (compile, load, allocate, copy, launch, synchronize); the
`DeviceKernel` here drives it identically for CUDA and HIP.
"""
from __future__ import annotations

import ctypes
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from rs2gpu.runtime.arguments import (PRIM_PACK, ArrayArg, array_argument, check_aliasing, check_array_length,
                                      scalar_value, struct_value)
from rs2gpu.runtime.errors import LaunchError
from rs2gpu.runtime.hostexpr import Environment, evaluate

MAX_GRID_X = 2**31 - 1


@dataclass(frozen=True)
class Transfer:
    """One host↔device copy made by a call: the transfer log tests and benchmarks read."""

    param: str
    direction: str  # "h2d" | "d2h"
    nbytes: int
    seconds: float


@dataclass
class BoundCall:
    """A call's arguments, checked: arrays, scalar values and struct bytes by parameter name."""

    arrays: dict[str, ArrayArg]
    scalars: dict[str, object]
    structs: dict[str, bytes]
    env: Environment


def bind_arguments(name: str, entry: dict, args: tuple, kwargs: dict, allow_device: bool) -> BoundCall:
    params = entry["params"]
    if len(args) > len(params):
        raise TypeError(f"{name}() takes {len(params)} arguments but {len(args)} were given")
    values = dict(zip((p["name"] for p in params), args))
    for key, value in kwargs.items():
        if key not in {p["name"] for p in params}:
            raise TypeError(f"{name}() got an unexpected keyword argument `{key}`")
        if key in values:
            raise TypeError(f"{name}() got multiple values for argument `{key}`")
        values[key] = value
    missing = [p["name"] for p in params if p["name"] not in values]
    if missing:
        raise TypeError(f"{name}() missing argument(s): {', '.join(f'`{m}`' for m in missing)}")
    arrays, scalars, structs = {}, {}, {}
    env = Environment()
    for p in params:
        value = values[p["name"]]
        if p["kind"] in ("slice", "array", "struct_ref"):
            arg = array_argument(p, value, allow_device)
            check_array_length(p, arg)
            arrays[p["name"]] = arg
            env.lengths[p["name"]] = arg.count
        elif p["kind"] == "scalar":
            scalars[p["name"]] = env.params[p["name"]] = scalar_value(p, value)
        else:
            structs[p["name"]] = struct_value(p, value)
    check_aliasing(params, arrays)
    for local in entry["preamble"]:
        env.locals[local["name"]] = evaluate(local["expr"], env)
    return BoundCall(arrays, scalars, structs, env)


def iteration_count(launch: dict, env: Environment) -> tuple[int, int]:
    """The loop's first index and its number of iterations (0 for an empty range), as Rust's range does."""
    start = evaluate(launch["start"], env)
    end = evaluate(launch["end"], env)
    count = end - start + (1 if launch["inclusive"] else 0)
    return start, max(0, count)


def kernel_params_array(params: list[bytes]):
    """The `void**` array of pointers to each argument's bytes that cuLaunchKernel/hipModuleLaunchKernel
    take; the returned tuple keeps the buffers alive until the launch call returns."""
    buffers = [ctypes.create_string_buffer(p, max(len(p), 1)) for p in params]
    array = (ctypes.c_void_p * max(len(buffers), 1))(*[ctypes.addressof(b) for b in buffers])
    return array, buffers


class DeviceBackend(ABC):
    """One GPU vendor's runtime: the only vendor-specific code on the launch path."""

    name: str
    block_size: int = 256

    @abstractmethod
    def compile(self, source: str, source_name: str, fast_math: bool) -> bytes: ...

    @abstractmethod
    def load(self, binary: bytes): ...

    @abstractmethod
    def function(self, module, symbol: str): ...

    @abstractmethod
    def device_ordinal(self) -> int: ...

    @abstractmethod
    def alloc(self, nbytes: int):
        """Device memory that is freed when the returned object is dropped; `.ptr` is its address."""

    @abstractmethod
    def upload(self, dst_ptr: int, host) -> None:
        """Copy a C-contiguous numpy array to device memory (through pinned staging)."""

    @abstractmethod
    def download(self, host, src_ptr: int) -> None: ...

    @abstractmethod
    def launch(self, function, grid: int, block: int, params: list[bytes]) -> None: ...

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for the device; raise LaunchError for a fault of an earlier launch."""


class DeviceKernel:
    """One translated kernel on one GPU backend: `kernel(*args)` runs it like the Rust function."""

    def __init__(self, backend: DeviceBackend, name: str, entry: dict, source: str, source_name: str) -> None:
        self.backend = backend
        self.name = name
        self.entry = entry
        self.source = source
        self.binary = backend.compile(source, source_name, entry["fast_math"])
        module = backend.load(self.binary)
        self._module = module
        self._functions = [backend.function(module, launch["symbol"]) for launch in entry["launches"]]
        self.last_transfers: list[Transfer] = []

    def __call__(self, *args, **kwargs):
        call = bind_arguments(self.name, self.entry, args, kwargs, allow_device=True)
        transfers: list[Transfer] = []
        device_ptrs, staged = self._stage_arrays(call, transfers)
        reductions = {}
        for launch, function in zip(self.entry["launches"], self._functions):
            reductions.update(self._launch(launch, function, call, device_ptrs))
        self._synchronize()
        for name, (arg, buffer) in staged.items():
            if self._plan(name) in ("out", "inout"):
                started = time.perf_counter()
                self.backend.download(arg.host, buffer.ptr)
                transfers.append(Transfer(name, "d2h", arg.nbytes, time.perf_counter() - started))
        call.env.reductions = {name: self._read_scalar(slot, ty) for name, (slot, ty) in reductions.items()}
        self.last_transfers = transfers
        result = self.entry["returns"]
        return None if result is None else evaluate(result["expr"], call.env)

    def _plan(self, name: str) -> str:
        return next(p["transfer"] for p in self.entry["params"] if p["name"] == name)

    def _stage_arrays(self, call: BoundCall, transfers: list[Transfer]):
        """Device addresses for every array: device arrays as they are, host arrays through a device
        buffer that is uploaded unless the plan says the kernel overwrites it entirely."""
        device_ptrs: dict[str, int] = {}
        staged = {}
        ordinal = self.backend.device_ordinal()
        for name, arg in call.arrays.items():
            if arg.device is not None:
                if arg.device != ordinal:
                    raise ValueError(f"argument `{name}` is on device {arg.device}, but the kernel runs on "
                                     f"device {ordinal}")
                device_ptrs[name] = arg.ptr
                continue
            buffer = self.backend.alloc(max(arg.nbytes, 1))
            if self._plan(name) in ("in", "inout") and arg.nbytes:
                started = time.perf_counter()
                self.backend.upload(buffer.ptr, arg.host)
                transfers.append(Transfer(name, "h2d", arg.nbytes, time.perf_counter() - started))
            device_ptrs[name] = buffer.ptr
            staged[name] = (arg, buffer)
        return device_ptrs, staged

    def _launch(self, launch: dict, function, call: BoundCall, device_ptrs: dict[str, int]) -> dict:
        start, count = iteration_count(launch, call.env)
        params = []
        for p in self.entry["params"]:
            for part in p["abi"]:
                if part["role"] == "pointer":
                    params.append(device_ptrs[p["name"]].to_bytes(8, "little"))
                elif part["role"] == "length":
                    params.append(call.arrays[p["name"]].count.to_bytes(8, "little"))
                elif p["kind"] == "scalar":
                    params.append(_pack(p["layout"]["type"], call.scalars[p["name"]]))
                else:
                    params.append(call.structs[p["name"]])
        params.append(_pack(launch["index_type"], start))
        params.append(count.to_bytes(8, "little"))
        slots = {}
        for r in launch["reductions"]:
            slot = self.backend.alloc(8)
            init = evaluate(r["init"], call.env)
            self.backend.upload(slot.ptr, _scalar_array(r["type"], init))
            params.append(slot.ptr.to_bytes(8, "little"))
            slots[r["name"]] = (slot, r["type"])
        if count:
            grid = min(-(-count // self.backend.block_size), MAX_GRID_X)
            try:
                self.backend.launch(function, grid, self.backend.block_size, params)
            except LaunchError as e:
                raise LaunchError(f"launching kernel `{self.name}` (loop at {launch['source']}) failed: {e}") from e
        return slots

    def _synchronize(self) -> None:
        try:
            self.backend.synchronize()
        except LaunchError as e:
            raise LaunchError(f"kernel `{self.name}` failed on the device: {e}") from e

    def _read_scalar(self, slot, ty: str):
        host = _scalar_array(ty, 0)
        self.backend.download(host, slot.ptr)
        return host[0].item()


def _pack(ty: str, value) -> bytes:
    import struct

    return struct.pack("<" + PRIM_PACK[ty], value)


def _scalar_array(ty: str, value):
    import numpy as np

    from rs2gpu.runtime.arguments import PRIM_DTYPES

    return np.array([value], dtype=PRIM_DTYPES[ty])
