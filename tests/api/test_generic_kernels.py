"""Calling a generic kernel from Python: the call runs the instantiation whose types the arguments have, the
way rustc infers the type parameters at a call site; when none or several fit, a TypeError lists them. A
generic kernel without `types(...)` is instantiated at the first call whose arguments name its types.

Expected values: the arithmetic of the instantiation's type, done by numpy in that type (IEEE, no fused
multiply-add, as rustc compiles `a * x + y`), so a result in the wrong precision shows.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from rs2gpu import pipeline
from rs2gpu.ir.abi import GenericInstance

GENERIC_RS = """\
use rs2gpu::kernel;
use std::ops::{Add, Mul};

#[kernel(types(f32, f64))]
pub fn axpy<T: Copy + Add<Output = T> + Mul<Output = T>>(y: &mut [T], x: &[T], a: T) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi = a * *xi + *yi;
    }
}

#[kernel(types(f32, f64))]
pub fn less<T: Copy + PartialOrd>(out: &mut [u8], a: T, b: T) {
    for o in out.iter_mut() {
        *o = if a < b { 1 } else { 0 };
    }
}
"""


@pytest.fixture(scope="module")
def generic(kernel_cache, tmp_path_factory) -> rs2gpu.api.KernelModule:
    path = tmp_path_factory.mktemp("generic") / "generic.rs"
    path.write_text(GENERIC_RS)
    return rs2gpu.load(Path(path), backend="cpu")


def test_float32_arrays_run_the_f32_instantiation(generic) -> None:
    rng = np.random.default_rng(1)
    y, x = rng.random(9, dtype=np.float32), rng.random(9, dtype=np.float32)
    want = np.float32(0.1) * x + y  # 0.1 rounded to f32 first, as the f32 parameter is
    generic.axpy(y, x, 0.1)
    assert generic.axpy.last is generic.axpy_f32
    assert y.tobytes() == want.tobytes()


def test_float64_arrays_run_the_f64_instantiation_and_take_an_int_scalar(generic) -> None:
    y, x = np.full(4, 0.5), np.arange(4.0)
    generic.axpy(y, x, 3)
    assert generic.axpy.last is generic.axpy_f64
    assert y.tolist() == [0.5, 3.5, 6.5, 9.5]


def test_keyword_arguments_choose_as_positional_ones_do(generic) -> None:
    y, x = np.zeros(3, dtype=np.float32), np.ones(3, dtype=np.float32)
    generic.axpy(a=2.0, x=x, y=y)
    assert generic.axpy.last is generic.axpy_f32 and y.tolist() == [2.0, 2.0, 2.0]


def test_an_instantiation_is_named_by_its_type_arguments(generic) -> None:
    assert generic.axpy["f64"] is generic.axpy_f64
    assert generic.axpy[("f32",)] is generic.axpy_f32
    with pytest.raises(KeyError, match=r"`axpy` has no instantiation `axpy::<i32>`; it has axpy::<f32>, axpy::<f64>"):
        generic.axpy["i32"]


def test_arguments_no_instantiation_fits_are_a_type_error_listing_them(generic) -> None:
    with pytest.raises(TypeError) as raised:
        generic.axpy(np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int32), 1)
    assert str(raised.value) == (
        "axpy() has no instantiation for arguments (ndarray of int32, ndarray of int32, int); it has: "
        "axpy::<f32>(y: &mut [f32], x: &[f32], a: f32); axpy::<f64>(y: &mut [f64], x: &[f64], a: f64)")


def test_arrays_of_mixed_precision_fit_no_instantiation(generic) -> None:
    with pytest.raises(TypeError, match=r"axpy\(\) has no instantiation for arguments"):
        generic.axpy(np.zeros(2, dtype=np.float32), np.zeros(2), 1.0)


def test_python_floats_for_a_type_parameter_of_their_own_are_ambiguous(generic) -> None:
    with pytest.raises(TypeError, match=r"less\(\) with arguments \(ndarray of uint8, float, float\) fits several "
                                        r"instantiations: less::<f32>\(.*\); less::<f64>\(.*\); pass numpy scalars"):
        generic.less(np.zeros(2, dtype=np.uint8), 0.1, 0.1000000001)


def test_numpy_scalars_say_which_instantiation(generic) -> None:
    # 0.1 and 0.1000000001 are one f32 but two f64 values
    out = np.zeros(2, dtype=np.uint8)
    generic.less(out, np.float32(0.1), np.float32(0.1000000001))
    assert generic.less.last is generic.less_f32 and out.tolist() == [0, 0]
    generic.less(out, np.float64(0.1), np.float64(0.1000000001))
    assert generic.less.last is generic.less_f64 and out.tolist() == [1, 1]


# ---------------------------------------------------------------- generic kernels without types(...)

LAZY_RS = """\
use rs2gpu::kernel;
use std::ops::Mul;

#[kernel]
pub fn scale<T: Copy + Mul<Output = T>>(out: &mut [T], x: &[T], k: T) {
    for i in 0..out.len() {
        out[i] = x[i] * k;
    }
}

#[kernel]
pub fn below<T: Copy + PartialOrd>(out: &mut [u8], a: T, b: T) {
    for o in out.iter_mut() {
        *o = if a < b { 1 } else { 0 };
    }
}

