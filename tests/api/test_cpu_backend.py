"""The Python API on the CPU backend: `rs2gpu.load(path, backend="cpu")` runs the crate's own Rust, built by
rustc, with the same argument checks as the GPU backends.

Expected values come from numpy evaluating each kernel's formula in the Rust source's order of operations.
IEEE doubles round + - * / and sqrt the same way everywhere, and rustc never fuses a multiply and an add on
its own, so those results are compared bitwise.
"""
from __future__ import annotations

import re

import importlib.util
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from rs2gpu.ir.abi import ParamKind
from rs2gpu.runtime.errors import ToolchainUnavailable

from tests.support.paths import RAJAPERF

SIZES = [0, 1, 1000]


@dataclass
class Case:
    """One call: its arguments in parameter order, and the arrays the formula gives, by argument position."""

    args: list
    expected: dict = field(default_factory=dict)


def data(rng: np.random.Generator, n: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return rng.uniform(lo, hi, n)


def unwritten(n: int) -> np.ndarray:
    """An output array whose every element the kernel must overwrite."""
    return np.full(n, np.nan)


def copy_case(rng, n):
    c, a = unwritten(n), data(rng, n)
    return Case([c, a], {0: a.copy()})


def mul_case(rng, n):
    b, c, alpha = unwritten(n), data(rng, n), 1.7
    return Case([b, c, alpha], {0: alpha * c})


def add_case(rng, n):
    c, a, b = unwritten(n), data(rng, n), data(rng, n)
    return Case([c, a, b], {0: a + b})


def triad_case(rng, n):
    a, b, c, alpha = unwritten(n), data(rng, n), data(rng, n), -0.3
    return Case([a, b, c, alpha], {0: b + alpha * c})


def dot_case(rng, n):
    return Case([data(rng, n), data(rng, n)])


def daxpy_case(rng, n):
    y, x, a = data(rng, n), data(rng, n), 2.3
    return Case([y, x, a], {0: y + a * x})  # y[i] += a * x[i]


def init3_case(rng, n):
    in1, in2 = data(rng, n), data(rng, n)
    value = -in1 - in2
    return Case([unwritten(n), unwritten(n), unwritten(n), in1, in2], {0: value, 1: value, 2: value})


def muladdsub_case(rng, n):
    in1, in2 = data(rng, n), data(rng, n)
    return Case([unwritten(n), unwritten(n), unwritten(n), in1, in2], {0: in1 * in2, 1: in1 + in2, 2: in1 - in2})


def if_quad_case(rng, n):
    # about half of the discriminants are negative
    a, b, c = data(rng, n, 0.5, 2.0), data(rng, n, -3.0, 3.0), data(rng, n, -1.0, 2.0)
    s = b * b - 4.0 * a * c
    root = np.sqrt(np.where(s >= 0.0, s, 0.0))
    x2 = np.where(s >= 0.0, (-b + root) / (2.0 * a), 0.0)
    x1 = np.where(s >= 0.0, (-b - root) / (2.0 * a), 0.0)
    return Case([a, b, c, unwritten(n), unwritten(n)], {3: x1, 4: x2})


def init_view1d_case(rng, n):
    v = 0.00000123
    return Case([unwritten(n), v], {0: (np.arange(n) + 1).astype(np.float64) * v})


def init_view1d_offset_case(rng, n):
    v = 0.00000123
    return Case([unwritten(n), v], {0: np.arange(1, n + 1).astype(np.float64) * v})  # a[i - 1] = i * v


def eos_case(rng, n):
    x, y, z, u = unwritten(n), data(rng, n), data(rng, n), data(rng, n + 7)
    q, r, t = 0.5, 0.7, 0.9
    u0, u1, u2, u3, u4, u5, u6 = (u[k:k + n] for k in range(7))
    expected = u0 + r * (z + r * y) + t * (u3 + r * (u2 + r * u1) + t * (u6 + q * (u5 + q * u4)))
    return Case([x, y, z, u, q, r, t], {0: expected})


def first_diff_case(rng, n):
    y = data(rng, n + 1)
    return Case([unwritten(n), y], {0: y[1:] - y[:-1]})


def hydro_1d_case(rng, n):
    y, z = data(rng, n), data(rng, n + 12)
    q, r, t = 0.1, 0.2, 0.3
    return Case([unwritten(n), y, z, q, r, t], {0: q + y * (r * z[10:n + 10] + t * z[11:n + 11])})


def planckian_case(rng, n):
    x, u, v = data(rng, n, 0.5, 2.0), data(rng, n, 0.5, 2.0), data(rng, n, 0.5, 2.0)
    y = u / v
    # f64::exp calls the C library's exp, as math.exp does, in this same process: the same function
    w = x / (np.array([math.exp(e) for e in y]) - 1.0)
    return Case([x, unwritten(n), u, v, unwritten(n)], {1: y, 4: w})


def multi_reduce_case(rng, n):
    bins = 10
    values, data_, where = data(rng, bins), data(rng, n), rng.integers(0, bins, n).astype(np.uint64)
    expected = values.tolist()
    for i in range(n):  # values[bins[i]] += data[i], in the order of i
        expected[int(where[i])] += float(data_[i])
    return Case([values, data_, where], {0: np.array(expected)})


def nodal_accumulation_3d_case(rng, n):
    # n zones (repeats allowed) of a 12 x 11 x 11 node box: jp = 12, kp = 132; each adds vol/8 to its corners
    jp, kp, nodes = 12, 132, 1452
    x, vol = data(rng, nodes), data(rng, nodes)
    zones = rng.integers(0, nodes - 1 - jp - kp, n).astype(np.uint64)
    expected = x.tolist()
    for i in map(int, zones):
        val = 0.125 * float(vol[i])
        for corner in (0, 1, jp, 1 + jp, kp, 1 + kp, jp + kp, 1 + jp + kp):
            expected[i + corner] += val
    return Case([x, vol, zones, jp, kp], {0: np.array(expected)})


CASES = {
    "copy": copy_case, "mul": mul_case, "add": add_case, "triad": triad_case, "dot": dot_case,
    "daxpy": daxpy_case, "init3": init3_case, "muladdsub": muladdsub_case, "if_quad": if_quad_case,
    "init_view1d": init_view1d_case, "init_view1d_offset": init_view1d_offset_case,
    "eos": eos_case, "first_diff": first_diff_case, "hydro_1d": hydro_1d_case, "planckian": planckian_case,
    "multi_reduce": multi_reduce_case, "nodal_accumulation_3d": nodal_accumulation_3d_case,
}


def location(crate: Path, file: str, statement: str, fragment: str) -> str:
    """`FILE:LINE:COL` of `fragment` in the line of code holding `statement` (1-based, as Rust's panic
    location prints it)."""
    lines = (crate / file).read_text().splitlines()
    number = next(k for k, line in enumerate(lines) if statement in line and not line.lstrip().startswith("//"))
    return f"{file}:{number + 1}:{lines[number].index(fragment) + 1}"


# ---------------------------------------------------------------- every example kernel


def test_every_example_kernel_has_a_numpy_case_or_a_rust_unit_test(rajaperf) -> None:
    # The element-wise kernels are checked here against numpy formulas; the RAJAPerf corpus kernels with
    # richer inputs (structs, index lists, grids) are checked by the crate's own `cargo test` cases.
    test_modules = "\n".join(p.read_text().partition("mod tests")[2] for p in (RAJAPERF / "src").glob("*.rs"))
    unit_tested = {name for name in rajaperf.kernels if re.search(rf"\b{name}\(", test_modules)}
    assert set(CASES) <= set(rajaperf.kernels)
    assert set(rajaperf.kernels) - set(CASES) - unit_tested == set()


def test_module_reports_its_backend(rajaperf) -> None:
    assert rajaperf.backend == "cpu"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_gives_its_formula_bitwise(rajaperf, name: str, n: int) -> None:
    case = CASES[name](np.random.default_rng(n), n)
    getattr(rajaperf, name)(*case.args)
    for position, expected in case.expected.items():
        assert np.array_equal(case.args[position], expected), f"argument {position} of {name}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_shared_slices_are_left_untouched(rajaperf, name: str) -> None:
    case = CASES[name](np.random.default_rng(7), 100)
    shared = [k for k, p in enumerate(rajaperf.abi.kernels[name].params)
              if p.kind == ParamKind.SLICE and not p.mutable]
    before = {k: case.args[k].tobytes() for k in shared}
    getattr(rajaperf, name)(*case.args)
    assert {k: case.args[k].tobytes() for k in shared} == before


@pytest.mark.parametrize("n", SIZES)
def test_dot_returns_the_sum_in_loop_order(rajaperf, n: int) -> None:
    rng = np.random.default_rng(n)
    a, b = data(rng, n), data(rng, n)
    total = 0.0
    for x, y in zip(a.tolist(), b.tolist()):
        total += x * y
    result = rajaperf.dot(a, b)
    assert type(result) is float and result == total


def test_dot_of_empty_slices_is_zero(rajaperf) -> None:
    assert rajaperf.dot(np.zeros(0), np.zeros(0)) == 0.0


def test_multi_dimensional_arrays_are_passed_as_their_flat_elements(rajaperf) -> None:
    a, b, c = np.zeros((4, 5)), np.arange(20.0).reshape(4, 5), np.ones((2, 10))
    rajaperf.add(a, b, c)
    assert np.array_equal(a, np.arange(20.0).reshape(4, 5) + 1.0)


# ---------------------------------------------------------------- aliasing


def test_same_array_as_mutable_and_shared_argument_is_refused(rajaperf) -> None:
    x, b = np.arange(10.0), np.ones(10)
    before = x.copy()
    with pytest.raises(rs2gpu.AliasError, match="`c` and `a` overlap"):
        rajaperf.add(x, x, b)
    assert np.array_equal(x, before)


def test_overlapping_views_are_refused(rajaperf) -> None:
    x = np.arange(20.0)
    before = x.copy()
    with pytest.raises(rs2gpu.AliasError):
        rajaperf.copy(x[0:10], x[5:15])
    assert np.array_equal(x, before)


def test_overlapping_mutable_outputs_are_refused(rajaperf) -> None:
    x, in1, in2 = np.zeros(30), np.ones(10), np.ones(10)
    with pytest.raises(rs2gpu.AliasError, match="`out2` and `out3`"):
        rajaperf.init3(x[0:10], x[10:20], x[19:29], in1, in2)
    assert np.array_equal(x, np.zeros(30))


def test_disjoint_views_of_one_buffer_are_accepted(rajaperf) -> None:
    x = np.arange(20.0)
    rajaperf.copy(x[10:20], x[0:10])
    assert np.array_equal(x, np.concatenate([np.arange(10.0), np.arange(10.0)]))


def test_two_shared_slices_may_be_the_same_array(rajaperf) -> None:
    # shared borrows may alias in Rust: add(&mut c, &a, &a)
    a, c = np.arange(10.0), np.zeros(10)
    rajaperf.add(c, a, a)
    assert np.array_equal(c, a + a)
    assert rajaperf.dot(a, a) == sum(v * v for v in a.tolist())


# ---------------------------------------------------------------- argument checks


def test_wrong_element_type_names_the_parameter(rajaperf) -> None:
    with pytest.raises(TypeError, match="argument `b` \\(&\\[f64\\]\\) needs elements of dtype float64, got float32"):
        rajaperf.triad(np.zeros(4), np.zeros(4, dtype=np.float32), np.zeros(4), 1.0)


def test_integer_array_is_not_converted(rajaperf) -> None:
    with pytest.raises(TypeError, match="argument `a`"):
        rajaperf.copy(np.zeros(4), np.arange(4))


def test_non_contiguous_array_is_refused(rajaperf) -> None:
    with pytest.raises(ValueError, match="argument `a` must be C-contiguous"):
        rajaperf.copy(np.zeros(5), np.arange(10.0)[::2])


def test_fortran_ordered_array_is_refused(rajaperf) -> None:
    with pytest.raises(ValueError, match="argument `c` must be C-contiguous"):
        rajaperf.copy(np.asfortranarray(np.zeros((3, 4))), np.zeros(12))


def test_read_only_array_is_refused_for_a_mutable_slice(rajaperf) -> None:
    c = np.zeros(4)
    c.flags.writeable = False
    with pytest.raises(ValueError, match="argument `c` is `&mut \\[f64\\]` but the array is read-only"):
        rajaperf.copy(c, np.ones(4))


def test_python_list_is_refused(rajaperf) -> None:
    with pytest.raises(TypeError, match="argument `a` \\(&\\[f64\\]\\) must be an array"):
        rajaperf.copy(np.zeros(2), [1.0, 2.0])


def test_too_few_arguments_are_refused(rajaperf) -> None:
    with pytest.raises(TypeError, match="triad\\(\\) missing argument\\(s\\): `alpha`"):
        rajaperf.triad(np.zeros(4), np.zeros(4), np.zeros(4))


def test_too_many_arguments_are_refused(rajaperf) -> None:
    with pytest.raises(TypeError, match="copy\\(\\) takes 2 arguments but 3 were given"):
        rajaperf.copy(np.zeros(4), np.zeros(4), np.zeros(4))


def test_bool_for_a_float_parameter_is_refused(rajaperf) -> None:
    with pytest.raises(TypeError, match="argument `alpha` \\(f64\\) must be a number, got bool"):
        rajaperf.mul(np.zeros(4), np.zeros(4), True)


def test_keyword_arguments_by_parameter_name(rajaperf) -> None:
    a, b, c = np.zeros(4), np.arange(4.0), np.ones(4)
    rajaperf.triad(c=c, alpha=2.0, a=a, b=b)
    assert np.array_equal(a, b + 2.0 * c)


def test_positional_and_keyword_arguments_mix(rajaperf) -> None:
    a, b, c = np.zeros(4), np.arange(4.0), np.ones(4)
    rajaperf.triad(a, b, alpha=3.0, c=c)
    assert np.array_equal(a, b + 3.0 * c)


def test_unknown_keyword_is_refused(rajaperf) -> None:
    with pytest.raises(TypeError, match="copy\\(\\) got an unexpected keyword argument `d`"):
        rajaperf.copy(np.zeros(4), np.zeros(4), d=np.zeros(4))


def test_keyword_repeating_a_positional_argument_is_refused(rajaperf) -> None:
    with pytest.raises(TypeError, match="copy\\(\\) got multiple values for argument `c`"):
        rajaperf.copy(np.zeros(4), np.zeros(4), c=np.zeros(4))


def test_unknown_kernel_name_lists_the_kernels(rajaperf) -> None:
    with pytest.raises(AttributeError, match="no kernel named `triadd`; kernels: add, .*, triad"):
        rajaperf.triadd


# ---------------------------------------------------------------- panics


def test_out_of_bounds_read_panics_with_rusts_message_and_location(rajaperf) -> None:
    # first_diff reads y[i + 1]: with y no longer than x, the last iteration reads y[n]
    n = 8
    x, y = np.zeros(n), np.arange(n, dtype=np.float64) ** 2
    y_before = y.tobytes()
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        rajaperf.first_diff(x, y)
    panic = caught.value
    assert panic.message == f"index out of bounds: the len is {n} but the index is {n}"
    assert panic.location == location(RAJAPERF, "src/lcals.rs", "x[i] = y[i + 1] - y[i];", "y[i + 1]")
    assert panic.kernel == "first_diff"
    # the host finds the read past the end before the Rust code runs, as for a GPU launch
    assert np.all(x == 0.0)
    assert y.tobytes() == y_before


def test_out_of_bounds_stencil_input_panics_at_the_first_read_past_the_end(rajaperf) -> None:
    # hydro_1d reads z[i + 10] before z[i + 11]: with z.len() == n + 10, z[n + 9 + 1] is the first past the end
    n = 5
    x = np.zeros(n)
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        rajaperf.hydro_1d(x, np.ones(n), np.ones(n + 10), 0.0, 1.0, 1.0)
    assert caught.value.message == f"index out of bounds: the len is {n + 10} but the index is {n + 10}"
    assert caught.value.location == location(RAJAPERF, "src/lcals.rs", "t * z[i + 11]", "z[i + 11]")
    assert np.all(x == 0.0)


def test_scatter_index_out_of_bounds_panics_where_the_device_check_reports_it(rajaperf) -> None:
    # values[bins[i]] += data[i] with bins[2] past the end: Rust panics at the update's place, having added
    # data[0] and data[1]; the GPU checks that index on the device, at a site the kernel ABI names
    values, bins = np.zeros(3), np.array([0, 2, 7, 1], dtype=np.uint64)
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        rajaperf.multi_reduce(values, np.ones(4), bins)
    assert caught.value.message == "index out of bounds: the len is 3 but the index is 7"
    assert caught.value.location == location(RAJAPERF, "src/basic.rs", "values[bins[i]] += data[i];", "values[bins[i]]")
    sites = {p.source for p in rajaperf.abi.kernels["multi_reduce"].panics if p.kind == "bounds"}
    assert caught.value.location in sites


def test_min_update_out_of_bounds_panics_at_the_read_on_the_right(probe, probe_crate: Path) -> None:
    # `lo[k] = lo[k].min(v)` reads lo[k] before it assigns: Rust's panic names the read, and so must the
    # device check of the update
    lo = np.full(2, 5.0)
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        probe.lowest(lo, np.array([1, 4], dtype=np.uint64), np.array([1.0, 2.0]))
    assert caught.value.message == "index out of bounds: the len is 2 but the index is 4"
    statement = "lo[idx[i]] = lo[idx[i]].min(v[i]);"
    right = location(probe_crate, "src/lib.rs", statement, "lo[idx[i]].min")
    assert caught.value.location == right
    sites = [p.source for p in probe.abi.kernels["lowest"].panics if p.kind == "bounds"]
    assert right in sites and location(probe_crate, "src/lib.rs", statement, "lo[idx[i]] =") not in sites
    assert lo.tolist() == [5.0, 5.0]  # what iteration 0 wrote before the panic was put back


def test_kernel_panic_is_a_runtime_error() -> None:
    assert issubclass(rs2gpu.KernelPanic, RuntimeError)


def test_module_keeps_working_after_a_panic(rajaperf) -> None:
    with pytest.raises(rs2gpu.KernelPanic):
        rajaperf.first_diff(np.zeros(3), np.zeros(3))
    x = np.zeros(3)
    rajaperf.first_diff(x, np.array([1.0, 4.0, 9.0, 16.0]))
    assert np.array_equal(x, [3.0, 5.0, 7.0])


# ---------------------------------------------------------------- loading


def test_unknown_backend_is_refused(kernel_cache) -> None:
    with pytest.raises(ValueError, match="unknown backend 'metal'"):
        rs2gpu.load(RAJAPERF, backend="metal")


def test_auto_backend_follows_the_backend_setting(kernel_cache, monkeypatch) -> None:
    monkeypatch.setenv("RS2GPU_BACKEND", "cpu")
    assert rs2gpu.load(RAJAPERF, backend="auto").backend == "cpu"


def test_cuda_backend_without_cupy_says_what_to_install(kernel_cache) -> None:
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("cupy is installed here")
    with pytest.raises(ToolchainUnavailable, match="the CUDA backend needs cupy: pip install"):
        rs2gpu.load(RAJAPERF, backend="cuda")


def test_cpu_library_is_built_in_the_cache_folder(rajaperf, kernel_cache: Path) -> None:
    assert Path(rajaperf.library_path).is_relative_to(kernel_cache.resolve())


def test_second_load_reuses_the_built_library(rajaperf, kernel_cache: Path) -> None:
    again = rs2gpu.load(RAJAPERF, backend="cpu")
    assert again.library_path == rajaperf.library_path


def test_kernel_file_outside_any_crate_loads_and_runs(kernel_cache, lone_file: Path) -> None:
    module = rs2gpu.load(lone_file, backend="cpu")
    rng = np.random.default_rng(3)
    y, x = rng.uniform(-1, 1, 100).astype(np.float32), rng.uniform(-1, 1, 100).astype(np.float32)
    # f32 arithmetic, each operation rounded to f32, as numpy does for float32 arrays
    expected = np.float32(0.1) * x + y
    module.saxpy(y, x, 0.1)
    assert np.array_equal(y, expected)


def test_lone_file_refuses_f64_arrays_for_f32_slices(kernel_cache, lone_file: Path) -> None:
    module = rs2gpu.load(lone_file, backend="cpu")
    with pytest.raises(TypeError, match="argument `y` \\(&mut \\[f32\\]\\) needs elements of dtype float32"):
        module.saxpy(np.zeros(3), np.zeros(3, dtype=np.float32), 1.0)


def test_parameters_may_have_any_name_the_shim_might_use_for_its_own(probe) -> None:
    rng = np.random.default_rng(5)
    a, out = data(rng, 100), unwritten(100)
    total = probe.shim_names(out, a, 7, 1.5, -2)
    expected_total = 0.0
    for value in a:  # the loop's order of additions
        expected_total += float(value)
    assert total == expected_total + 7.0
    assert np.array_equal(out, a * 1.5 + -2.0)


# ---------------------------------------------------------------- structs and integer scalars (probe crate)


AFFINE = {"scale": 2.5, "shift": 0.1, "steps": -3, "flag": 7}


def affine_expected(x: np.ndarray, p: dict) -> np.ndarray:
    # out[i] = x[i] * p.scale + p.shift as f64 + p.steps as f64 + p.flag as f64, with shift an f32
    return x * p["scale"] + float(np.float32(p["shift"])) + float(p["steps"]) + float(p["flag"])


def affine_record() -> np.ndarray:
    record = np.zeros(1, dtype=np.dtype([("scale", "f8"), ("shift", "f4"), ("steps", "i4"), ("flag", "u1")],
                                        align=True))
    record[0] = (2.5, 0.1, -3, 7)
    return record


@pytest.mark.parametrize("kernel, passed", [
    ("affine", lambda: AFFINE), ("affine", lambda: (2.5, 0.1, -3, 7)),
    ("affine_ref", affine_record), ("affine_ref", lambda: AFFINE), ("affine_ref", lambda: (2.5, 0.1, -3, 7))],
    ids=["by value from a dict", "by value from a tuple in field order",
         "by reference from a one-element record array", "by reference from a dict",
         "by reference from a tuple in field order"])
def test_a_struct_argument(probe, kernel: str, passed) -> None:
    x, out = np.linspace(-1.0, 1.0, 50), unwritten(50)
    getattr(probe, kernel)(out, x, passed())
    assert np.array_equal(out, affine_expected(x, AFFINE))


def test_struct_by_reference_of_another_kind_names_the_dtype_to_pass(probe) -> None:
    with pytest.raises(TypeError) as raised:
        probe.affine_ref(np.zeros(2), np.zeros(2), [2.5, 0.1, -3, 7])
    dtype = np.dtype({"names": ["scale", "shift", "steps", "flag"], "formats": ["<f8", "<f4", "<i4", "u1"],
                      "offsets": [0, 8, 12, 16], "itemsize": 24})
    assert str(raised.value) == (f"argument `p` (&Affine) must be a dict of its fields, a tuple in field order, or a "
                                 f"numpy record (an array of one element) of dtype {dtype}; got list")


def test_struct_field_of_the_wrong_type_names_the_field(probe) -> None:
    with pytest.raises(TypeError, match="argument `p.steps` \\(i32\\) must be an int, got float"):
        probe.affine(np.zeros(2), np.zeros(2), {**AFFINE, "steps": 2.7})


def test_struct_field_out_of_range_names_the_field(probe) -> None:
    with pytest.raises(ValueError, match="argument `p.flag` = 256 does not fit in u8"):
        probe.affine(np.zeros(2), np.zeros(2), {**AFFINE, "flag": 256})


PARTICLE = np.dtype([("mass", "f4"), ("pos", "f8"), ("id", "u2")], align=True)  # offsets 0, 8, 16; size 24


def particles(n: int) -> np.ndarray:
    rng = np.random.default_rng(11)
    ps = np.zeros(n, dtype=PARTICLE)
    ps["mass"], ps["pos"], ps["id"] = rng.uniform(0, 2, n), rng.uniform(-1, 1, n), rng.integers(0, 65536, n)
    return ps


def test_struct_slice_elements_are_read_field_by_field(probe) -> None:
    ps, out = particles(64), unwritten(64)
    probe.momentum(out, ps)
    assert np.array_equal(out, ps["mass"].astype(np.float64) * ps["pos"] + ps["id"].astype(np.float64))


def test_struct_slice_elements_are_written_in_place(probe) -> None:
    ps = particles(64)
    before = ps.copy()
    probe.renumber(ps, 40000)
    assert np.array_equal(ps["id"], (before["id"].astype(np.int64) + 40000) % 65536)  # u16 wrapping_add
    assert np.array_equal(ps["mass"], before["mass"]) and np.array_equal(ps["pos"], before["pos"])


def test_struct_slice_of_another_layout_is_refused(probe) -> None:
    packed = np.zeros(4, dtype=[("mass", "f4"), ("pos", "f8"), ("id", "u2")])
    with pytest.raises(TypeError, match="argument `ps`"):
        probe.momentum(np.zeros(4), packed)


def test_u32_scalar_takes_its_whole_range(probe) -> None:
    a, out = np.array([0, 1, 2, 4294967295], dtype=np.uint32), np.zeros(4, dtype=np.uint32)
    probe.scale_u32(out, a, 4294967295)
    # a[i].wrapping_mul(u32::MAX) == -a[i] mod 2^32
    assert out.tolist() == [(v * 4294967295) % 2**32 for v in a.tolist()]


@pytest.mark.parametrize("k", [-1, 2**32])
def test_u32_scalar_out_of_range_is_refused(probe, k: int) -> None:
    out = np.zeros(2, dtype=np.uint32)
    with pytest.raises(ValueError, match=f"argument `k` = {k} does not fit in u32"):
        probe.scale_u32(out, np.ones(2, dtype=np.uint32), k)
    assert out.tolist() == [0, 0]


def test_i32_scalar_out_of_range_is_refused(probe) -> None:
    with pytest.raises(ValueError, match="argument `lo` = 2147483648 does not fit in i32"):
        probe.count_above(np.zeros(2, dtype=np.int32), 2**31)


def test_tuple_result_is_a_python_tuple(probe) -> None:
    a = np.array([5, -2, 7, 0, 3], dtype=np.int32)
    assert probe.count_above(a, 0) == (3, 15.0)


def test_fixed_size_array_parameter(probe) -> None:
    out = unwritten(10)
    probe.cycle(out, np.array([1.0, 2.0, 3.0, 4.0]))
    assert out.tolist() == [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0, 1.0, 2.0]


def test_fixed_size_array_of_the_wrong_length_is_refused(probe) -> None:
    with pytest.raises(ValueError, match="argument `table` \\(&\\[f64; 4\\]\\) must have exactly 4 elements, got 3"):
        probe.cycle(np.zeros(4), np.zeros(3))


def test_division_by_zero_before_the_loop_panics_in_the_rust_code(probe, probe_crate: Path) -> None:
    # `let width = out.len() / parts;` with parts == 0
    out = np.zeros(4)
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        probe.first_part(out, 0)
    assert caught.value.message == "attempt to divide by zero"
    assert caught.value.location == location(probe_crate, "src/lib.rs", "let width", "out.len() / parts")
    assert out.tolist() == [0.0] * 4


def test_identical_crate_elsewhere_reuses_the_library_and_reports_its_own_locations(
        probe, probe_crate: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    shutil.copytree(probe_crate, moved)
    module = rs2gpu.load(moved, backend="cpu")
    assert module.library_path == probe.library_path
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        module.first_part(np.zeros(4), 0)
    assert caught.value.location == location(moved, "src/lib.rs", "let width", "out.len() / parts")


def test_division_before_the_loop_sets_the_loop_bound(probe) -> None:
    out = np.zeros(6)
    probe.first_part(out, 4)  # width = 6 / 4 = 1
    assert out.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
