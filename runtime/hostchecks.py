"""The checks a call makes on the host, from its arguments, before any kernel code runs: the same on every
backend, so that a call fails the same way, with the same error, wherever it runs (docs/call-contract.md).

For each launch: the inequalities the translator's race-freedom proof left to the launch (`RaceError`),
the bounds of the accesses every iteration makes (Rust's panic, at the access Rust reaches first), and
the positions its index lists are read at. The GPU backends make them before their first launch (and,
for a launch inside a host loop whose checks read the loop's values, before each of its launches), and
find a repeated value of an index list written through on the device, after the loop. The cpu backend,
which runs the whole Rust function at once, makes all of them before running it (`check_call`), and
raises those a GPU raises after running earlier launches only where the Rust code does not panic first.
"""
from __future__ import annotations

from typing import Callable, Iterator

from rs2gpu.runtime.callplan import BoundArgs, CallPlan, HostLoopPlan, LaunchPlan
from rs2gpu.runtime.errors import KernelPanic, RaceError
from rs2gpu.runtime.hostexpr import Environment


def check_launch(lp: LaunchPlan, bound: BoundArgs) -> None:
    """The host checks of one launch for the call's values (`bound.env`, with the host loops' values of
    the step it is about to run)."""
    lp.check_strides(bound.env, lp.kernel)
    failure = lp.check_bounds(bound.env)
    if failure is not None:
        raise KernelPanic(*failure, lp.kernel)
    if lp.index_lists:
        _check_list_positions(lp, bound)


def _check_list_positions(lp: LaunchPlan, bound: BoundArgs) -> None:
    """The positions an index list is read at lie inside it, as Rust's own indexing requires."""
    starts, counts = lp.iteration_space(bound.env)
    if not all(counts.values()):
        return
    for name, first, end, _, _, _, source in lp.index_list_ranges(bound.env, starts, counts):
        length = bound.arrays[name].count
        if first < 0 or end > length:
            bad = first % (1 << 64) if first < 0 else end - 1
            raise KernelPanic(f"index out of bounds: the len is {length} but the index is {bad}", source, lp.kernel)


def launch_order(plan: CallPlan, env: Environment) -> Iterator[int]:
    """The launches of a call in the order they run: the schedule's, each host loop entering its
    iterations one after another (setting its values in `env`) and running its body in each."""
    def walk(steps) -> Iterator[int]:
        for step in steps:
            if isinstance(step, HostLoopPlan):
                for value in step.values(env):
                    step.enter(env, value)
                    yield from walk(step.body)
            else:
                yield step
    return walk(plan.schedule if plan.schedule is not None else range(len(plan.launches)))


def check_call(plan: CallPlan, bound: BoundArgs) -> Exception | None:
    """The host checks of a call whose code runs all at once (the cpu backend), in the order a GPU backend
    makes them. Raises what a GPU raises before it runs anything: the failure of a launch's checks that
    do not read a host loop's values, and a stride's RaceError in any step. Returns what a GPU raises only
    after running the launches before it, where a panic of theirs comes first (so the caller runs the
    code, and raises this only where the code does not panic): the panic of a host loop's step, or the
    first repeated value of an index list written through; None where nothing fails."""
    for lp in plan.launches:
        if not lp.per_step:
            check_launch(lp, bound)
    if not any(lp.per_step or lp.index_lists for lp in plan.launches):
        return None
    searched = set()
    try:
        for index in launch_order(plan, bound.env):
            lp = plan.launches[index]
            if lp.per_step:
                check_launch(lp, bound)
            if lp.index_lists and (lp.per_step or index not in searched):
                searched.add(index)
                repeat = first_repeat(lp, bound)
                if repeat is not None:
                    return repeat
    except KernelPanic as panic:
        return panic
    return None


def first_repeat(lp: LaunchPlan, bound: BoundArgs) -> RaceError | None:
    """The error for the first iteration of launch `lp` that writes, through an index list, an element an
    earlier iteration writes through it (None where none does): two iterations running at once would race
    there. As on the device, every iteration counts, whether or not a condition around the write lets it
    run, but an index past the end of the slice does not (writing there is the iteration's panic). Indices
    rising or falling strictly from each iteration to the next are distinct, as the loop finds them on the
    device; a list in another order is searched."""
    import numpy as np

    starts, counts = lp.iteration_space(bound.env)
    if not all(counts.values()):
        return None
    found = None  # (iteration, list number, position, written index)
    ranges = lp.index_list_ranges(bound.env, starts, counts)
    for number, (name, first, end, scale, offset, target, _) in enumerate(ranges):
        written = _written(bound.arrays[name].host[first:end], scale, offset)
        if np.all(written[1:] > written[:-1]) or np.all(written[1:] < written[:-1]):
            continue
        inside = np.flatnonzero(written < np.uint64(bound.arrays[target].count))
        _, first_seen, inverse = np.unique(written[inside], return_index=True, return_inverse=True)
        repeated = np.flatnonzero(first_seen[inverse] != np.arange(inside.size))
        if repeated.size and (found is None or inside[repeated[0]] < found[0]):
            at = int(inside[repeated[0]])
            found = (at, number, at + first, int(written[at]))
    if found is None:
        return None
    _, number, position, value = found
    return repeat_error(lp, number, value, position, bound,
                        lambda name, first, end: bound.arrays[name].host[first:end])


def repeat_error(lp: LaunchPlan, number: int, value: int, position: int, bound: BoundArgs,
                 list_values: Callable[[str, int, int], object]) -> RaceError:
    """The error for the index list of write `number` of launch `lp` holding values that make the written
    index `value` twice (the second time at `position`), naming the first two positions that do;
    `list_values(name, first, end)` reads the list's values at positions first..end."""
    import numpy as np

    starts, counts = lp.iteration_space(bound.env)
    name, first, end, scale, offset, target, source = lp.index_list_ranges(bound.env, starts, counts)[number]
    written = _written(list_values(name, first, end), scale, offset)
    where = [int(p) + first for p in np.flatnonzero(written == np.uint64(value))[:2]]
    positions = f"{where[0]} and {where[1]}" if len(where) == 2 else f"{position} and another one"
    return RaceError(f"kernel `{lp.kernel}`: index list `{name}` holds the same value at positions {positions}, so "
                     f"two iterations of the loop at {source} may write `{target}[{value}]`; nothing was copied "
                     f"back to the host, and what the loop wrote to device arrays is unspecified")


def _written(values, scale: int, offset: int):
    """The indices `scale * value + offset` in Rust's wrapping usize arithmetic."""
    import numpy as np

    return values.astype(np.uint64) * np.uint64(scale % (1 << 64)) + np.uint64(offset % (1 << 64))
