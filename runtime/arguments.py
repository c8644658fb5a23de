"""Turning Python call arguments into what a kernel's ABI needs, with the checks a Rust caller gets
from the type system: element types, lengths of fixed-size arrays, value ranges of scalars, and no
`&mut` argument overlapping any other argument.

Arrays may be numpy arrays, cupy arrays, torch tensors (CPU or CUDA) or anything with
`__array_interface__` / `__cuda_array_interface__` / `__dlpack__`, and, for read-only slices of
integers, verified lists (`IndexList`). Memory must be C-contiguous; a
multi-dimensional array is passed as its flat sequence of elements, like a Rust slice of its storage.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from rs2gpu.ir.abi import Layout, Param, ParamKind
from rs2gpu.ir.half import half_bits
from rs2gpu.ir.types import PRIMITIVES
from rs2gpu.runtime.errors import AliasError
from rs2gpu.runtime.hostexpr import int_to_f32
from rs2gpu.runtime.indexlist import IndexList



def numpy_dtype(layout: Layout):
    """The numpy dtype with exactly the bytes of a Rust type's layout (structs become structured dtypes)."""
    import numpy as np

    if layout.is_struct:
        return np.dtype({"names": [f.name for f in layout.fields],
                         "formats": [numpy_dtype(f.layout) for f in layout.fields],
                         "offsets": [f.offset for f in layout.fields], "itemsize": layout.size})
    if layout.elem is not None:
        return np.dtype((numpy_dtype(layout.elem), (layout.length,)))
    return primitive_dtype(layout.type)


def primitive_dtype(name: str):
    """The numpy dtype of a primitive type's elements. numpy has no bfloat16 of its own: bf16's is that of
    ml_dtypes (the package jax and tensorflow give numpy theirs with), known to numpy once it is imported."""
    import numpy as np

    code = PRIMITIVES[name].dtype
    if code == "bfloat16":
        try:
            import ml_dtypes  # noqa: F401  (registers the dtype)
        except ImportError:
            raise TypeError("bf16 elements are numpy arrays of dtype ml_dtypes.bfloat16 (or torch bfloat16 "
                            "tensors): install ml_dtypes (python3 -m pip install ml_dtypes)") from None
    return np.dtype(code)


@dataclass(slots=True)
class ArrayArg:
    """One array argument: where its bytes are and how many elements it holds."""

    name: str
    ptr: int
    nbytes: int
    count: int
    device: int | None          # None: host memory; else the CUDA/HIP device ordinal
    host: object | None         # for host memory, a numpy view of it (transfers copy from/to it)
    writable: bool
    verified: IndexList | None = None  # a verified list: its facts, and its own copy in device memory

    def overlaps(self, other: "ArrayArg") -> bool:
        if self.device != other.device or self.nbytes == 0 or other.nbytes == 0:
            return False
        return self.ptr < other.ptr + other.nbytes and other.ptr < self.ptr + self.nbytes


def _describe(obj) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


def _check_dtype(param: str, rust_type: str, expected, found) -> None:
    import numpy as np

    if np.dtype(found) == expected and np.dtype(found).fields == expected.fields:
        return
    raise TypeError(f"argument `{param}` ({rust_type}) needs elements of dtype {expected}, got {np.dtype(found)}")


