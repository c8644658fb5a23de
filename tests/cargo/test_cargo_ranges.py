"""The Rust the hook generates for loop bounds (`kernels::ranges::<kernel>_<n>`) computes what rs2gpu's Python
runtime computes from the same kernel ABI: the expected values here come from `rs2gpu.runtime.hostexpr`, and a
Rust test in the crate asserts them against the generated functions, compiled by rustc and run on the CPU."""
from __future__ import annotations

import json
import re

from rs2gpu import pipeline
from rs2gpu.emit.rust_host import KernelModule, Types, literal
from rs2gpu.ir.abi import CrateABI, EntryKind, KernelABI
from rs2gpu.runtime.callplan import BoundArgs, CallPlan
from rs2gpu.runtime.errors import RaceError
from rs2gpu.runtime.hostexpr import Environment, HostPanic, evaluate

from tests.support.cargo_crates import cargo, hook_crate, needs_cargo

BOUNDS_LIB_RS = """\
use rs2gpu::kernel;

#[kernel]
pub fn interior(out: &mut [f32], u: &[f32], n: usize) {
    for i in 1..n - 1 {
        out[i] = u[i];
    }
}

#[kernel]
pub fn upto(out: &mut [u8], n: usize) {
    for i in 0..=n {
        out[i] = 1;
    }
}

#[kernel]
pub fn blocks(out: &mut [f64], n: usize, k: usize) {
    let m = n / k;
    let r = n % k;
    for i in 0..m + r {
        out[i] = 1.0;
    }
}

#[kernel]
pub fn signed_sum(lo: i32, hi: i32) -> i64 {
    let mut s = 0i64;
    for i in lo..=hi {
        s += i as i64;
    }
    s
}

#[kernel]
pub fn sum_to(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..=n {
        s += i;
    }
    s
}

#[kernel]
pub fn shifted(out: &mut [u8], s: u32) {
    for i in 0..(out.len() >> s) {
        out[i] = 1;
    }
}

#[kernel]
pub fn rows(out: &mut [f64], w: usize, stride: usize, h: usize) {
    for j in 0..h {
        for i in 0..w {
            out[j * stride + i] = 1.0;
        }
    }
}

#[kernel]
pub fn clamp_len(out: &mut [f32], limit: usize, scale: f64) {
    let cap = (limit as f64 * scale) as usize;
    for i in 0..out.len().min(cap) {
        out[i] = 0.0;
    }
}

#[kernel]
pub fn between(n: usize) -> u64 {
    let mut s = 0u64;
    for i in 1..n - 1 {
        s += i as u64;
    }
    s
}

#[kernel]
pub fn grid(out: &mut [f64], a: &[f64], rows: usize, width: usize) {
    for r in 0..rows {
        for c in 0..width {
            out[r * width + c] = a[r * width + c] * 2.0;
        }
    }
}

#[kernel]
pub fn product(c: &mut [f32], a: &[f32], b: &[f32], m: usize, n: usize, p: usize) {
    for row in 0..m {
        for col in 0..p {
            let mut acc = 0.0;
            for k in 1..n {
                acc += b[k * p + col] * a[row * n + k];
            }
            c[row * p + col] = acc;
        }
    }
}

#[kernel]
pub fn offset(out: &mut [f64], a: &[f64], b: &[f64], s: i64) {
    for i in 0..out.len() as i64 {
        out[i as usize] = a[(i + s) as usize] + b[(i - s) as usize];
    }
}

#[kernel]
pub fn strided(out: &mut [f64], a: &[f64], w: usize) {
    for i in 0..out.len() {
        out[i] = a[(i + 4) * w];
    }
}

pub mod kernels {
    include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));
}
"""

