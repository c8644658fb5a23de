"""rs2gpu kernels over Dask arrays (docs/dask.md).

    import dask.array as da, rs2gpu, rs2gpu.dask
    k = rs2gpu.load("examples/heat", backend="cpu")       # or "cuda": one GPU per worker (dask-cuda)
    u = da.zeros((4096, 4096), chunks=(512, 4096))
    (v,) = rs2gpu.dask.call(k.heat_step, u.copy(), u, 4096, 0.1)
    v.compute()

`call` is lazy: it plans the chunks (refusing kernels that cannot chunk, with RG0201–RG0204) and builds
the graph; the kernel runs at `compute()`, one task per chunk, on the workers.
"""
from __future__ import annotations

from rs2gpu.dask.graph import ChunkLayout, Combine, as_arrays, identity_problem, run_chunk, scalar_values
from rs2gpu.dask.plan import ChunkingError, ChunkPlan, _diagnostic, plan_chunks
from rs2gpu.ir.abi import ParamKind
from rs2gpu.ir.types import PRIMITIVES
from rs2gpu.runtime.hostexpr import Environment, evaluate


def chunk_plan(kernel) -> ChunkPlan:
    """The chunk plan of a kernel of a loaded module (cached on the module), or ChunkingError."""
    module = getattr(kernel, "module", None)
    if module is None or getattr(kernel, "entry", None) is None:
        raise TypeError(f"rs2gpu.dask.call takes a kernel of a module that rs2gpu.load made (an instantiation of a "
                        f"generic kernel: `k.name['f64']`), not {kernel!r}")
    plans = module.__dict__.setdefault("chunk_plans", {})
    if kernel.name not in plans:
        try:
            plans[kernel.name] = plan_chunks(kernel.name, module.checked, kernel.entry)
        except ChunkingError as error:
            plans[kernel.name] = error
    found = plans[kernel.name]
    if isinstance(found, ChunkingError):
        raise found
    return found


def call(kernel, *args):
    """Run `kernel` over Dask arrays, lazily. Returns a tuple: the new value of each `&mut` slice argument
    (a Dask array of the argument's shape and chunks), then, for a kernel that returns a value, that value
    as a 0-d Dask array (a tuple of them for a tuple)."""
    import dask
    import dask.array as da

    plan = chunk_plan(kernel)
    entry = kernel.entry
    if len(args) != len(entry.params):
        raise TypeError(f"{kernel.name}() takes {len(entry.params)} arguments ({len(args)} given)")
    bound = dict(zip((p.name for p in entry.params), args))
    for p in entry.params:
        if p.kind != ParamKind.SLICE and p.kind != ParamKind.ARRAY and isinstance(bound[p.name], da.Array):
            raise TypeError(f"{kernel.name}(): `{p.name}` is a {p.rust_type}; pass a Python or numpy value, not a "
                            f"Dask array")
    scalars = scalar_values(entry, bound)
    resolved = plan.resolve(scalars)
    shapes = {name: da.asarray(bound[name]).shape for name in plan.chunked}
    flat = {name: _flat(da.asarray(bound[name])) for name in plan.chunked}
    lengths = {name: int(flat[name].shape[0]) for name in plan.chunked}
    lengths.update({name: int(da.asarray(bound[name]).size) for name in plan.whole})
    mutable = [p.name for p in entry.params if p.mutable and p.in_memory]
    driver = next((name for name in mutable if name in plan.chunked), plan.chunked[0])
    stride = resolved.stride
    rows = min(lengths[name] // stride for name in plan.chunked)
    boundaries = _row_boundaries(flat[driver], stride, rows)
    layout = ChunkLayout(plan, entry, scalars, lengths, boundaries, stride, resolved.halos)
    chunks = list(zip(boundaries[:-1], boundaries[1:]))
    for lo, hi in chunks:
        layout.check(lo, hi)
    written = tuple(entry.params.index(p) for p in entry.params if p.name in mutable and p.name in plan.chunked)
    source = kernel.module.origin
    pieces: dict[str, list] = {entry.params[i].name: [] for i in written}
    partials = []
    for lo, hi in chunks:
        first, last = layout.window(lo, hi)
        arguments, outputs = [], []
        for p in entry.params:
            if p.name in plan.chunked:
                end = last * stride + layout.extra[p.name]
                arguments.append(flat[p.name][first * stride:end])
            else:
                arguments.append(bound[p.name])  # a scalar, or a slice every chunk reads whole
        for i in written:
            name = entry.params[i].name
            stop = (hi - first) * stride if hi < rows else (last - first) * stride + layout.extra[name]
            outputs.append(((lo - first) * stride, stop))
        task = dask.delayed(run_chunk, pure=True, nout=len(written) + 1)(
            source, kernel.name, written, tuple(outputs), *arguments)
        for k, i in enumerate(written):
            name = entry.params[i].name
            start, stop = outputs[k]
            pieces[name].append(da.from_delayed(task[k], shape=(stop - start,), dtype=flat[name].dtype,
                                                meta=flat[name]._meta))
        partials.append(task[len(written)])
    results = [da.concatenate(pieces[entry.params[i].name]).reshape(shapes[entry.params[i].name])
               for i in written]
    by_name = dict(zip((entry.params[i].name for i in written), results))
    out = [by_name.get(name, bound[name]) for name in mutable]
    if entry.returns is not None:
        out.append(_reduced(kernel, plan, partials, scalars, lengths))
    return tuple(out)


def _flat(array):
    """`array` as one row-major run of elements."""
    if array.ndim > 1:
        array = array.rechunk({axis: -1 for axis in range(1, array.ndim)})
    return array.reshape(-1)


def _row_boundaries(flat, stride: int, rows: int) -> list[int]:
    """The driver's chunk boundaries, in whole rows (at least one chunk)."""
    bounds, at = {0, rows}, 0
    for size in flat.chunks[0]:
        at += size
        bounds.add(min(at // stride, rows))
    return sorted(bounds) if rows else [0, 0]


def _reduced(kernel, plan: ChunkPlan, partials: list, scalars: dict, lengths: dict):
    """The kernel's result: its chunks' partial reductions, combined pairwise in a tree."""
    import dask
    import dask.array as da
    import numpy as np

    entry = kernel.entry
    reductions = {r.name: r for launch in entry.launches for r in launch.reductions}
    expr = entry.returns.expr
    single = "tuple" not in expr
    names = [item["reduction"] for item in ([expr] if single else expr["tuple"])]
    env = Environment(scalars, lengths)
    for name in names:
        r = reductions[name]
        if identity_problem(r.op, r.type, evaluate(r.init, env)):
            raise ChunkingError(_diagnostic(
                "RG0204", f"`{kernel.name}` cannot run on Dask chunks: the reduction `{name}` does not start from "
                          f"the identity of `{r.op}`", plan.reductions[name], "every chunk would start from this seed",
                "start from the identity (0 for a sum, 1 for a product) and apply the seed to the result"),
                plan.sources)
    combine = Combine(tuple((reductions[n].op, reductions[n].type) for n in names), single)
    level = partials
    while len(level) > 1:
        level = [dask.delayed(combine, pure=True)(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    dtypes = tuple(np.dtype(PRIMITIVES[reductions[n].type].dtype) for n in names)
    arrays = dask.delayed(as_arrays, pure=True, nout=len(names))(level[0], dtypes, single)
    values = tuple(da.from_delayed(arrays[k], shape=(), dtype=dtypes[k]) for k in range(len(names)))
    return values[0] if single else values


__all__ = ["call", "chunk_plan", "ChunkingError", "ChunkPlan"]
