"""Host loops: which top-level loops run on the host around launches, and what is required of them.

The rule being specified: a top-level loop whose body holds loops, and that writes some element whatever
its own variable is, cannot be a parallel loop (its iterations would write the same elements), so it
runs on the host, one iteration after another, launching the loops inside it; every other loop keeps
its meaning (one launch, possibly 2-D/3-D). The kernels of the tables below are valid Rust (the last test).
"""
from __future__ import annotations

import subprocess

import pytest

from rs2gpu.ir.diagnostics import CompileFailed
from rs2gpu.ir.plan import HostLoop

from tests.support.source_positions import locate

JACOBI = """
#[kernel]
pub fn jacobi(a: &mut [f64], b: &mut [f64], steps: usize) {
    let n = a.len().min(b.len());
    for step in 0..steps {
        let w = 0.5 / (step + 1) as f64;
        for i in 1..n - 1 {
            b[i] = w * (a[i - 1] + a[i + 1]);
        }
        for i in 1..n - 1 {
            a[i] = b[i];
        }
    }
}
"""

# Loops whose writes depend on the outer variable keep their meaning: one launch each.
PARALLEL = {
    "rows_and_columns": """
#[kernel]
pub fn scale(m: &mut [f64], rows: usize, cols: usize) {
    for r in 0..rows {
        for c in 0..cols {
            m[r * cols + c] *= 2.0;
        }
    }
}
""",
    "triangular_inner_loop": """
#[kernel]
pub fn prefix(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for k in 0..i {
            s += a[k];
        }
        out[i] = s;
    }
}
""",
    "reduction_over_a_grid": """
#[kernel]
pub fn total(a: &[f64], cols: usize) -> f64 {
    let mut s = 0.0;
    for r in 0..a.len() / cols {
        for c in 0..cols {
            s += a[r * cols + c];
        }
    }
    s
}
""",
}

REJECTED = {
    "statement_between_the_launches": ("""
#[kernel]
pub fn k(a: &mut [f64], steps: usize) {
    let mut t = 0.0;
    for step in 0..steps {
        for i in 0..a.len() {
            a[i] += 1.0;
        }
        t += 1.0;
    }
}
""", "RG0107", "a host loop runs only `let`s and parallel loops", "t += 1.0"),
    "reduction_inside_a_host_loop": ("""
#[kernel]
pub fn k(a: &mut [f64], steps: usize) -> f64 {
    let mut s = 0.0;
    for step in 0..steps {
        for i in 0..a.len() {
            a[i] *= 0.5;
        }
        for i in 0..a.len() {
            s += a[i];
        }
    }
    s
}
""", "RG0104", "`s` is reduced in a parallel loop inside a host loop", "s += a[i]"),
    "let_of_an_element_in_a_host_loop": ("""
#[kernel]
pub fn k(a: &mut [f64], b: &[f64], steps: usize) {
    for step in 0..steps {
        let first = b[step];
        for i in 0..a.len() {
            a[i] += first;
        }
    }
}
""", "RG0107", "`first` must be computable from the parameters and the host loop's variable", "let first = b[step];"),
    "host_loop_bound_the_host_cannot_compute": ("""
#[kernel]
pub fn k(a: &mut [f64], b: &[f64]) {
    for step in 0..b[0] as usize {
        for i in 0..a.len() {
            a[i] += 1.0;
        }
    }
}
""", "RG0106", "the bounds of a parallel loop must be computable before the launch", "b[0] as usize"),
    "host_value_named_like_another": ("""
#[kernel]
pub fn k(a: &mut [f64], steps: usize) {
    let n = a.len();
    for n in 0..steps {
        for i in 0..a.len() {
            a[i] += n as f64;
        }
    }
}
""", "RG0107", "`n` names two values of the host loops", "n in 0..steps"),
    "race_inside_a_launch_of_a_host_loop": ("""
#[kernel]
pub fn k(a: &mut [f64], steps: usize) {
    for step in 0..steps {
        for i in 0..a.len() - 1 {
            a[i] = a[i + 1];
        }
    }
}
""", "RG0103", "reads an element of `a` that another iteration may write", "a[i + 1]"),
}


def test_time_step_loop_runs_on_the_host_around_its_launches(check_source) -> None:
    plan = check_source(JACOBI).checked.kernels[0]
    [host] = plan.schedule
    assert isinstance(host, HostLoop) and host.var.name == "step"
    assert host.body == (0, 1)
    assert [let.binding.name for let in host.lets] == ["w"]
    assert [d.index.name for loop in plan.loops for d in loop.dims] == ["i", "i"]


