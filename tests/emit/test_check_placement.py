"""Where each bounds check of a kernel goes: the host before the launch, a checked entry point, the index-list
verification, or the loop's own code on the device; and what the kernel ABI says each entry point checks.

Expected placements follow from Rust's semantics: an access every iteration makes panics in Rust whenever
its range leaves the slice, a conditional one only when it runs there.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rs2gpu import __version__, pipeline
from rs2gpu.emit import emit_crate
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import EntryKind, EntryPoint, Launch, ReadWindow, Term
from rs2gpu.ir.walk import rebuild, walk

HEADER = "use rs2gpu::kernel;\n\n"


@pytest.fixture
def translate(tmp_path: Path):
    def run(source: str) -> pipeline.Translation:
        (tmp_path / "src").mkdir(exist_ok=True)
        (tmp_path / "Cargo.toml").write_text('[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n')
        (tmp_path / "src" / "lib.rs").write_text(HEADER + source)
        return pipeline.translate(tmp_path)
    return run


def column(source: str, fragment: str) -> str:
    """`src/lib.rs:LINE:COL` of the unique `fragment` in `source` (as written after HEADER)."""
    text = HEADER + source
    assert text.count(fragment) == 1, fragment
    before = text[:text.index(fragment)]
    return f"src/lib.rs:{before.count(chr(10)) + 1}:{len(before) - before.rfind(chr(10))}"


def launch(result: pipeline.Translation, kernel: str, index: int = 0) -> Launch:
    return result.emitted.abi.kernels[kernel].launches[index]


def site_sources(result: pipeline.Translation, kernel: str, sites: tuple[int, ...]) -> list[str]:
    panics = {p.site: p for p in result.emitted.abi.kernels[kernel].panics}
    return sorted(f"{panics[s].kind} {panics[s].source}" for s in sites)


def entry_body(text: str, symbol: str) -> str:
    start = text.index(f" {symbol}(")
    return text[start:text.index("\n}\n", start)]


ROOTS = """\
#[kernel]
pub fn roots(x1: &mut [f64], x2: &mut [f64], s: &[f64]) {
    for i in 0..x1.len() {
        if s[i] >= 0.0 {
            x2[i] = s[i].sqrt();
            x1[i] = 1.0;
        }
    }
}
"""


def test_a_conditional_access_gets_a_guarded_host_check_and_a_checked_entry_point(translate) -> None:
    result = translate(ROOTS)
    entry = launch(result, "roots")
    assert [b.param for b in entry.guarded_bounds] == ["x2"]
    assert entry.guarded_bounds[0].source == column(ROOTS, "x2[i] =")
    assert entry.general == EntryPoint(EntryKind.GENERAL, "rs2gpu_roots_0", records_panics=False, checks=())
    checked = entry.entry(EntryKind.CHECKED)
    assert checked.symbol == "rs2gpu_roots_0_checked" and checked.records_panics
    assert site_sources(result, "roots", checked.checks) == [f"bounds {column(ROOTS, 'x2[i] =')}"]
    text = result.emitted.files["roots.cu"]
    assert "rs2gpu_in_bounds" not in entry_body(text, "rs2gpu_roots_0")
    assert "rs2gpu_in_bounds(" in entry_body(text, "rs2gpu_roots_0_checked")


def test_the_comment_on_a_covering_entry_point_says_it_needs_the_conditional_accesses_in_bounds(
        translate) -> None:
    # only the checked entry point may run with `out[...]` (after the `continue`) out of bounds
    source = """\
#[kernel]
pub fn volume(out: &mut [u32], nj: usize, ni: usize) {
    for j in 0..nj {
        for i in 0..ni {
            if (i + j) % 5 == 0 {
                continue;
            }
            out[i + ni * j] = (i + 7 * j) as u32;
        }
    }
}
"""
    result = translate(source)
    entry = launch(result, "volume")
    assert entry.entry(EntryKind.CHECKED) is not None
    text = result.emitted.files["volume.cu"]
    symbol = entry.entry(EntryKind.COVERING).symbol
    comment = text[:text.index(f" {symbol}(")].rsplit("\n\n", 1)[-1]
    assert comment.startswith("// Only where the host found every conditional access in bounds"), comment


def test_a_conditional_access_inside_the_loop_range_needs_no_check_at_all(translate) -> None:
    # x1[i] with i in 0..x1.len() is in bounds for every argument; s[i] is an unconditional read
    result = translate(ROOTS)
    entry = launch(result, "roots")
    assert "x1" not in [b.param for b in entry.guarded_bounds + entry.bounds]
    assert "x1[rs2gpu_index" not in result.emitted.files["roots.cu"]


def test_a_conditional_access_after_an_unconditional_one_at_the_same_index_is_covered(translate) -> None:
    source = """\