def array_argument(param: Param, value, allow_device: bool) -> ArrayArg:
    """Validate one array argument against its parameter."""
    import numpy as np

    name, rust_type = param.name, param.rust_type
    expected = numpy_dtype(param.layout)
    writable_needed = param.mutable
    if param.kind == ParamKind.STRUCT_REF and isinstance(value, (dict, tuple, np.void)):
        value = _one_record(param, value)  # the struct `&S` borrows, as a by-value struct takes it
    if isinstance(value, IndexList):
        if writable_needed:
            raise TypeError(f"argument `{name}` is `{rust_type}`, but an IndexList is read-only: pass it to `&[T]` "
                            f"parameters only")
        _check_dtype(name, rust_type, expected, value.dtype)
        host = value.host_values()
        return ArrayArg(name, host.ctypes.data, host.nbytes, host.size, None, host, False, value)
    as_bfloat16 = False
    if is_torch(value):
        value = value.detach()
        if str(value.dtype) == "torch.bfloat16":
            # numpy and the CUDA array interface have no bfloat16: the tensor's bits as int16, whose bytes
            # are bf16's, stand for it
            import torch

            value, as_bfloat16 = value.view(torch.int16), True
        if value.device.type == "cpu":
            value = value.numpy()
            if as_bfloat16:
                value = value.view(primitive_dtype("bf16"))
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        if not allow_device:
            raise TypeError(f"argument `{name}` is GPU memory ({_describe(value)}), but this backend runs on the "
                            f"host: pass a numpy array")
        shape, strides, typestr = interface["shape"], interface.get("strides"), interface["typestr"]
        found = primitive_dtype("bf16") if as_bfloat16 else np.dtype(typestr)
        _check_dtype(name, rust_type, expected, found if not expected.fields else getattr(value, "dtype", found))
        if strides is not None and not _c_contiguous(shape, strides, found.itemsize):
            raise ValueError(f"argument `{name}` must be C-contiguous (a Rust slice is one run of memory)")
        count = math.prod(shape)
        ptr, readonly = interface["data"]
        _check_alignment(param, int(ptr), count)
        if readonly and writable_needed:
            raise ValueError(f"argument `{name}` is `{rust_type}` but the array is read-only")
        return ArrayArg(name, int(ptr), count * found.itemsize, count, _cuda_device_of(value, int(ptr)), None,
                        not readonly)
    if not isinstance(value, np.ndarray):
        if hasattr(value, "__array_interface__") or hasattr(value, "__dlpack__"):
            value = np.asarray(value) if hasattr(value, "__array_interface__") else np.from_dlpack(value)
        elif param.kind == ParamKind.STRUCT_REF:
            raise TypeError(f"argument `{name}` ({rust_type}) must be a dict of its fields, a tuple in field order, "
                            f"or a numpy record (an array of one element) of dtype {expected}; got {_describe(value)}")
        else:
            raise TypeError(f"argument `{name}` ({rust_type}) must be an array (numpy, cupy or torch), "
                            f"got {_describe(value)}")
    _check_dtype(name, rust_type, expected, value.dtype)
    if not value.flags.c_contiguous:
        raise ValueError(f"argument `{name}` must be C-contiguous (a Rust slice is one run of memory); "
                         f"pass np.ascontiguousarray(...)")
    if writable_needed and not value.flags.writeable:
        raise ValueError(f"argument `{name}` is `{rust_type}` but the array is read-only")
    _check_alignment(param, value.__array_interface__["data"][0], value.size)
    flat = value.reshape(-1)
    return ArrayArg(name, value.__array_interface__["data"][0], value.nbytes, value.size, None, flat,
                    bool(value.flags.writeable))


def _one_record(param: Param, value):
    """A one-element array holding the struct `value` (a dict of its fields, a tuple, a numpy record),
    checked field by field as `struct_value` checks a struct passed by value."""
    import numpy as np

    record = np.zeros(1, dtype=numpy_dtype(param.layout))
    record.view(np.uint8)[:] = np.frombuffer(struct_value(param, value), dtype=np.uint8)
    return record


def check_array_length(param: Param, arg: ArrayArg) -> None:
    if param.kind == ParamKind.ARRAY and arg.count != param.length:
        raise ValueError(f"argument `{param.name}` ({param.rust_type}) must have exactly {param.length} "
                         f"elements, got {arg.count}")
    if param.kind == ParamKind.STRUCT_REF and arg.count != 1:
        raise ValueError(f"argument `{param.name}` ({param.rust_type}) must be one struct, got {arg.count} elements")


def _check_alignment(param: Param, ptr: int, count: int) -> None:
    # A Rust reference is always aligned to its element type; numpy can make views that are not
    # (np.frombuffer with an odd offset), and structured dtypes do not record the alignment at all.
    align = param.layout.align
    if count and ptr % align:
        raise ValueError(f"argument `{param.name}` ({param.rust_type}) must be aligned to {align} bytes, but its "
                         f"data starts at an address that is not; pass a copy (np.array(...))")