def test_launches_receive_the_host_loop_values_they_read(check_source) -> None:
    plan = check_source(JACOBI).checked.kernels[0]
    # launch 0 reads `w`, which the host computes in every step; launch 1 reads nothing of the loop
    assert [[b.name for b in loop.uniforms] for loop in plan.loops] == [["w"], []]
    assert [loop.lets for loop in plan.loops] == [(), ()]
    assert [let.binding.name for let in plan.schedule[0].host_lets] == ["w"]


def test_a_let_only_a_thread_can_compute_is_recomputed_from_the_loop_variable(check_source) -> None:
    plan = check_source("""
fn damping(step: usize) -> f64 {
    1.0 / (step + 1) as f64
}

#[kernel]
pub fn damp(a: &mut [f64], steps: usize) {
    for step in 0..steps {
        let w = damping(step);
        for i in 0..a.len() {
            a[i] *= w;
        }
    }
}
""").checked.kernels[0]
    [loop] = plan.loops
    assert [b.name for b in loop.uniforms] == ["step"]
    assert [let.binding.name for let in loop.lets] == ["w"] and plan.schedule[0].host_lets == ()


def test_loop_that_repeats_a_launch_was_a_race_and_is_now_a_host_loop(check_source) -> None:
    plan = check_source("""
#[kernel]
pub fn halve(a: &mut [f64], times: u32) {
    for _ in 0..times {
        for i in 0..a.len() {
            a[i] *= 0.5;
        }
    }
}
""").checked.kernels[0]
    assert isinstance(plan.schedule[0], HostLoop) and plan.schedule[0].body == (0,)


def test_host_loops_nest_and_keep_the_order_of_the_source(check_source) -> None:
    plan = check_source("""
#[kernel]
pub fn k(a: &mut [f64], b: &mut [f64], outer: usize, inner: usize) {
    for i in 0..b.len() {
        b[i] = 0.0;
    }
    for o in 0..outer {
        for s in 0..inner {
            for i in 0..a.len() {
                a[i] += (o * s) as f64;
            }
        }
        for i in 0..b.len() {
            b[i] += a[i];
        }
    }
}
""").checked.kernels[0]
    first, host = plan.schedule
    assert first == 0 and host.var.name == "o"
    nested, last = host.body
    assert nested.var.name == "s" and nested.body == (1,) and last == 2
    assert [b.name for b in plan.loops[1].uniforms] == ["o", "s"]


@pytest.mark.parametrize("name", sorted(PARALLEL))
def test_loop_whose_writes_depend_on_its_variable_stays_one_launch(name: str, check_source) -> None:
    plan = check_source(PARALLEL[name]).checked.kernels[0]
    assert plan.schedule == (0,) and not plan.host_loops


def test_writes_inside_a_host_loop_never_spare_an_upload(check_source) -> None:
    # The host loop may run zero times: then `a` must come back as it was.
    plan = check_source("""
#[kernel]
pub fn fill(a: &mut [f64], steps: usize) {
    for step in 0..steps {
        for i in 0..a.len() {
            a[i] = step as f64;
        }
    }
}
""").checked.kernels[0]
    assert {p.binding.name: p.transfer for p in plan.params} == {"a": "inout", "steps": "value"}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_what_a_host_loop_cannot_hold_is_reported_where_it_is(name: str, check_source) -> None:
    source, code, message, at = REJECTED[name]
    with pytest.raises(CompileFailed) as failure:
        check_source(source)
    [diagnostic] = failure.value.diagnostics
    assert diagnostic.code == code and message in diagnostic.message, diagnostic
    assert (diagnostic.span.line, diagnostic.span.col) == locate(source, at)


def test_every_case_is_valid_rust(tmp_path) -> None:
    sources = {"jacobi": JACOBI} | {f"parallel_{k}": v for k, v in PARALLEL.items()} | \
        {f"rejected_{k}": v[0] for k, v in REJECTED.items()}
    crate = "\n".join(f"pub mod {name} {{\n{text.replace('#[kernel]', '')}\n}}" for name, text in sources.items())
    (tmp_path / "lib.rs").write_text(crate)
    rustc = subprocess.run(["rustc", "--edition", "2021", "--crate-type", "lib", "--cap-lints", "allow",
                            "--out-dir", str(tmp_path), str(tmp_path / "lib.rs")], capture_output=True, text=True)
    assert rustc.returncode == 0, rustc.stderr
