"""Python call arguments are checked the way a Rust caller's are by the type system: element types, lengths,
alignment, value ranges, and no `&mut` borrow overlapping another argument. numpy only; the parameters are
written by hand as the kernel ABI's `Param`s.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from rs2gpu.ir.abi import ArgPart, ArgRole, FieldLayout, Layout, Param, ParamKind, Transfer
from rs2gpu.runtime.arguments import (array_argument, check_aliasing, check_array_length, numpy_dtype, scalar_value,
                                      struct_value)
from rs2gpu.runtime.errors import AliasError

PRIM_SIZES = {"bool": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "f32": 4,
              "i64": 8, "u64": 8, "isize": 8, "usize": 8, "f64": 8}


def prim(ty: str) -> Layout:
    return Layout(ty, PRIM_SIZES[ty], PRIM_SIZES[ty])


def pointer(name: str) -> ArgPart:
    return ArgPart(name, ArgRole.POINTER, 8, 8)


def reference_param(name: str, rust_type: str, kind: ParamKind, layout: Layout, mutable: bool = False,
                    length: int | None = None) -> Param:
    """A parameter in memory: a slice (a pointer and a length), an array or a referenced struct (a pointer)."""
    parts = (pointer(name), ArgPart(f"{name}_len", ArgRole.LENGTH, 8, 8)) if kind == ParamKind.SLICE \
        else (pointer(name),)
    transfer, reason = (Transfer.INOUT, "read and written") if mutable else (Transfer.IN, "shared reference")
    return Param(name, rust_type, kind, mutable, transfer, reason, parts, layout, length)


def slice_param(name: str, elem: str = "f64", mutable: bool = False) -> Param:
    return reference_param(name, f"&{'mut ' if mutable else ''}[{elem}]", ParamKind.SLICE, prim(elem), mutable)


# #[repr(C)] struct Affine { scale: f64, shift: f32, steps: i32, flag: u8 }: offsets 0, 8, 12, 16; size 24
# (rounded up to the 8-byte alignment of `scale`)
AFFINE = Layout("Affine", 24, 8, fields=(
    FieldLayout("scale", 0, prim("f64")),
    FieldLayout("shift", 8, prim("f32")),
    FieldLayout("steps", 12, prim("i32")),
    FieldLayout("flag", 16, prim("u8")),
))
# #[repr(C)] struct Body { pos: [f32; 3], inner: Affine }: `pos` at 0 (12 bytes), `inner` at 16; size 40
BODY = Layout("Body", 40, 8, fields=(
    FieldLayout("pos", 0, Layout("[f32; 3]", 12, 4, elem=prim("f32"), length=3)),
    FieldLayout("inner", 16, AFFINE),
))


def struct_param(name: str, layout: Layout) -> Param:
    return Param(name, layout.type, ParamKind.STRUCT, False, Transfer.VALUE, "passed by value",
                 (ArgPart(name, ArgRole.VALUE, layout.size, layout.align),), layout)


def affine_bytes(scale: float, shift: float, steps: int, flag: int) -> bytes:
    return struct.pack("<dfiB7x", scale, shift, steps, flag)


# ---------------------------------------------------------------- arrays


def test_numpy_array_is_passed_by_address_and_element_count() -> None:
    a = np.arange(7.0)
    arg = array_argument(slice_param("a"), a, allow_device=False)
    assert (arg.ptr, arg.count, arg.nbytes, arg.device) == (a.ctypes.data, 7, 56, None)


def test_host_view_shares_the_callers_memory() -> None:
    a = np.arange(7.0)
    arg = array_argument(slice_param("a", mutable=True), a, allow_device=False)
    assert np.shares_memory(arg.host, a) and arg.writable


def test_c_contiguous_2d_array_is_accepted_as_its_flat_elements() -> None:
    a = np.arange(12.0).reshape(3, 4)
    arg = array_argument(slice_param("a"), a, allow_device=False)
    assert arg.count == 12
    assert arg.host.shape == (12,) and np.array_equal(arg.host, np.arange(12.0)) and np.shares_memory(arg.host, a)


def test_fortran_ordered_2d_array_is_rejected() -> None:
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    with pytest.raises(ValueError, match="`a` must be C-contiguous"):
        array_argument(slice_param("a"), a, allow_device=False)


def test_strided_view_is_rejected() -> None:
    with pytest.raises(ValueError, match="`a` must be C-contiguous"):
        array_argument(slice_param("a"), np.arange(10.0)[::2], allow_device=False)


def test_read_only_array_is_rejected_for_a_mutable_slice() -> None:
    a = np.arange(4.0)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="`out` is `&mut \\[f64\\]` but the array is read-only"):
        array_argument(slice_param("out", mutable=True), a, allow_device=False)


def test_read_only_array_is_accepted_for_a_shared_slice() -> None:
    a = np.arange(4.0)
    a.flags.writeable = False
    assert array_argument(slice_param("a"), a, allow_device=False).count == 4


@pytest.mark.parametrize("dtype", ["f4", "i8", ">f8"])
def test_element_type_must_match_exactly(dtype: str) -> None:
    # no silent conversion: f32 or i64 elements, or big-endian doubles, are not a &[f64]
    with pytest.raises(TypeError, match="argument `x` \\(&\\[f64\\]\\) needs elements of dtype float64"):
        array_argument(slice_param("x"), np.zeros(3, dtype=dtype), allow_device=False)


def test_python_list_is_rejected() -> None:
    with pytest.raises(TypeError, match="argument `x` \\(&\\[f64\\]\\) must be an array .* got list"):
        array_argument(slice_param("x"), [1.0, 2.0], allow_device=False)


def test_object_with_array_interface_is_accepted() -> None:
    a = np.arange(5.0)

    class Wrapper:
        __array_interface__ = a.__array_interface__

    arg = array_argument(slice_param("a"), Wrapper(), allow_device=False)
    assert (arg.ptr, arg.count) == (a.ctypes.data, 5)


def test_misaligned_view_is_rejected() -> None:
    # a &[f64] is always 8-byte aligned; np.frombuffer at an odd offset is not
    a = np.frombuffer(bytearray(8 * 5 + 1), dtype=np.float64, offset=1, count=5)
    with pytest.raises(ValueError, match="`a` \\(&\\[f64\\]\\) must be aligned to 8 bytes"):
        array_argument(slice_param("a"), a, allow_device=False)


def test_gpu_array_is_rejected_by_a_host_backend() -> None:
    class DeviceArray:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (0x7F0000000000, False),
                                    "strides": None, "version": 3}

    with pytest.raises(TypeError, match="`a` is GPU memory"):
        array_argument(slice_param("a"), DeviceArray(), allow_device=False)


def test_gpu_array_is_passed_by_device_address_to_a_device_backend() -> None:
    class DeviceArray:
        __cuda_array_interface__ = {"shape": (2, 3), "typestr": "<f8", "data": (0x7F0000000000, False),
                                    "strides": None, "version": 3}

    arg = array_argument(slice_param("a", mutable=True), DeviceArray(), allow_device=True)
    assert (arg.ptr, arg.count, arg.nbytes, arg.host, arg.device) == (0x7F0000000000, 6, 48, None, 0)


def test_fixed_size_array_needs_exactly_its_length() -> None:
    param = reference_param("table", "&[f64; 4]", ParamKind.ARRAY, prim("f64"), length=4)
    check_array_length(param, array_argument(param, np.zeros(4), allow_device=False))
    with pytest.raises(ValueError, match="`table` \\(&\\[f64; 4\\]\\) must have exactly 4 elements, got 3"):
        check_array_length(param, array_argument(param, np.zeros(3), allow_device=False))


def test_struct_reference_needs_exactly_one_record() -> None:
    param = reference_param("p", "&Affine", ParamKind.STRUCT_REF, AFFINE)
    records = np.zeros(2, dtype=numpy_dtype(AFFINE))
    with pytest.raises(ValueError, match="`p` \\(&Affine\\) must be one struct, got 2 elements"):
        check_array_length(param, array_argument(param, records, allow_device=False))


def test_struct_dtype_has_the_repr_c_layout() -> None:
    dtype = numpy_dtype(AFFINE)
    assert dtype.itemsize == 24
    assert [dtype.fields[n][1] for n in ("scale", "shift", "steps", "flag")] == [0, 8, 12, 16]


def test_aligned_numpy_struct_dtype_is_accepted_for_a_repr_c_slice() -> None:
    # numpy's align=True follows the same C layout rules as #[repr(C)]
    natural = np.dtype([("scale", "f8"), ("shift", "f4"), ("steps", "i4"), ("flag", "u1")], align=True)
    param = reference_param("ps", "&[Affine]", ParamKind.SLICE, AFFINE)
    assert array_argument(param, np.zeros(3, dtype=natural), allow_device=False).count == 3


def test_packed_numpy_struct_dtype_is_rejected() -> None:
    packed = np.dtype([("scale", "f8"), ("shift", "f4"), ("steps", "i4"), ("flag", "u1")])
    param = reference_param("ps", "&[Affine]", ParamKind.SLICE, AFFINE)
    with pytest.raises(TypeError, match="`ps`"):
        array_argument(param, np.zeros(3, dtype=packed), allow_device=False)


# ---------------------------------------------------------------- aliasing


def arrays_of(params: tuple[Param, ...], *values) -> dict:
    return {p.name: array_argument(p, v, allow_device=False) for p, v in zip(params, values)}


OUT_IN = (slice_param("out", mutable=True), slice_param("inp"))


def test_mutable_slice_may_not_be_the_same_array_as_another_argument() -> None:
    x = np.zeros(8)
    with pytest.raises(AliasError, match="arguments `out` and `inp` overlap in memory, but `out` is a `&mut` borrow"):
        check_aliasing(OUT_IN, arrays_of(OUT_IN, x, x))


def test_mutable_slice_may_not_overlap_part_of_another_argument() -> None:
    x = np.zeros(20)
    with pytest.raises(AliasError):
        check_aliasing(OUT_IN, arrays_of(OUT_IN, x[0:10], x[9:19]))


def test_two_mutable_slices_may_not_overlap() -> None:
    params = (slice_param("a", mutable=True), slice_param("b", mutable=True))
    x = np.zeros(20)
    with pytest.raises(AliasError, match="`a` and `b`"):
        check_aliasing(params, arrays_of(params, x[0:10], x[5:15]))


def test_adjacent_views_of_one_buffer_do_not_overlap() -> None:
    x = np.zeros(20)
    check_aliasing(OUT_IN, arrays_of(OUT_IN, x[0:10], x[10:20]))


def test_two_shared_slices_may_be_the_same_array() -> None:
    params = (slice_param("a"), slice_param("b"))
    x = np.zeros(8)
    check_aliasing(params, arrays_of(params, x, x))


def test_empty_mutable_slice_overlaps_nothing() -> None:
    # it has no bytes, so nothing can be written through it
    x = np.zeros(8)
    check_aliasing(OUT_IN, arrays_of(OUT_IN, x[3:3], x))


def test_alias_error_is_a_value_error() -> None:
    assert issubclass(AliasError, ValueError)


# ---------------------------------------------------------------- scalars


def test_bool_parameter_takes_a_bool() -> None:
    assert scalar_value("flag", "bool", True) is True
    assert scalar_value("flag", "bool", np.bool_(False)) is False


def test_bool_parameter_rejects_an_int() -> None:
    with pytest.raises(TypeError, match="argument `flag` \\(bool\\) must be a bool, got int"):
        scalar_value("flag", "bool", 1)


def test_int_parameter_rejects_a_bool() -> None:
    # Rust has no implicit bool -> integer conversion
    with pytest.raises(TypeError, match="argument `n` \\(i32\\) must be an int, got bool"):
        scalar_value("n", "i32", True)


def test_int_parameter_rejects_a_float_even_when_integral() -> None:
    with pytest.raises(TypeError, match="argument `n` \\(usize\\) must be an int, got float"):
        scalar_value("n", "usize", 2.0)


def test_numpy_integer_is_accepted_as_a_python_int() -> None:
    value = scalar_value("n", "i64", np.int16(-5))
    assert value == -5 and type(value) is int


@pytest.mark.parametrize(("ty", "lo", "hi"), [("i8", -128, 127), ("u8", 0, 255), ("i32", -2**31, 2**31 - 1),
                                              ("u32", 0, 2**32 - 1), ("usize", 0, 2**64 - 1),
                                              ("i64", -2**63, 2**63 - 1)])
def test_int_parameter_takes_its_whole_range_and_nothing_beyond(ty: str, lo: int, hi: int) -> None:
    assert (scalar_value("n", ty, lo), scalar_value("n", ty, hi)) == (lo, hi)
    for outside in (lo - 1, hi + 1):
        with pytest.raises(ValueError, match=f"argument `n` = {outside} does not fit in {ty}"):
            scalar_value("n", ty, outside)


def test_float_parameter_rejects_a_bool_and_a_string() -> None:
    for value in (True, "1.0"):
        with pytest.raises(TypeError, match="argument `alpha` \\(f64\\) must be a number"):
            scalar_value("alpha", "f64", value)


def test_f64_parameter_takes_an_int_as_the_equal_double() -> None:
    assert scalar_value("alpha", "f64", 3) == 3.0


def test_f32_parameter_rounds_a_python_float_to_the_nearest_f32() -> None:
    # 0.1f32 as f64 == 0.10000000149011612 (rustc)
    assert scalar_value("alpha", "f32", 0.1) == 0.10000000149011612


def test_f32_parameter_rounds_a_large_int_once() -> None:
    # the literal 18014399583223809_f32 is 18014400656965632 (rustc): 2^54 + 2^30 + 1 rounds up to 2^54 + 2^31
    assert scalar_value("alpha", "f32", 2**54 + 2**30 + 1) == 2.0**54 + 2.0**31


def test_f32_parameter_rejects_a_finite_value_beyond_its_range() -> None:
    # rustc rejects the literal 1e39_f32 rather than make it infinite
    with pytest.raises(ValueError, match="argument `alpha` = 1e\\+39 does not fit in f32"):
        scalar_value("alpha", "f32", 1e39)


def test_f32_parameter_keeps_infinities_and_nan() -> None:
    assert scalar_value("alpha", "f32", float("inf")) == float("inf")
    assert scalar_value("alpha", "f32", float("-inf")) == float("-inf")
    assert np.isnan(scalar_value("alpha", "f32", float("nan")))


# ---------------------------------------------------------------- structs by value


def test_struct_from_a_dict_has_the_repr_c_bytes() -> None:
    value = {"scale": 2.5, "shift": 0.5, "steps": -3, "flag": 7}
    assert struct_value(struct_param("p", AFFINE), value) == affine_bytes(2.5, 0.5, -3, 7)


def test_struct_from_a_tuple_in_field_order_has_the_same_bytes() -> None:
    assert struct_value(struct_param("p", AFFINE), (2.5, 0.5, -3, 7)) == affine_bytes(2.5, 0.5, -3, 7)


def test_struct_from_a_numpy_record_has_the_same_bytes() -> None:
    record = np.zeros((), dtype=numpy_dtype(AFFINE))
    record[()] = (2.5, 0.5, -3, 7)
    assert struct_value(struct_param("p", AFFINE), record) == affine_bytes(2.5, 0.5, -3, 7)


def test_struct_f32_field_is_rounded_like_an_f32_argument() -> None:
    got = struct_value(struct_param("p", AFFINE), {"scale": 0.0, "shift": 0.1, "steps": 0, "flag": 0})
    assert got[8:12] == struct.pack("<f", 0.1)


def test_struct_with_a_missing_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="argument `p` \\(Affine\\): missing fields \\['flag'\\]"):
        struct_value(struct_param("p", AFFINE), {"scale": 1.0, "shift": 0.5, "steps": 3})


def test_struct_with_an_unknown_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown fields \\['speed'\\]"):
        struct_value(struct_param("p", AFFINE), {"scale": 1.0, "shift": 0.5, "steps": 3, "flag": 0, "speed": 1})


def test_struct_int_field_rejects_a_float() -> None:
    # numpy would truncate 2.7 to 2; Rust does not convert a float to an integer field
    with pytest.raises(TypeError, match="argument `p.steps` \\(i32\\) must be an int, got float"):
        struct_value(struct_param("p", AFFINE), {"scale": 1.0, "shift": 0.5, "steps": 2.7, "flag": 0})


def test_struct_int_field_rejects_a_value_out_of_range() -> None:
    with pytest.raises(ValueError, match="argument `p.flag` = 300 does not fit in u8"):
        struct_value(struct_param("p", AFFINE), {"scale": 1.0, "shift": 0.5, "steps": 2, "flag": 300})


def test_struct_with_an_array_field_and_a_nested_struct() -> None:
    value = {"pos": [1.0, 2.0, 3.5], "inner": {"scale": 2.5, "shift": 0.5, "steps": -3, "flag": 7}}
    expected = struct.pack("<3f4x", 1.0, 2.0, 3.5) + affine_bytes(2.5, 0.5, -3, 7)
    assert struct_value(struct_param("b", BODY), value) == expected


def test_nested_field_errors_name_the_path_to_the_field() -> None:
    value = {"pos": [1.0, 2.0, 3.5], "inner": {"scale": 2.5, "shift": 0.5, "steps": 1.5, "flag": 7}}
    with pytest.raises(TypeError, match="argument `b.inner.steps`"):
        struct_value(struct_param("b", BODY), value)


def test_array_field_needs_exactly_its_length() -> None:
    value = {"pos": [1.0, 2.0], "inner": (2.5, 0.5, -3, 7)}
    with pytest.raises(ValueError, match="argument `b.pos` \\(\\[f32; 3\\]\\) must have exactly 3 elements, got 2"):
        struct_value(struct_param("b", BODY), value)


def test_struct_rejects_a_list() -> None:
    with pytest.raises(TypeError, match="argument `p` \\(Affine\\) must be a dict of its fields"):
        struct_value(struct_param("p", AFFINE), [2.5, 0.5, -3, 7])


def test_struct_rejects_a_record_of_another_layout() -> None:
    other = np.zeros((), dtype=[("scale", "f8"), ("shift", "f8")])
    with pytest.raises(TypeError, match="argument `p` \\(Affine\\) needs elements of dtype"):
        struct_value(struct_param("p", AFFINE), other)


def test_an_array_type_with_a_c_contiguity_field_is_asked_through_it_and_others_through_flags() -> None:
    from rs2gpu.runtime.callplan import c_contiguous_of

    class WithField:  # cupy's ndarray keeps the answer in a C field, `_c_contiguous`
        _c_contiguous = False
        flags = type("Flags", (), {"c_contiguous": True})()

    class FlagsOnly:
        flags = type("Flags", (), {"c_contiguous": False})()

    assert c_contiguous_of(WithField)(WithField()) is False  # the field, not `.flags`
    assert c_contiguous_of(FlagsOnly)(FlagsOnly()) is False
    assert c_contiguous_of(np.ndarray)(np.zeros((4, 4))[:, 1]) is False
    assert c_contiguous_of(np.ndarray)(np.zeros(4)) is True
