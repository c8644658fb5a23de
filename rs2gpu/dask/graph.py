"""The Dask graph of one kernel call over chunked arrays: a task per chunk of rows, each running the
unchanged kernel on windows of the arrays (the chunk's rows and their halo), a task per chunk that takes
the rows of it that its neighbours' halos need, and a tree of tasks combining the chunks' partial
reductions with the kernel's own operators.

A chunk's window runs the kernel exactly as the whole call would on those rows: every read is at the
same element of the whole array (the halo holds every row the chunk's iterations read), and the loop
bounds, which the kernel computes from the window's lengths, must give the chunk's rows the whole
call's iterations. That last condition depends on the arguments; `ChunkLayout.check` checks it for
every chunk before the graph is built, and refuses the call (RG0203) where it does not hold.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from rs2gpu.dask.plan import ChunkingError, ChunkPlan, diagnostic
from rs2gpu.ir.abi import KernelABI, ParamKind
from rs2gpu.runtime.hostexpr import Environment, evaluate, wrap
from rs2gpu.runtime.origin import KernelSource


_MODULES: dict[KernelSource, object] = {}
_LOADING = threading.Lock()


def worker_module(source: KernelSource):
    """The kernels of `source` in this process, loaded once: the first call of a worker builds them (or
    finds them in the disk cache), later tasks of the worker reuse them."""
    with _LOADING:
        module = _MODULES.get(source)
        if module is None:
            from rs2gpu.api import load

            module = _MODULES[source] = load(source.path, source.backend, source.device)
        return module


def run_chunk(arguments: list, start: int, stop: int, *, source: KernelSource, kernel_name: str,
              mutable: tuple[int, ...], result: bool, single: bool, width: int = 0):
    """One chunk: the kernel on the windows of its arguments. `arguments` holds, for each parameter, its
    value, or for a chunked slice a window spec `[edges before, own block, edges after]` (see
    `chunk_edges`); `start` and `stop` are where the chunk's own elements lie in its windows (-1: the
    windows' end). Returns each written window's own elements, in the order of `mutable`, then the
    kernel's result; with `single`, the one written window's own elements alone (as rows of `width`
    where it is given)."""
    kernel = getattr(worker_module(source), kernel_name)
    windows, fresh = [], []
    for argument in arguments:
        window, made = _window(argument) if isinstance(argument, list) else (argument, False)
        if not one_run(window):
            window, made = window.copy(), True
        windows.append(window)
        fresh.append(made)
    for index in mutable:
        if not fresh[index]:
            windows[index] = windows[index].copy()  # Dask's chunks are never written in place
    returned = kernel(*windows)
    rows = tuple(windows[index][start:None if stop < 0 else stop] for index in mutable)
    if single:
        return rows[0].reshape(-1, width) if width else rows[0]
    return (*rows, returned) if result else rows


def one_run(value) -> bool:
    """Whether an argument can be passed as it is: anything but an array, or an array that is one aligned
    run of memory. Dask makes some chunks as views with zero strides (`da.ones`), and an array a worker
    received from another may lie in its message's buffer at any address (cupy's arrays are always
    aligned, and their flags do not say)."""
    flags = getattr(value, "flags", None)
    return flags is None or flags.c_contiguous and getattr(flags, "aligned", True)


def _window(spec: list):
    """The window of a chunked slice from its spec, as one run of elements: the halo before (the tail of
    the chunk before), its own elements, the halo after (the head of the chunk after); with whether it is
    a new array rather than the chunk itself."""
    before, own, after = spec
    parts = [own.reshape(-1)]
    if before is not None:
        parts.insert(0, before[1])
    if after is not None:
        parts.append(after[0])
    if len(parts) == 1:
        return parts[0], False
    module = __import__(type(own).__module__.split(".")[0])  # numpy or cupy, as the chunks are
    return module.concatenate(parts), True


def chunk_edges(block, head: int, tail: int):
    """The elements of a chunk its neighbours' windows take: its first `head` (the window before it) and
    its last `tail` (the window after it), copied so that the chunk itself is not kept for them."""
    flat = block.reshape(-1)
    return flat[:head].copy(), flat[flat.size - tail:].copy()


def pick(block, index: int):
    """The `index`-th value of a chunk's tuple."""
    return block[index]