U64 = 2**64
# Per kernel: argument sets, by parameter name (slice lengths as `<slice>.len`).
CASES = {
    "interior": [{"n": 10, "out.len": 10, "u.len": 10}, {"n": 10, "out.len": 8, "u.len": 10},
                 {"n": 10, "out.len": 10, "u.len": 9}, {"n": 3, "out.len": 3, "u.len": 3},
                 {"n": 2, "out.len": 0, "u.len": 0}, {"n": 1, "out.len": 0, "u.len": 0},
                 {"n": 0, "out.len": 0, "u.len": 0}, {"n": U64 - 1, "out.len": 5, "u.len": 5}],
    "upto": [{"n": 0, "out.len": 1}, {"n": 5, "out.len": 6}, {"n": 5, "out.len": 5}, {"n": U64 - 2, "out.len": 3},
             {"n": U64 - 1, "out.len": 3}],
    "blocks": [{"n": 10, "k": 3, "out.len": 4}, {"n": 10, "k": 3, "out.len": 3}, {"n": 10, "k": 0, "out.len": 4},
               {"n": 0, "k": 5, "out.len": 0}, {"n": U64 - 1, "k": 2, "out.len": U64 - 1}],
    "signed_sum": [{"lo": -5, "hi": 5}, {"lo": 5, "hi": -5}, {"lo": 3, "hi": 3},
                   {"lo": -(2**31), "hi": 2**31 - 1}],
    "sum_to": [{"n": 9}, {"n": U64 - 1}],
    "shifted": [{"out.len": 100, "s": 2}, {"out.len": 100, "s": 66}, {"out.len": 7, "s": 64}, {"out.len": 0, "s": 0}],
    "rows": [{"w": 4, "stride": 4, "h": 3, "out.len": 12}, {"w": 4, "stride": 4, "h": 3, "out.len": 11},
             {"w": 4, "stride": 3, "h": 3, "out.len": 12}, {"w": 0, "stride": 0, "h": 5, "out.len": 0},
             {"w": 3, "stride": 5, "h": 2, "out.len": 8}],
    "clamp_len": [{"out.len": 100, "limit": 10, "scale": 2.5}, {"out.len": 100, "limit": 10, "scale": -1.0},
                  {"out.len": 100, "limit": 10, "scale": float("nan")},
                  {"out.len": 100, "limit": 10, "scale": float("inf")}],
    "between": [{"n": 5}, {"n": 0}],
    # several accesses out of bounds at different iterations: Rust's panic is the earliest iteration's
    "grid": [{"out.len": 1, "a.len": 17, "rows": 10, "width": 11}, {"out.len": 110, "a.len": 17, "rows": 10, "width": 11},
             {"out.len": 110, "a.len": 110, "rows": 10, "width": 11}, {"out.len": 0, "a.len": 0, "rows": 0, "width": 3}],
    "product": [{"c.len": 1, "a.len": 17, "b.len": 17, "m": 14, "n": 3, "p": 10},
                {"c.len": 140, "a.len": 42, "b.len": 29, "m": 14, "n": 3, "p": 10},
                {"c.len": 140, "a.len": 42, "b.len": 30, "m": 14, "n": 3, "p": 10},
                {"c.len": 1, "a.len": 0, "b.len": 0, "m": 1, "n": 1, "p": 1}],
    "offset": [{"out.len": 10, "a.len": 10, "b.len": 10, "s": 0}, {"out.len": 10, "a.len": 13, "b.len": 10, "s": 3},
               {"out.len": 10, "a.len": 10, "b.len": 13, "s": -3}, {"out.len": 10, "a.len": 20, "b.len": 20, "s": 2}],
    # (i + 4) * w wraps past 2^64: with w = 2^62 the first index is 0, the second 2^62
    "strided": [{"out.len": 1, "a.len": 1, "w": 2**62}, {"out.len": 2, "a.len": 1, "w": 2**62},
                {"out.len": 3, "a.len": 5, "w": 1}],
}
TOO_MANY = '"the loop runs 2^64 iterations or more, more than one launch can"'
OUT_OF_BOUNDS = re.compile(r"index out of bounds: the len is (\d+) but the index is (\d+)")


def python_result(name: str, entry: KernelABI, index: int, values: dict) -> str:
    """What rs2gpu's Python runtime computes for this launch (its own code: the preamble, the stride
    checks, the bounds checks, the iteration space), as the Rust value the generated function returns."""
    launch = entry.launches[index]
    plan = CallPlan(name, entry).launches[index]
    env = Environment(params={k: v for k, v in values.items() if not k.endswith(".len")},
                      lengths={k[:-4]: v for k, v in values.items() if k.endswith(".len")})
    try:
        for let in entry.preamble:
            env.locals[let.name] = evaluate(let.expr, env)
        plan.check_strides(env, name)
        failure = plan.check_bounds(env)
        if failure is not None:
            length, at = OUT_OF_BOUNDS.fullmatch(failure[0]).groups()
            return f"Err(RangeError::OutOfBounds {{ len: {length}, index: {at}, source: {json.dumps(failure[1])} }})"
        starts, counts = plan.iteration_space(env)
    except HostPanic as e:
        return f"Err(RangeError::Panic({json.dumps(str(e))}))"
    except RaceError:
        return f"Err(RangeError::Race({json.dumps(launch.stride_checks[0].source)}))"
    dims = []
    for dim in launch.dims:
        if counts[dim.axis] >= U64:
            return f"Err(RangeError::Panic({TOO_MANY}))"
        dims.append(f"Dim {{ start: {literal(starts[dim.axis], dim.index_type)[0]}, count: {counts[dim.axis]} }}")
    return f"Ok({dims[0]})" if len(dims) == 1 else f"Ok(({', '.join(dims)}))"


