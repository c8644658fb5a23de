"""Where each index is checked against its slice's length, for the index forms of iterator loops and signed
loop variables: nowhere (in bounds for every argument), on the host before the launch (affine, performed by
every iteration), or on the device.

The facts here are what the plan says; that the checks raise Rust's panic is tested on the emulated device
(tests/gpu) and on the GPU.
"""
from __future__ import annotations

import dataclasses

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.walk import rebuild, walk


def single_loop(check_source, source: str):
    [loop] = check_source(source).checked.kernels[0].loops
    return loop


def accesses(loop) -> dict[str, list[ir.Index]]:
    """The parameter accesses of the loop body by parameter name, in source order."""
    out: dict[str, list[ir.Index]] = {}
    for node in walk(loop.body):
        if isinstance(node, ir.Index) and isinstance(node.base, ir.Var):
            out.setdefault(node.base.binding.name, []).append(node)
    return out


def device_checked(loop) -> set[str]:
    return {name for name, nodes in accesses(loop).items() if any(n.node_id not in loop.hoisted for n in nodes)}


def test_where_each_access_is_checked_holds_for_a_rebuilt_copy_of_the_loop_body(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn gather(out: &mut [f64], a: &[f64], idx: &[usize]) {
    for i in 0..out.len() {
        out[i] = a[idx[i]] + a[i];
    }
}
""")
    body = rebuild(loop.body, lambda n: ir.Var(n.binding, n.span) if isinstance(n, ir.Var) else None)
    copied = dataclasses.replace(loop, body=body)
    assert all(new is not old for old, new in zip(accesses(loop)["a"], accesses(copied)["a"]))
    assert device_checked(loop) == device_checked(copied) == {"a"}  # `a[idx[i]]`; the host checks the others


def test_zipped_slices_need_no_check_anywhere(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn add(out: &mut [f64], a: &[f64], b: &[f64]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x + y;
    }
}
""")
    # i < min(min(out.len(), a.len()), b.len()) is below each of the three lengths
    assert loop.bounds == () and device_checked(loop) == set()


def test_fixed_size_array_indexed_within_its_length_needs_no_check(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn weigh(out: &mut [f64], w: &[f64; 3]) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for (k, c) in w.iter().enumerate() {
            s += c * k as f64;
        }
        out[i] = s;
    }
}
""")
    assert loop.bounds == () and device_checked(loop) == set()


def test_signed_index_cast_to_usize_is_checked_on_the_host_from_its_signed_start(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn from(out: &mut [f64], a: &[f64], lo: i64) {
    for i in lo..out.len() as i64 {
        out[i as usize] = a[i as usize];
    }
}
""")
    assert device_checked(loop) == set()
    checks = {b.param.name: b for b in loop.bounds}
    assert set(checks) == {"a", "out"}
    # the lowest index is `lo` itself: a negative `lo` is an index past the end once cast, as in Rust
    [(coefficient, (factor,))] = checks["a"].low
    assert coefficient == 1 and isinstance(factor, ir.Var) and factor.binding.name == "lo"


def test_narrow_signed_arithmetic_before_the_cast_is_checked_on_the_device(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn ahead(out: &mut [f32], a: &[f32]) {
    for i in 0..out.len() as i32 {
        out[i as usize] = a[(i + 1) as usize];
    }
}
""")
    # i + 1 wraps at i32::MAX before the cast, so it is not the affine i + 1
    assert device_checked(loop) == {"a"} and [b.param.name for b in loop.bounds] == ["out"]


def names_of(terms) -> list[tuple[int, list[str]]]:
    """A polynomial of the plan as (coefficient, the names of its factors)."""
    return [(coefficient, [getattr(getattr(f, "binding", None), "name", None) or f.name for f in factors])
            for coefficient, factors in terms]


def test_a_host_check_carries_its_index_over_the_loop_variables_and_where_each_loop_starts(check_source) -> None:
    source = """
#[kernel]
pub fn product(c: &mut [f64], a: &[f64], m: usize, n: usize, p: usize) {
    for row in 0..m {
        for col in 0..p {
            let mut acc = 0.0;
            for k in 1..n {
                acc += a[row * n + k];
            }
            c[row * p + col] = acc;
        }
    }
}
"""
    loop = single_loop(check_source, source)
    checks = {b.param.name: b for b in loop.bounds}
    form = checks["a"].form
    # a[row * n + k]: n per row, nothing per column, 1 per step of the inner loop, which runs 1..n
    assert [names_of(axis) for axis in form.axes] == [[(1, ["n"])], []]
    (inner,) = form.loops
    assert names_of(inner.coefficient) == [(1, [])] and names_of(inner.start) == [(1, [])]
    assert names_of(inner.end) == [(1, ["n"])] and not inner.inclusive
    number, line = next((n, text) for n, text in enumerate(source.splitlines(), 1) if "for k" in text)
    assert inner.at == (number, line.index("{") + 1)  # where the body of `for k` starts, after its bounds
    # in an iteration, Rust reads a[...] in the loop's body, then writes c[...] after the loop
    assert checks["c"].form.loops == () and checks["c"].form.at > form.at > inner.at


def test_reads_a_break_may_skip_are_checked_only_where_they_run(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn until_large(out: &mut [f64], a: &[f64], limit: usize) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for k in 0..limit {
            if a[k] > 1.0 {
                break;
            }
            s += a[k];
        }
        out[i] = s;
    }
}
""")
    # a later step of the inner loop may never run: a[k] over 0..limit is a guarded range, not a panic
    assert loop.bounds == () and {b.param.name for b in loop.guarded_bounds} == {"a"}


def test_a_loop_bound_that_can_wrap_is_one_the_host_confirms_first(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn interior(out: &mut [f64], n: usize) {
    for i in 1..n - 1 {
        out[i] = 1.0;
    }
}
""")
    (check,) = loop.bounds
    # `n - 1` wraps below zero in usize: its exact value must be in 0..=usize::MAX for the range to hold
    ((bound, low, high),) = check.exact
    assert names_of(bound) == [(-1, []), (1, ["n"])] and (low, high) == (0, 2**64 - 1)


def test_reads_and_updates_through_an_index_list_are_list_reads_the_verified_list_may_clear(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn spread(x: &mut [f64], vol: &[f64], zones: &[usize], jp: usize) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        let v = vol[i];
        x[i] += v;
        x[i + jp] += v;
    }
}
""")
    reads = [(r.param.name, r.list_param.name, r.scale, len(r.offset)) for r in loop.list_reads]
    assert reads == [("vol", "zones", 1, 0), ("x", "zones", 1, 0), ("x", "zones", 1, 1)]
    assert loop.listed == {n.node_id for name in ("vol", "x") for n in accesses(loop)[name]}
    assert device_checked(loop) == {"vol", "x"}  # unless the host clears them from a verified list


def test_a_read_under_a_condition_through_a_written_list_is_a_list_read(check_source) -> None:
    loop = single_loop(check_source, """
#[kernel]
pub fn pick(out: &mut [f64], a: &[f64], zones: &[usize]) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        if out[i] > 0.0 {
            out[i] = a[i + 1];
        }
    }
}
""")
    assert [check.target.name for check in loop.index_lists] == ["out"]
    # `out[i]` is read in every iteration: the list's own checks cover the written index
    assert [(r.param.name, len(r.offset)) for r in loop.list_reads] == [("a", 1)]