@dataclass(frozen=True)
class Combine:
    """The reductions a kernel returns, one (operator, Rust type) per field of the partial results'
    records: `fold` combines records with the kernel's own operators, as `da.reduction`'s combine."""

    ops: tuple[tuple[str, str], ...]

    def record(self, block, index: int, dtype):
        """A chunk's result (at `index` of its tuple) as a one-element array of records."""
        import numpy as np

        value = block[index]
        return np.array([value if isinstance(value, tuple) else (value,)], dtype=dtype)

    def fold(self, records, axis=None, keepdims=False):
        """The records combined in order (`da.reduction` gives each call a few neighbouring ones)."""
        import numpy as np

        values = tuple(records[0].item())
        for record in records[1:]:
            values = tuple(evaluate(_combined_expr(op, ty, a, b), Environment())
                           for (op, ty), a, b in zip(self.ops, values, record.item()))
        out = np.array([values], dtype=records.dtype)
        return out if keepdims else out.reshape(())


def _combined_expr(op: str, ty: str, a, b) -> dict:
    args = [{"lit": _literal(a), "type": ty}, {"lit": _literal(b), "type": ty}]
    if op in ("min", "max"):
        return {"call": op, "args": args, "type": ty}
    return {"op": op, "type": ty, "args": args}


def _literal(value):
    value = value.item() if hasattr(value, "item") else value
    return str(value) if isinstance(value, float) and not math.isfinite(value) else value


def identity_problem(op: str, ty: str, seed) -> bool:
    """Whether starting every chunk from `seed` would count it more than once when partials combine."""
    if op in ("min", "max"):
        return False  # combining a value with itself changes nothing
    if op in ("+", "|", "^"):
        return seed != 0
    if op == "*":
        return seed != 1
    return seed != (True if ty == "bool" else wrap(-1, ty))  # "&": all bits set


def loop_ranges(entry: KernelABI, scalars: dict, lengths: dict) -> list[list[tuple[int, int]]]:
    """Each launch's dimensions as half-open ranges, the way the Rust code computes them for arrays of
    `lengths`."""
    env = Environment(dict(scalars), dict(lengths))
    for local in entry.preamble:
        env.locals[local.name] = evaluate(local.expr, env)
    out = []
    for launch in entry.launches:
        dims = []
        for dim in launch.dims:
            start, end = evaluate(dim.start, env), evaluate(dim.end, env)
            dims.append((start, end + 1 if dim.inclusive else end))
        out.append(dims)
    return out


def covered(ranges: tuple[int, int], lo: int, hi: float) -> tuple[int, int] | None:
    """The part of `ranges` within [lo, hi), None where empty."""
    start, stop = max(ranges[0], lo), min(ranges[1], hi)
    return (start, stop) if start < stop else None