#[kernel]
pub fn ones<T: Copy>(out: &mut [u64]) {
    for o in out.iter_mut() {
        *o = 1;
    }
}
"""


@pytest.fixture(scope="module")
def lazy_source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lazy") / "lazy.rs"
    path.write_text(LAZY_RS)
    return path


@pytest.fixture
def lazy(kernel_cache, lazy_source: Path) -> rs2gpu.api.KernelModule:
    """A module of its own for each test: the instantiations it lists are the test's (each is built once, in the
    disk cache, whichever test makes it first)."""
    return rs2gpu.load(lazy_source, backend="cpu")


def test_a_generic_kernel_without_types_has_no_instantiation_before_a_call(lazy) -> None:
    assert lazy.scale.instantiations == [] and "scale" not in lazy.abi.kernels
    assert repr(lazy.scale) == "<generic kernel scale<T>, instantiations: none yet>"


def test_a_call_instantiates_it_for_the_element_type_of_its_arrays(lazy) -> None:
    out, x = np.zeros(5, dtype=np.float32), np.linspace(0, 1, 5, dtype=np.float32)
    lazy.scale(out, x, 3)  # the int 3 is an f32 here: the arrays say what `T` is
    assert out.tobytes() == (x * np.float32(3)).tobytes()
    assert lazy.scale.instantiations == ["scale::<f32>"]


def test_each_new_signature_makes_one_instantiation(lazy) -> None:
    lazy.scale(np.zeros(2, dtype=np.float32), np.ones(2, dtype=np.float32), 2.0)
    out = np.zeros(3, dtype=np.int64)
    lazy.scale(out, np.arange(3, dtype=np.int64), -2)
    lazy.scale(np.zeros(2, dtype=np.float32), np.ones(2, dtype=np.float32), 4.0)
    assert out.tolist() == [0, -2, -4]
    assert lazy.scale.instantiations == ["scale::<f32>", "scale::<i64>"]
    assert repr(lazy.scale) == "<generic kernel scale<T>, instantiations: scale::<f32>, scale::<i64>>"


def test_python_scalars_alone_are_f64_i64_and_bool_as_in_numba(lazy) -> None:
    results = []
    for a, b in [(0.1, 0.1000000001), (-1, 2), (np.float32(0.1), np.float32(0.1000000001))]:
        out = np.zeros(2, dtype=np.uint8)
        lazy.below(out, a, b)
        results.append(out.tolist())
    # 0.1 and 0.1000000001 are two f64 values but one f32 value
    assert results == [[1, 1], [1, 1], [0, 0]]
    assert lazy.below.instantiations == ["below::<f64>", "below::<i64>", "below::<f32>"]


def test_an_int_and_a_float_for_one_type_parameter_are_a_type_error(lazy) -> None:
    with pytest.raises(TypeError, match=r"^below\(\): mismatched types: `T` is `i64` from argument `a` but `f64` from "
                                        r"argument `b`; pass numpy scalars"):
        lazy.below(np.zeros(2, dtype=np.uint8), 1, 2.5)


def test_arrays_of_two_dtypes_for_one_type_parameter_are_a_type_error(lazy) -> None:
    with pytest.raises(TypeError, match=r"^scale\(\): mismatched types: `T` is `f32` from argument `out` but `f64` "
                                        r"from argument `x`$"):
        lazy.scale(np.zeros(2, dtype=np.float32), np.zeros(2), 1.0)
    assert lazy.scale.instantiations == []


def test_a_type_its_bounds_do_not_admit_is_a_type_error(lazy) -> None:
    with pytest.raises(TypeError, match=r"^scale\(\): the trait bound `bool: Mul` is not satisfied \(`T` is `bool` "
                                        r"from argument `out`\)$"):
        lazy.scale(np.zeros(2, dtype=bool), np.zeros(2, dtype=bool), True)


def test_a_type_parameter_no_argument_names_is_named_by_the_caller(lazy) -> None:
    out = np.zeros(3, dtype=np.uint64)
    with pytest.raises(TypeError, match=r"^ones\(\): cannot infer type parameter `T` from the arguments; name the "
                                        r"instantiation, e.g. ones\['f32'\]\(...\)$"):
        lazy.ones(out)
    lazy.ones["u8"](out)
    assert out.tolist() == [1, 1, 1] and lazy.ones.instantiations == ["ones::<u8>"]


def test_a_named_instantiation_is_made_once_and_checked_against_the_bounds(lazy) -> None:
    assert lazy.scale["f64"] is lazy.scale[("f64",)]
    with pytest.raises(KeyError, match=r"`scale` has 1 type parameter\(s\) \(T\), got 2: f32, f32"):
        lazy.scale["f32", "f32"]
    with pytest.raises(TypeError, match=r"the trait bound `bool: Mul` is not satisfied \(`T` is `bool` as its type "
                                        r"argument\)"):
        lazy.scale["bool"]
    assert lazy.scale.instantiations == ["scale::<f64>"]


def test_an_instantiation_is_built_once_in_the_disk_cache(kernel_cache: Path, lazy_source: Path) -> None:
    first = rs2gpu.load(lazy_source, backend="cpu")
    first.scale(np.zeros(2, dtype=np.int16), np.ones(2, dtype=np.int16), 3)
    built = sorted((kernel_cache / "cpu").iterdir())
    again = rs2gpu.load(lazy_source, backend="cpu")
    out = np.zeros(2, dtype=np.int16)
    again.scale(out, np.ones(2, dtype=np.int16), 3)
    assert out.tolist() == [3, 3] and sorted((kernel_cache / "cpu").iterdir()) == built


def test_translation_gives_code_only_for_the_instantiations_named(lazy_source: Path) -> None:
    assert not any(entry.generic for entry in pipeline.translate(lazy_source).emitted.abi.kernels.values())
    named = pipeline.translate(lazy_source, instances={"scale": [("f32",), ("u16",)]}).emitted.abi.kernels
    assert [(key, entry.generic) for key, entry in named.items()] == [
        ("scale_f32", GenericInstance("scale", ("f32",))), ("scale_u16", GenericInstance("scale", ("u16",)))]