#[kernel]
pub fn clip(p: &mut [f64], a: &[f64], b: &[f64], floor: f64) {
    for i in 0..a.len() {
        p[i] = a[i] * b[i];
        if p[i] < floor {
            p[i] = floor;
        }
    }
}
"""
    entry = launch(translate(source), "clip")
    assert entry.guarded_bounds == () and entry.entry(EntryKind.CHECKED) is None
    assert entry.general.checks == ()
    assert sorted(b.param for b in entry.bounds) == ["b", "p"]


def test_a_conditional_access_before_the_unconditional_one_is_not_covered(translate) -> None:
    # Rust would panic at the conditional write first, so its own check must stay
    source = """\
#[kernel]
pub fn first_then(p: &mut [f64], a: &[f64]) {
    for i in 0..a.len() {
        if a[i] < 0.0 {
            p[i] = 0.0;
        }
        p[i] = a[i];
    }
}
"""
    entry = launch(translate(source), "first_then")
    assert [b.param for b in entry.guarded_bounds] == ["p"]
    assert [b.param for b in entry.bounds] == ["p"]


def test_the_right_side_of_a_short_circuit_is_conditional(translate) -> None:
    source = """\
#[kernel]
pub fn next_positive(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        out[i] = if i + 1 < a.len() && a[i + 1] > 0.0 { 1.0 } else { 0.0 };
    }
}
"""
    entry = launch(translate(source), "next_positive")
    assert [b.source for b in entry.guarded_bounds] == [column(source, "a[i + 1]")]
    assert entry.bounds == ()


def test_accesses_after_a_continue_of_the_parallel_loop_are_conditional(translate) -> None:
    source = """\
#[kernel]
pub fn skip(out: &mut [f64], a: &[f64], b: &[f64], c: &[f64]) {
    for i in 0..out.len() {
        let mut t = 0.0;
        for k in 0..4 {
            if a[i] < 0.0 {
                continue;
            }
            t += 1.0;
        }
        let early = b[i];
        if a[i] > 1.0 {
            continue;
        }
        out[i] = early + c[i] + t;
    }
}
"""
    entry = launch(translate(source), "skip")
    # the inner loop's `continue` skips only its own iterations: b[i] still runs in every iteration
    assert sorted({b.param for b in entry.bounds}) == ["a", "b"]
    assert sorted(b.param for b in entry.guarded_bounds) == ["c"]


def test_a_host_check_counts_the_loops_around_the_access(translate) -> None:
    source = """\
#[kernel]
pub fn repeat(out: &mut [f64], a: &[f64], m: usize) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for k in 0..m {
            s += a[i];
        }
        out[i] = s;
    }
}
"""
    (check,) = launch(translate(source), "repeat").bounds
    # a[i] happens only when both loops run: a `0..m` loop of no iteration makes it unreachable
    assert check.param == "a" and check.extents == ((Term(1, ({"len": "out"},)),), (Term(1, ({"param": "m"},)),))


ZONES = """\
#[kernel]
pub fn gather_scatter(out: &mut [f64], x: &[f64], y: &[f64], zones: &[usize], other: &[usize], jp: usize) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        let v = x[i] + x[i + jp] + y[other[ii]];
        out[i] = if v > 0.0 { v + x[i + 1] } else { v };
    }
}
"""


def test_accesses_through_a_list_are_checked_by_the_loop_before_its_body(translate) -> None:
    result = translate(ZONES)
    entry = launch(result, "gather_scatter")
    (lists,) = entry.index_lists
    assert lists.bounds == column(ZONES, "out[i] =")
    assert [g.source for g in lists.gathers] == [column(ZONES, "x[i] +"), column(ZONES, "x[i + jp]")]
    # both reads of `x` through the list form one window, from their offsets 0 and jp
    assert lists.windows == (ReadWindow("x", 1, ((), (Term(1, ({"param": "jp"},)),))),)
    # one loop that checks: no checked entry point beside it
    assert entry.entry(EntryKind.CHECKED) is None
    assert site_sources(result, "gather_scatter", entry.general.checks) == sorted([
        f"bounds {column(ZONES, 'out[i] =')}", f"index list reads {column(ZONES, 'out[i] =')}",
        f"bounds {column(ZONES, 'x[i + 1]')}", f"bounds {column(ZONES, 'y[other[ii]]')}"])


def test_the_verification_states_the_panic_of_each_read_and_finds_repeats(translate) -> None:
    result = translate(ZONES)
    entry = launch(result, "gather_scatter")
    verify = entry.entry(EntryKind.VERIFY)
    assert verify.symbol == "rs2gpu_gather_scatter_0_verify" and verify.records_panics
    assert site_sources(result, "gather_scatter", verify.checks) == sorted([
        f"bounds {column(ZONES, 'x[i] +')}", f"bounds {column(ZONES, 'x[i + jp]')}",
        f"index list reads {column(ZONES, 'out[i] =')}", f"index list {column(ZONES, 'out[i] =')}"])


def test_the_verification_after_the_loop_returns_at_once_when_the_list_was_in_order(translate) -> None:
    text = translate(ZONES).emitted.files["gather_scatter.cu"]
    body = entry_body(text, "rs2gpu_gather_scatter_0_verify")
    assert body.index("if (rs2gpu_panicked() || !(rs2gpu_out_of_order_out)) return;") < body.index("for (")
    assert text.index("rs2gpu_gather_scatter_0(") < text.index("rs2gpu_gather_scatter_0_verify(")


def test_a_loop_with_an_index_list_and_no_earlier_panic_has_no_entry_guard(translate) -> None:
    text = translate(ZONES).emitted.files["gather_scatter.cu"]
    assert "rs2gpu_stopped_before" not in entry_body(text, "rs2gpu_gather_scatter_0")


def test_a_loop_with_an_index_list_in_a_host_loop_stops_after_its_own_verification(translate) -> None:
    source = """\
