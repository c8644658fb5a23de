"""The call plan of a kernel with host loops: how its schedule is read from the kernel ABI, which launches
must be checked again in every iteration, and what a launch inside a host loop is given.

Whole calls (launch order, transfers, panics) run on the emulated device in tests/gpu.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from rs2gpu import pipeline
from rs2gpu.runtime.callplan import CallPlan, HostLoopPlan
from rs2gpu.runtime.errors import KernelPanic
from rs2gpu.runtime.hostexpr import Environment

SOURCE = """\
#[kernel]
pub fn k(a: &mut [f64], b: &mut [f64], steps: i32, every: usize) {
    for i in 0..b.len() {
        b[i] = 0.0;
    }
    for step in -1..=steps {
        let stride = a.len() / every;
        for i in 0..stride {
            a[i] += step as f64;
        }
        for i in 0..b.len() {
            b[i] += a[i];
        }
    }
}
"""


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> CallPlan:
    path = tmp_path_factory.mktemp("schedule") / "k.rs"
    path.write_text(SOURCE)
    return CallPlan("k", pipeline.translate(Path(path), ("cuda",)).emitted.abi.kernels["k"])


def test_schedule_holds_the_launches_and_the_host_loop_in_source_order(plan: CallPlan) -> None:
    first, loop = plan.schedule
    assert first == 0 and isinstance(loop, HostLoopPlan)
    assert loop.var == "step" and loop.body == [1, 2]


def test_inclusive_host_loop_runs_from_its_start_to_its_end(plan: CallPlan) -> None:
    env = Environment(params={"steps": 2, "every": 1}, lengths={"a": 8, "b": 8})
    assert list(plan.schedule[1].values(env)) == [-1, 0, 1, 2]


def test_only_a_launch_whose_checks_read_the_loops_values_is_checked_in_every_iteration(plan: CallPlan) -> None:
    # launch 1's range is 0..stride, a `let` of the host loop; launch 2's is 0..b.len()
    assert [lp.per_step for lp in plan.launches] == [False, True, False]


def test_launch_that_reads_the_loop_variable_takes_it_after_its_count(plan: CallPlan) -> None:
    lp = plan.launches[1]
    assert [kind for kind, *_ in lp.fields[-3:]] == ["start", "count", "uniform"]
    assert lp.fields[-1][1:4] == ("step", "i", 4)


def test_entering_an_iteration_sets_the_variable_and_the_lets_the_host_needs(plan: CallPlan) -> None:
    env = Environment(params={"steps": 3, "every": 4}, lengths={"a": 10, "b": 10})
    plan.schedule[1].enter(env, 2)
    assert env.locals == {"step": 2, "stride": 2}


def test_a_let_that_panics_in_an_iteration_raises_rusts_panic_at_its_division(plan: CallPlan) -> None:
    env = Environment(params={"steps": 3, "every": 0}, lengths={"a": 10, "b": 10})
    with pytest.raises(KernelPanic) as raised:
        plan.schedule[1].enter(env, 0)
    assert raised.value.message == "attempt to divide by zero"
    assert raised.value.location == "k.rs:7:22"  # `a.len() / every`, where rustc places it