def rust_assertions(abi: CrateABI) -> list[str]:
    lines = []
    for name, cases in CASES.items():
        entry = abi.kernels[name]
        module = KernelModule(name, entry, Types({}))
        types = {p.name: p.layout.type for p in entry.params}
        for index, launch in enumerate(entry.launches):
            spec = module.range_function(index, launch)
            for values in cases:
                args = [literal(values[f"{param}.len"], "usize")[0] if kind == "len"
                        else literal(values[param], types[param])[0] for kind, param in spec["arguments"]]
                expected = python_result(name, entry, index, values)
                lines.append(f"    assert_eq!(ranges::{spec['name']}({', '.join(args)}), {expected});")
    return lines


@needs_cargo
def test_rust_ranges_match_the_python_runtime(tmp_path, cargo_target) -> None:
    crate = hook_crate(tmp_path / "bounds", BOUNDS_LIB_RS, name="bounds")
    assertions = rust_assertions(pipeline.translate(crate).emitted.abi)
    assert len(assertions) == sum(len(c) for c in CASES.values())
    # every kind of outcome is among them: a division by zero, a refused stride, a 2^64-iteration range,
    # a wrapped bound, an i32 index from i32::MIN, an index out of bounds, one below zero, one past 2^64
    text = "\n".join(assertions)
    for outcome in ('Panic("attempt to divide by zero")', "RangeError::Race(", TOO_MANY,
                    "count: 18446744073709551614", "start: i32::MIN, count: 4294967296", "OutOfBounds",
                    f"index: {U64 - 3}", "index: 4611686018427387904"):
        assert outcome in text, outcome
    run_rust_test(crate, cargo_target, "ranges", "use bounds::kernels::{ranges, Dim, RangeError};", assertions)


def run_rust_test(crate, cargo_target, name: str, uses: str, lines: list[str]) -> None:
    """Write `tests/<name>.rs` into the crate, one test of `lines` after `uses`, and run it with cargo."""
    (crate / "tests").mkdir()
    (crate / "tests" / f"{name}.rs").write_text(f"{uses}\n\n#[test]\nfn {name}() {{\n" + "\n".join(lines) + "\n}\n")
    tested = cargo(["test", "--test", name], crate, cargo_target)
    assert tested.returncode == 0, tested.stderr + tested.stdout + "\n".join(lines)
    assert "test result: ok. 1 passed" in tested.stdout



CONDITIONAL_LIB_RS = """\
use rs2gpu::kernel;

#[kernel]
pub fn roots(a: &[f64], x1: &mut [f64], x2: &mut [f64]) {
    for i in 0..x1.len() {
        x1[i] = a[i];
        if a[i] >= 0.0 {
            x2[i] = a[i];
        }
    }
}

#[kernel]
pub fn shifted(out: &mut [f64], a: &[f64], s: usize) {
    for i in 0..out.len() {
        if a[i] > 0.0 {
            out[i] = a[i + s];
        }
    }
}

pub mod kernels {
    include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));
}
"""
CONDITIONAL_CASES = {
    "roots": [{"a.len": 10, "x1.len": 10, "x2.len": 10}, {"a.len": 10, "x1.len": 10, "x2.len": 9},
              {"a.len": 10, "x1.len": 0, "x2.len": 0}, {"a.len": 12, "x1.len": 10, "x2.len": 11}],
    "shifted": [{"out.len": 10, "a.len": 13, "s": 3}, {"out.len": 10, "a.len": 13, "s": 4},
                {"out.len": 0, "a.len": 0, "s": 7}],
}


@needs_cargo
def test_rust_chooses_the_unchecked_entry_point_where_the_python_runtime_does(tmp_path, cargo_target) -> None:
    """`ranges::<kernel>_<n>_in_bounds` says whether the accesses a loop makes only under a condition all
    stay in bounds, what Python's `LaunchPlan.conditions` finds for the general entry point to run rather than
    the checked one (`in_bounds`)."""
    crate = hook_crate(tmp_path / "conditional", CONDITIONAL_LIB_RS, name="conditional")
    abi = pipeline.translate(crate).emitted.abi
    lines, outcomes = [], set()
    for name, cases in CONDITIONAL_CASES.items():
        entry = abi.kernels[name]
        (launch,) = entry.launches
        assert launch.entry(EntryKind.CHECKED) is not None
        spec = KernelModule(name, entry, Types({})).range_function(0, launch, conditional=True)
        plan = CallPlan(name, entry).launches[0]
        for values in cases:
            bound = BoundArgs()
            bound.env = Environment(params={k: v for k, v in values.items() if not k.endswith(".len")},
                                    lengths={k[:-4]: v for k, v in values.items() if k.endswith(".len")})
            unchecked = plan.conditions(bound).in_bounds
            outcomes.add(unchecked)
            args = [literal(values[f"{param}.len"] if kind == "len" else values[param], "usize")[0]
                    for kind, param in spec["arguments"]]
            lines.append(f"    assert_eq!(ranges::{spec['name']}({', '.join(args)}), Ok({str(unchecked).lower()}));")
    assert outcomes == {True, False}
    run_rust_test(crate, cargo_target, "in_bounds", "use conditional::kernels::ranges;", lines)
