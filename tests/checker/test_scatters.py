"""Scatter reductions: a `&mut` slice that iterations only update, with one combining operation, is accepted
whatever its indices, because the updates commute; the GPU applies them with atomics.

The rule being specified: every access to the slice in the loop is an update `t[e] op= v` (or the same
update spelled `t[e] = t[e] op v`, `t[e] = t[e].min(v)`, ...) with one operation among `+` (`-=` adds the
negation), `*`, `&`, `|`, `^`, `min`, `max`, on 32- or 64-bit elements, and neither `v` nor `e` reads the
slice. A slice whose updates provably hit distinct elements needs no atomics. Anything else that writes one
element from two iterations stays a race error, with the race checker's diagnostics, and a note saying
which part of the rule the updates break.
"""
from __future__ import annotations

import subprocess

import pytest

from rs2gpu.ir.diagnostics import CompileFailed

from tests.support.source_positions import locate

SCATTERS = {
    "histogram_through_an_index_list": ("""
#[kernel]
pub fn histogram(counts: &mut [u32], bins: &[usize]) {
    for i in 0..bins.len() {
        counts[bins[i]] += 1;
    }
}
""", [("counts", "+", ["+"])]),
    "every_iteration_adds_into_one_element": ("""
#[kernel]
pub fn total(sum: &mut [f64], a: &[f64]) {
    for i in 0..a.len() {
        sum[0] += a[i];
    }
}
""", [("sum", "+", ["+"])]),
    "affine_indices_that_overlap": ("""
#[kernel]
pub fn smear(out: &mut [f64], a: &[f64]) {
    for i in 0..a.len() {
        out[i] += a[i];
        out[i + 1] += 0.5 * a[i];
    }
}
""", [("out", "+", ["+", "+"])]),
    "index_computed_from_data": ("""
#[kernel]
pub fn by_key(out: &mut [i64], keys: &[u64], w: &[i64]) {
    for i in 0..w.len() {
        out[(keys[i] % 16) as usize] -= w[i];
    }
}
""", [("out", "+", ["-"])]),
    "additions_and_subtractions_of_one_slice": ("""
#[kernel]
pub fn transfer(balance: &mut [f32], from: &[usize], to: &[usize], amount: &[f32]) {
    for i in 0..amount.len() {
        balance[from[i]] -= amount[i];
        balance[to[i]] += amount[i];
    }
}
""", [("balance", "+", ["-", "+"])]),
    "update_spelled_as_an_assignment": ("""
#[kernel]
pub fn spelled(out: &mut [u64], idx: &[usize], a: &[u64]) {
    for i in 0..a.len() {
        out[idx[i]] = out[idx[i]] + a[i];
        out[idx[i] + 1] = a[i].wrapping_add(out[idx[i] + 1]);
        out[idx[i] + 2] = out[idx[i] + 2] - a[i];
    }
}
""", [("out", "+", ["+", "+", "-"])]),
    "product": ("""
#[kernel]
pub fn products(out: &mut [i64], idx: &[usize], a: &[i64]) {
    for i in 0..a.len() {
        out[idx[i]] *= a[i];
    }
}
""", [("out", "*", ["*"])]),
    "bitwise_updates_of_three_slices": ("""
#[kernel]
pub fn flags(any: &mut [u32], all: &mut [u64], odd: &mut [i32], idx: &[usize], a: &[u32]) {
    for i in 0..a.len() {
        any[idx[i]] |= a[i];
        all[idx[i]] &= a[i] as u64;
        odd[idx[i]] ^= a[i] as i32;
    }
}
""", [("any", "|", ["|"]), ("all", "&", ["&"]), ("odd", "^", ["^"])]),
    "minimum_and_maximum_in_either_operand_order": ("""
#[kernel]
pub fn extremes(lo: &mut [f64], hi: &mut [i32], idx: &[usize], a: &[f64], b: &[i32]) {
    for i in 0..a.len() {
        lo[idx[i]] = lo[idx[i]].min(a[i]);
        hi[idx[i]] = b[i].max(hi[idx[i]]);
    }
}
""", [("lo", "min", ["min"]), ("hi", "max", ["max"])]),
    "conditional_update": ("""
#[kernel]
pub fn positives(sums: &mut [f64], idx: &[usize], a: &[f64]) {
    for i in 0..a.len() {
        if a[i] > 0.0 {
            sums[idx[i]] += a[i];
        }
    }
}
""", [("sums", "+", ["+"])]),
    "fields_of_struct_elements": ("""
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Cell {
    pub mass: f64,
    pub count: u32,
}

#[kernel]
pub fn deposit(cells: &mut [Cell], idx: &[usize], m: &[f64]) {
    for i in 0..m.len() {
        cells[idx[i]].mass += m[i];
        cells[idx[i]].count += 1;
    }
}
""", [("cells", "+", ["+", "+"])]),
    "index_through_a_helper_and_a_let": ("""
fn bin(key: u64, n: usize) -> usize {
    (key % n as u64) as usize
}

#[kernel]
pub fn binned(out: &mut [f64], keys: &[u64], a: &[f64]) {
    for i in 0..a.len() {
        let k = bin(keys[i], out.len());
        out[k] = out[k].max(a[i]);
        out[bin(keys[i] + 1, out.len())] = out[bin(keys[i] + 1, out.len())].max(a[i]);
    }
}
""", [("out", "max", ["max", "max"])]),
}


