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

import functools

from rs2gpu.dask.graph import (ChunkLayout, Combine, chunk_edges, identity_problem, pick, run_chunk,
                              scalar_values)
from rs2gpu.dask.plan import ChunkingError, ChunkPlan, diagnostic, plan_chunks
from rs2gpu.ir.types import PRIMITIVES
from rs2gpu.runtime.hostexpr import Environment, evaluate


def chunk_plan(kernel) -> ChunkPlan:
    """The chunk plan of a kernel of a loaded module (cached on the module), or ChunkingError."""
    module = getattr(kernel, "module", None)
    if module is None or getattr(kernel, "entry", None) is None:
        raise TypeError(f"rs2gpu.dask.call takes a kernel of a module that rs2gpu.load made, not {kernel!r}; for a "
                        f"generic kernel, name an instantiation its `types(...)` lists (`k.axpy_f64`)")
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
    (a Dask array of the argument's shape), then, for a kernel that returns a value, that value as a 0-d
    Dask array (a tuple of them for a tuple)."""
    import dask.array as da
    import numpy as np
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    plan = chunk_plan(kernel)
    entry = kernel.entry
    if len(args) != len(entry.params):
        raise TypeError(f"{kernel.name}() takes {len(entry.params)} arguments ({len(args)} given)")
    bound = dict(zip((p.name for p in entry.params), args))
    for p in entry.params:
        if not p.in_memory and isinstance(bound[p.name], da.Array):
            raise TypeError(f"{kernel.name}(): `{p.name}` is a {p.rust_type}; pass a Python or numpy value, not a "
                            f"Dask array")
    scalars = scalar_values(entry, bound)
    resolved = plan.resolve(scalars)
    stride = resolved.stride
    flat = {name: _flat(da.asarray(bound[name])) for name in (*plan.chunked, *plan.whole)}
    lengths = {name: int(array.shape[0]) for name, array in flat.items()}
    mutable = [p.name for p in entry.params if p.mutable and p.in_memory]
    driver = next((name for name in mutable if name in plan.chunked), plan.chunked[0])
    rows = min(lengths[name] // stride for name in plan.chunked)
    layout = ChunkLayout(plan, entry, scalars, lengths, _row_boundaries(flat[driver], stride, rows), stride,
                         resolved.halos)
    for lo, hi in layout.chunks:
        layout.check(lo, hi)
    token = tokenize(kernel.module.origin, kernel.name, *args)
    run_name, edges_name = f"rs2gpu-{kernel.name}-{token}", f"rs2gpu-edges-{kernel.name}-{token}"
    mutable_chunked = [p.name for p in entry.params if p.name in mutable and p.name in plan.chunked]
    single = len(mutable_chunked) == 1 and entry.returns is None and len(mutable) == 1
    tasks: dict = {}
    specs, dependencies = _chunk_arguments(entry, plan, layout, bound, flat, tasks, edges_name)
    written = tuple(entry.params.index(p) for p in entry.params if p.name in mutable_chunked)
    target = bound[mutable_chunked[0]] if single else None
    rows_out = single and _in_rows(da.asarray(target), layout, mutable_chunked[0])
    run = functools.partial(run_chunk, source=kernel.module.origin, kernel_name=kernel.name, mutable=written,
                            result=entry.returns is not None, single=single,
                            width=layout.stride if rows_out else 0)
    for c, (lo, hi) in enumerate(layout.chunks):
        key = (run_name, c, 0) if rows_out else (run_name, c)
        tasks[key] = (run, [spec[c] for spec in specs], *layout.own_elements(lo, hi))
    graph = HighLevelGraph.from_collections(run_name, tasks, dependencies=dependencies)
    if single:
        name = mutable_chunked[0]
        dtype, meta = flat[name].dtype, flat[name]._meta
        if rows_out:
            chunks = (tuple(hi - lo for lo, hi in layout.chunks), (layout.stride,))
            return (da.Array(graph, run_name, chunks=chunks, dtype=dtype, meta=meta),)
        result = da.Array(graph, run_name, chunks=(layout.element_chunks(name),), dtype=dtype, meta=meta)
        return (result.reshape(da.asarray(target).shape),)
    # blocks of tuples, never computed themselves
    blocks = da.Array(graph, run_name, chunks=((1,) * len(layout.chunks),), dtype=np.float64, meta=np.empty(0))
    results = {}
    for k, index in enumerate(written):
        name = entry.params[index].name
        picked = blocks.map_blocks(pick, k, chunks=(layout.element_chunks(name),), dtype=flat[name].dtype,
                                   meta=flat[name]._meta)
        results[name] = picked.reshape(da.asarray(bound[name]).shape)
    out = [results.get(name, bound[name]) for name in mutable]
    if entry.returns is not None:
        out.append(_reduced(kernel, plan, blocks, len(written), scalars, lengths))
    return tuple(out)


def _chunk_arguments(entry, plan: ChunkPlan, layout: ChunkLayout, bound: dict, flat: dict, tasks: dict,
                     edges_name: str) -> tuple[list[list], list]:
    """Each parameter's argument in each chunk's task (a window spec for a chunked slice, the whole array's
    key, the value of a scalar), and the Dask arrays they read; the edge tasks the windows need go into
    `tasks`, one per chunk for every argument that passes the same chunk."""
    import dask.array as da

    specs, dependencies, edge_keys = [], [], {}

    def edges_task(key, head: int, tail: int):
        found = edge_keys.get((key, head, tail))
        if found is None:
            found = edge_keys[(key, head, tail)] = (edges_name, len(edge_keys))
            tasks[found] = (chunk_edges, key, head, tail)
        return found

    for p in entry.params:
        if p.name in plan.chunked:
            blocks, keys = _own_blocks(da.asarray(bound[p.name]), flat[p.name], layout, p.name)
            dependencies.append(blocks)
            # a chunk's window takes the tail of the chunk before it and the head of the one after
            tail, head = layout.depth(p.name) if layout.overlaps else (0, 0)
            edges = [edges_task(key, head, tail) for key in keys] if head or tail else [None] * len(keys)
            last = len(keys) - 1
            specs.append([[edges[c - 1] if tail and c else None, key, edges[c + 1] if head and c < last else None]
                          for c, key in enumerate(keys)])
        elif p.name in plan.whole:
            whole = flat[p.name].rechunk(-1)  # every chunk reads it whole
            dependencies.append(whole)
            specs.append([whole.__dask_keys__()[0]] * len(layout.chunks))
        else:
            specs.append([bound[p.name]] * len(layout.chunks))
    return specs, dependencies


def _in_rows(array, layout: ChunkLayout, name: str) -> bool:
    """Whether a chunked slice is a 2-D array of whole rows of the layout: its chunks are then its own
    blocks of rows, with no reshape between it and the kernel's flat view."""
    return array.ndim == 2 and array.shape == (layout.rows, layout.stride) and not layout.extra[name]


def _own_blocks(array, flat, layout: ChunkLayout, name: str):
    """(a Dask array whose k-th block holds the k-th chunk's own elements of slice `name`, the blocks' keys):
    a 2-D array of whole rows in blocks of the chunks' rows, else its flat view in the chunks' elements."""
    if _in_rows(array, layout, name):
        blocks = array.rechunk((tuple(hi - lo for lo, hi in layout.chunks), (layout.stride,)))
        return blocks, [row[0] for row in blocks.__dask_keys__()]
    blocks = flat.rechunk((layout.element_chunks(name),))
    return blocks, list(blocks.__dask_keys__())


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


def _reduced(kernel, plan: ChunkPlan, blocks, index: int, scalars: dict, lengths: dict):
    """The kernel's result: its chunks' partial reductions (at `index` of each chunk's tuple) combined by a
    Dask tree reduction whose combine is the kernel's own operators."""
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
            raise ChunkingError(diagnostic(
                "RG0204", f"`{kernel.name}` cannot run on Dask chunks: the reduction `{name}` does not start from "
                          f"the identity of `{r.op}`", plan.reductions[name], "every chunk would start from this seed",
                "start from the identity (0 for a sum, 1 for a product) and apply the seed to the result"),
                plan.sources)
    record = np.dtype([(f"f{k}", PRIMITIVES[reductions[n].type].dtype) for k, n in enumerate(names)])
    combine = Combine(tuple((reductions[n].op, reductions[n].type) for n in names))
    partials = blocks.map_blocks(combine.record, index, record, chunks=((1,) * blocks.numblocks[0],), dtype=record,
                                 meta=np.empty(0, record))
    total = da.reduction(partials, combine.fold, combine.fold, combine=combine.fold, dtype=record, split_every=2,
                         concatenate=True, meta=np.empty((), record))
    values = tuple(total[f"f{k}"] for k in range(len(names)))
    return values[0] if single else values


__all__ = ["call", "chunk_plan", "ChunkingError", "ChunkPlan"]