class ChunkLayout:
    """The rows of a call's chunks, their windows, and the checks that each chunk computes the whole call's
    iterations of its rows."""

    def __init__(self, plan: ChunkPlan, entry: KernelABI, scalars: dict, lengths: dict[str, int],
                 boundaries: list[int], stride: int, halos: tuple[tuple[int, int], ...]) -> None:
        self.plan, self.entry, self.scalars, self.stride = plan, entry, scalars, stride
        self.lengths = lengths
        self.rows = min(lengths[p] // stride for p in plan.chunked)
        self.extra = {p: lengths[p] - self.rows * stride for p in plan.chunked}
        self.whole_call = loop_ranges(entry, scalars, lengths)  # the loops' ranges on the whole arrays
        self.left, self.right = self._halo(halos)
        self.chunks = self._merged(boundaries)

    def _halo(self, halos) -> tuple[int, int]:
        left = right = 0
        for (read_left, read_right), dims, loop in zip(halos, self.whole_call, self.plan.loops):
            start, stop = dims[0]
            # a chunk's loop starts at its window's row `start` and stops `rows - stop` rows before its end:
            # the window must reach that far past the chunk's own rows
            left = max(left, read_left, start if start < stop else 0)
            right = max(right, read_right, self.rows - stop if start < stop else 0)
        if (left or right) and (len(self.plan.loops) > 1 or any(loop.reduces for loop in self.plan.loops)):
            loop = next((loop for loop in self.plan.loops if loop.reduces), self.plan.loops[-1])
            code = "RG0204" if loop.reduces else "RG0203"
            what = ("it reduces in a loop whose chunks need a halo" if loop.reduces
                    else "its loops need a halo, and a later loop would read rows an earlier one left unfinished")
            raise ChunkingError(diagnostic(
                code, f"`{self.plan.kernel}` cannot run on Dask chunks: {what}", loop.span,
                f"chunks overlap by {left} row(s) before and {right} after",
                "split the kernel: one loop per kernel, reductions in loops that read only their own element"),
                self.plan.sources)
        return left, right

    def _merged(self, boundaries: list[int]) -> list[tuple[int, int]]:
        """The driver's chunks of rows, neighbours merged where a chunk is thinner than the halo its
        neighbours take from it (an array's extra elements past the rows count in the halo after)."""
        extra_rows = max(-(-e // self.stride) for e in self.extra.values())
        need = max(self.left, self.right + extra_rows, 1)
        merged = [boundaries[0]]
        for bound in boundaries[1:]:
            if bound - merged[-1] >= need or bound == boundaries[-1]:
                merged.append(bound)
        if len(merged) > 2 and merged[-1] - merged[-2] < need:
            del merged[-2]
        return list(zip(merged[:-1], merged[1:]))

    def window(self, lo: int, hi: int) -> tuple[int, int]:
        """The rows of the chunk [lo, hi) and of its halo."""
        return max(0, lo - self.left), min(self.rows, hi + self.right)

    @property
    def overlaps(self) -> bool:
        """Whether the chunks' windows reach into their neighbours."""
        return len(self.chunks) > 1 and bool(self.left or self.right or any(self.extra.values()))

    def element_chunks(self, name: str) -> tuple[int, ...]:
        """The chunks of slice `name` in elements: whole rows, its extra elements in the last."""
        sizes = [(hi - lo) * self.stride for lo, hi in self.chunks]
        sizes[-1] += self.extra[name]
        return tuple(sizes)

    def depth(self, name: str) -> tuple[int, int]:
        """The elements of its neighbours a chunk of slice `name` takes before and after its own."""
        return self.left * self.stride, self.right * self.stride + self.extra[name]

    def own_elements(self, lo: int, hi: int) -> tuple[int, int]:
        """Where the chunk [lo, hi)'s own elements lie in its window: start, stop (-1: the window's end)."""
        start = (lo - self.window(lo, hi)[0]) * self.stride
        return start, start + (hi - lo) * self.stride if hi < self.rows else -1

    def check(self, lo: int, hi: int) -> None:
        """Refuse the call unless the chunk of rows [lo, hi) runs the whole call's iterations of those rows."""
        first, last = self.window(lo, hi)
        local = {p: (last - first) * self.stride + self.extra[p] for p in self.plan.chunked}
        ranges = loop_ranges(self.entry, self.scalars, {**self.lengths, **local})
        upper = math.inf if hi == self.rows else hi
        for whole, mine, loop in zip(self.whole_call, ranges, self.plan.loops):
            shifted = (mine[0][0] + first, mine[0][1] + first)
            if covered(whole[0], lo, upper) != covered(shifted, lo, upper) or whole[1:] != mine[1:]:
                raise ChunkingError(diagnostic(
                    "RG0203", f"`{self.plan.kernel}` cannot run on Dask chunks: its loop bounds do not follow "
                              f"the arrays' lengths", loop.span,
                    f"on the chunk of rows {lo}..{hi} this loop runs other iterations than the whole call",
                    "bound the outer loop by the slices' lengths (`a.len() - 1`, `a.len() / width - 1`), and "
                    "the inner ones by constants and scalar parameters"), self.plan.sources)


def scalar_values(entry: KernelABI, bound: dict) -> dict:
    """The scalar arguments as the host expressions take them."""
    return {p.name: (bound[p.name].item() if hasattr(bound[p.name], "item") else bound[p.name])
            for p in entry.params if p.kind == ParamKind.SCALAR}