def test_a_loop_around_a_nest_that_updates_elements_whatever_its_variable_runs_on_the_host(check_source) -> None:
    # `j` does not pick the element: every `j` adds into the same row, so `j` is a host loop (its
    # iterations one after another, rustc's sums bit for bit), and each launch updates distinct elements
    plan = check_source("""
#[kernel]
pub fn column_sums(sums: &mut [f64], m: &[f64], w: usize, h: usize) {
    for j in 0..h {
        for i in 0..w {
            sums[i] += m[j * w + i];
        }
    }
}
""").checked.kernels[0]
    [loop] = plan.loops
    assert plan.schedule[0].var.name == "j" and loop.scatters == ()


@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_updates_that_may_share_an_element_are_a_scatter(name: str, check_source) -> None:
    source, expected = SCATTERS[name]
    result = check_source(source)
    assert result.warnings == []
    plan = result.checked.kernels[0]
    [loop] = plan.loops
    assert [(s.param.name, s.op, [u.op for u in s.updates]) for s in loop.scatters] == expected
    # the updates commute, so nothing is left for the runtime to prove
    assert loop.index_lists == () and loop.launch_checks == ()


@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_a_scatter_target_is_uploaded_and_downloaded(name: str, check_source) -> None:
    source, expected = SCATTERS[name]
    plan = check_source(source).checked.kernels[0]
    transfers = {p.binding.name: p.transfer for p in plan.params}
    assert all(transfers[target] == "inout" for target, _, _ in expected)


NOT_SCATTERS = {
    # each iteration updates its own elements: a plain read-modify-write is exact
    "own_element": """
#[kernel]
pub fn add(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        a[i] += b[i];
    }
}
""",
    "own_even_and_odd_elements": """
#[kernel]
pub fn pairs(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[2 * i] += b[i];
        a[2 * i + 1] = a[2 * i + 1].max(b[i]);
    }
}
""",
}


@pytest.mark.parametrize("name", sorted(NOT_SCATTERS))
def test_updates_of_distinct_elements_need_no_atomics(name: str, check_source) -> None:
    [loop] = check_source(NOT_SCATTERS[name]).checked.kernels[0].loops
    assert loop.scatters == ()


def test_a_plain_store_through_an_index_list_is_not_a_scatter(check_source) -> None:
    # `=` does not combine: its list must hold distinct values, which the runtime verifies.
    [loop] = check_source("""
#[kernel]
pub fn scatter(a: &mut [f64], idx: &[usize], b: &[f64]) {
    for i in 0..b.len() {
        a[idx[i]] = b[i];
    }
}
""").checked.kernels[0].loops
    assert loop.scatters == ()
    assert [c.target.name for c in loop.index_lists] == ["a"]


def test_updates_that_needed_a_stride_check_at_launch_need_none_as_a_scatter(check_source) -> None:
    [loop] = check_source("""
#[kernel]
pub fn strided(a: &mut [f64], b: &[f64], w: usize) {
    for i in 0..b.len() {
        a[w * i] += b[i];
    }
}
""").checked.kernels[0].loops
    assert [s.param.name for s in loop.scatters] == ["a"]
    assert loop.launch_checks == ()


def test_affine_scatter_indices_are_checked_on_the_host(check_source) -> None:
    source = SCATTERS["affine_indices_that_overlap"][0]
    [loop] = check_source(source).checked.kernels[0].loops
    checked = sorted((b.param.name, b.span.line, b.span.col) for b in loop.bounds)
    assert ("out", *locate(source, "out[i + 1]")) in checked
    assert {u.assign.target.node_id for s in loop.scatters for u in s.updates} <= loop.hoisted


def test_data_dependent_scatter_indices_are_checked_on_the_device(check_source) -> None:
    [loop] = check_source(SCATTERS["histogram_through_an_index_list"][0]).checked.kernels[0].loops
    [scatter] = loop.scatters
    assert scatter.updates[0].assign.target.node_id not in loop.hoisted


# ---------------------------------------------------------------- near misses: still races