#[kernel]
pub fn steps(out: &mut [f64], zones: &[usize], steps: usize) {
    for step in 0..steps {
        for ii in 0..zones.len() {
            out[zones[ii]] = step as f64;
        }
    }
}
"""
    text = translate(source).emitted.files["steps.cu"]
    body = entry_body(text, "rs2gpu_steps_0")
    assert body.index("if (rs2gpu_may_stop && rs2gpu_stopped_before(rs2gpu_launch)) return;") < body.index("for (")


def test_a_conditional_list_write_keeps_its_own_bounds_check(translate) -> None:
    source = """\
#[kernel]
pub fn scatter_where(out: &mut [f64], zones: &[usize], keep: &[u8]) {
    for ii in 0..zones.len() {
        if keep[ii] != 0 {
            out[zones[ii]] = 1.0;
        }
    }
}
"""
    result = translate(source)
    entry = launch(result, "scatter_where")
    assert entry.index_lists[0].bounds is None
    assert site_sources(result, "scatter_where", entry.general.checks) == \
        [f"bounds {column(source, 'out[zones[ii]]')}"]


def test_division_by_a_literal_needs_no_check(translate) -> None:
    source = """\
#[kernel]
pub fn halves(out: &mut [i32], a: &[i32], d: &[i32]) {
    for i in 0..out.len() {
        out[i] = a[i] / 2 + a[i] % 7 + a[i] / d[i] + a[i] / -1;
    }
}
"""
    result = translate(source)
    panics = result.emitted.abi.kernels["halves"].panics
    assert sorted((p.kind, p.source) for p in panics) == sorted(
        [("div", column(source, "a[i] / d[i]")), ("div", column(source, "a[i] / -1"))])


FACTS = ROOTS + """
#[kernel]
pub fn gather(out: &mut [f64], a: &[f64], idx: &[usize]) {
    for i in 0..out.len() {
        out[i] = a[idx[i]];
    }
}

#[kernel]
pub fn daxpy(y: &mut [f64], x: &[f64], alpha: f64) {
    for i in 0..y.len() {
        y[i] += alpha * x[i];
    }
}

#[kernel]
pub fn highest(top: &mut [f64], bins: &[usize], data: &[f64]) {
    for i in 0..data.len() {
        top[bins[i]] = top[bins[i]].max(data[i]);
    }
}
"""


def with_loop_bodies_copied(checked):
    """`checked` with the body of every parallel loop rebuilt, each of its nodes a new object."""
    def copy(node):
        return ir.Var(node.binding, node.span) if isinstance(node, ir.Var) else None

    return dataclasses.replace(checked, kernels=tuple(
        dataclasses.replace(plan, loops=tuple(dataclasses.replace(loop, body=rebuild(loop.body, copy))
                                              for loop in plan.loops))
        for plan in checked.kernels))


def test_the_facts_about_a_loop_body_hold_for_a_rebuilt_copy_of_it(translate) -> None:
    # host-checked, guarded and device-checked accesses, a vector and an L2-adds entry point (which find
    # the body's accesses and updates by their identities), and a scatter's atomic updates
    result = translate(FACTS)
    text = "".join(result.emitted.files[f"{name}.cu"] for name in ("gather", "daxpy", "highest"))
    assert all(f in text for f in ("rs2gpu_checked(", "_vector(", "_l2_adds(", "rs2gpu_atomic_max("))
    copied = with_loop_bodies_copied(result.checked)
    pairs = [(old, new) for plan, copy in zip(result.checked.kernels, copied.kernels)
             for loop, rebuilt in zip(plan.loops, copy.loops)
             for old, new in zip(walk(loop.body), walk(rebuilt.body)) if isinstance(old, (ir.Index, ir.Assign))]
    assert len(pairs) == 19 and all(new is not old and new.node_id == old.node_id for old, new in pairs)
    again = emit_crate(copied, pipeline.ALL_TARGETS, __version__)
    assert again.files == result.emitted.files and again.abi == result.emitted.abi