def _c_contiguous(shape, strides, itemsize) -> bool:
    expected = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def is_torch(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach")


def _cuda_device_of(value, ptr: int) -> int:
    device = getattr(value, "device", None)
    ordinal = getattr(device, "id", None)
    if ordinal is None:
        ordinal = getattr(device, "index", None)
    return int(ordinal or 0)


def scalar_value(name: str, ty: str, value):
    """A Python value of the Rust scalar type `ty` for the argument `name`, range-checked like an `as`-free
    Rust call."""
    import numpy as np

    if isinstance(value, np.generic):
        value = value.item()
    if ty == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"argument `{name}` (bool) must be a bool, got {_describe(value)}")
        return value
    if PRIMITIVES[ty].kind == "half":
        # its bits, which the kernel's ABI and the cpu backend's C ABI pass (rounded once from the value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"argument `{name}` ({ty}) must be a number, got {_describe(value)}")
        bits = half_bits(value, ty)
        if bits & 0x7FFF == half_bits(math.inf, ty) and not (isinstance(value, float) and math.isinf(value)):
            raise ValueError(f"argument `{name}` = {value} does not fit in {ty}")
        return bits
    if ty in ("f32", "f64"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"argument `{name}` ({ty}) must be a number, got {_describe(value)}")
        try:
            if ty == "f32" and isinstance(value, int):
                rounded = int_to_f32(value)  # rounded once, as rustc rounds an integer-valued f32 literal
            else:
                number = float(value)
                rounded = struct.unpack("f", struct.pack("f", number))[0] if ty == "f32" else number
        except OverflowError:
            rounded = math.inf
        if math.isinf(rounded) and not (isinstance(value, float) and math.isinf(value)):
            # a finite value beyond the type's range: Rust rejects such a literal rather than make it infinite
            raise ValueError(f"argument `{name}` = {value} does not fit in {ty}")
        return rounded
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"argument `{name}` ({ty}) must be an int, got {_describe(value)}")
    lo, hi = PRIMITIVES[ty].min, PRIMITIVES[ty].max
    if not lo <= value <= hi:
        raise ValueError(f"argument `{name}` = {value} does not fit in {ty} ({lo}..={hi})")
    return value


def struct_value(param: Param, value) -> bytes:
    """The exact bytes of a #[repr(C)] struct passed by value: from a dict, a tuple in field order,
    or a numpy structured scalar of the matching dtype."""
    import numpy as np

    layout = param.layout
    dtype = numpy_dtype(layout)
    record = np.zeros((), dtype=dtype)
    if isinstance(value, np.void) or (isinstance(value, np.ndarray) and value.dtype.fields):
        _check_dtype(param.name, param.rust_type, dtype, value.dtype)
        record[()] = value
    elif isinstance(value, (dict, tuple)):
        _store_fields(record, layout, value, param.name)
    else:
        raise TypeError(f"argument `{param.name}` ({param.rust_type}) must be a dict of its fields, a tuple, or a "
                        f"numpy record of dtype {dtype}; got {_describe(value)}")
    return record.tobytes()


def _store_fields(record, layout: Layout, value, label: str) -> None:
    """Write a dict of fields (or a tuple in field order) into the 0-d structured array `record`, each
    field checked like a scalar argument of its type (no silent truncation of 2.7 into an i32)."""
    fields = layout.fields
    if isinstance(value, dict):
        missing = [f.name for f in fields if f.name not in value]
        extra = sorted(set(value) - {f.name for f in fields})
        if missing or extra:
            raise ValueError(f"argument `{label}` ({layout.type}): "
                             + (f"missing fields {missing}" if missing else f"unknown fields {extra}"))
        items = [(f, value[f.name]) for f in fields]
    elif isinstance(value, tuple) and len(value) == len(fields):
        items = list(zip(fields, value))
    else:
        raise TypeError(f"argument `{label}` ({layout.type}) must be a dict of its fields or a tuple of "
                        f"{len(fields)} values, got {_describe(value)}")
    for f, v in items:
        _store(record[f.name], f.layout, v, f"{label}.{f.name}")


def _store(target, layout: Layout, value, label: str) -> None:
    if layout.is_struct:
        _store_fields(target, layout, value, label)
    elif layout.elem is not None:
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
            raise TypeError(f"argument `{label}` ({layout.type}) must be a sequence of {layout.length} "
                            f"values, got {_describe(value)}")
        if len(value) != layout.length:
            raise ValueError(f"argument `{label}` ({layout.type}) must have exactly {layout.length} "
                             f"elements, got {len(value)}")
        for k, v in enumerate(value):
            _store(target[k, ...], layout.elem, v, f"{label}[{k}]")
    elif PRIMITIVES[layout.type].kind == "half":
        target.view("<u2")[()] = scalar_value(label, layout.type, value)  # its bits
    else:
        target[()] = scalar_value(label, layout.type, value)


def check_aliasing(params: tuple[Param, ...], arrays: dict[str, ArrayArg]) -> None:
    """Rust forbids a `&mut` borrow overlapping any other borrow; so does every launch."""
    names = [p.name for p in params if p.name in arrays]
    for i, name in enumerate(names):
        for other in names[i + 1:]:
            a, b = arrays[name], arrays[other]
            mutable = [p.name for p in params if p.name in (name, other) and p.mutable]
            if mutable and a.overlaps(b):
                raise AliasError(f"arguments `{name}` and `{other}` overlap in memory, but `{mutable[0]}` is a "
                                 f"`&mut` borrow: Rust forbids this aliasing, and the kernel was proved race-free "
                                 f"assuming it cannot happen. Pass separate arrays (e.g. a copy).")


def pack(format_char: str, value) -> bytes:
    return struct.pack("<" + format_char, value)