NEAR_MISSES = {
    # name: (source, the diagnostics' codes in source order, the note on why the updates are no scatter, where it points)
    "target_also_read": ("""
#[kernel]
pub fn running(hist: &mut [f64], out: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        hist[i / 2] += b[i];
        out[i] = hist[i / 2];
    }
}
""", ("RG0102", "RG0103", "RG0103"), "`hist` is also read here", ("hist[i / 2]", "out[i] = hist[i / 2]")),
    "value_reads_the_target": ("""
#[kernel]
pub fn feedback(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i / 2] += a[0] * b[i];
    }
}
""", ("RG0102", "RG0103", "RG0103"), "`a` is also read here", ("a[0]", None)),
    "plain_store_next_to_updates": ("""
#[kernel]
pub fn reset(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i / 2] += b[i];
        a[i / 3] = 0.0;
    }
}
""", ("RG0102", "RG0103", "RG0102"), "this assignment to `a` is not a `+=`", ("a[i / 3] = 0.0", None)),
    "two_combining_operations": ("""
#[kernel]
pub fn mixed(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i / 2] += b[i];
        a[i / 3] *= b[i];
    }
}
""", ("RG0102", "RG0103", "RG0102", "RG0103"), "`a` is updated with both `+=` and `*=`", ("a[i / 3] *= b[i]", None)),
    "elements_too_narrow_for_atomics": ("""
#[kernel]
pub fn bytes(counts: &mut [u8], idx: &[usize]) {
    for i in 0..idx.len() {
        counts[idx[i] / 2] += 1;
    }
}
""", ("RG0102", "RG0103"), "need 32- or 64-bit integers and floats, and the elements of `counts` are `u8`",
        ("counts[idx[i] / 2] += 1", None)),
    "target_passed_to_a_helper": ("""
fn bump(a: &mut [f64], k: usize) {
    a[k] += 1.0;
}

#[kernel]
pub fn through_helper(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i / 2] += b[i];
        bump(a, i);
    }
}
""", ("RG0102", "RG0103", "RG0103"), "`a` is passed to a helper function here", ("a", "bump(a, i)")),
}


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_stays_a_race_with_a_note_on_why(name: str, check_source) -> None:
    source, codes, note, (at, inside) = NEAR_MISSES[name]
    with pytest.raises(CompileFailed) as failure:
        check_source(source)
    diagnostics = failure.value.diagnostics
    assert tuple(d.code for d in diagnostics) == codes, str(failure.value)
    [why] = [n for n in diagnostics[0].notes if note in n.message]
    assert (why.span.line, why.span.col) == locate(source, inside or at, at if inside else None)


@pytest.mark.parametrize("update", ["a[i / 2] /= b[i];", "a[i / 2] = b[i] - a[i / 2];", "a[i / 2] <<= 1;"])
def test_updates_that_do_not_commute_are_races(update: str, check_source) -> None:
    ty = "u32" if "<<" in update else "f64"
    source = f"""
#[kernel]
pub fn f(a: &mut [{ty}], b: &[{ty}]) {{
    for i in 0..b.len() {{
        {update}
    }}
}}
"""
    with pytest.raises(CompileFailed) as failure:
        check_source(source)
    assert failure.value.diagnostics[0].code == "RG0102"
    assert (failure.value.diagnostics[0].span.line, failure.value.diagnostics[0].span.col) == locate(source, update)


@pytest.mark.parametrize("source, code", [
    ("""
#[kernel]
pub fn first(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[0] = b[i];
    }
}
""", "RG0101"),
    ("""
#[kernel]
pub fn halve(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i / 2] = b[i];
    }
}
""", "RG0102"),
    ("""
#[kernel]
pub fn pairs(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() - 1 {
        a[i] = b[i];
        a[i + 1] = b[i];
    }
}
""", "RG0105"),
])
def test_race_help_suggests_an_update_when_a_store_shares_elements(source: str, code: str, check_source) -> None:
    with pytest.raises(CompileFailed) as failure:
        check_source(source)
    [diagnostic] = failure.value.diagnostics
    assert diagnostic.code == code
    assert "write `a[k] += v`" in diagnostic.help and "combined with atomics" in diagnostic.help


# ---------------------------------------------------------------- the cases are Rust


def test_every_case_is_valid_rust(tmp_path) -> None:
    sources = {f"scatter_{name}": text for name, (text, _) in SCATTERS.items()}
    sources |= {f"not_{name}": text for name, text in NOT_SCATTERS.items()}
    sources |= {f"near_{name}": case[0] for name, case in NEAR_MISSES.items()}
    crate = "\n".join(f"pub mod {name} {{\n{text.replace('#[kernel]', '')}\n}}" for name, text in sources.items())
    (tmp_path / "lib.rs").write_text(crate)
    rustc = subprocess.run(["rustc", "--edition", "2021", "--crate-type", "lib", "--cap-lints", "allow",
                            "--out-dir", str(tmp_path), str(tmp_path / "lib.rs")], capture_output=True, text=True)
    assert rustc.returncode == 0, rustc.stderr
