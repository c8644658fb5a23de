"""Calling a generic kernel from Python: the call runs the instantiation whose types the arguments have, the
way rustc infers the type parameters at a call site; when none or several fit, a TypeError lists them.

Expected values: the arithmetic of the instantiation's type, done by numpy in that type (IEEE, no fused
multiply-add, as rustc compiles `a * x + y`), so a result in the wrong precision shows.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

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
