"""Every kernel of examples/rajaperf either runs over Dask chunks, computing what one call on the whole
arrays computes (bitwise; float sums within the reordering bound of a reduction), or is refused, before
anything runs, with the diagnostic code its access or loop structure calls for."""
from __future__ import annotations

import dask
import numpy as np
import pytest

import rs2gpu.dask

from tests.dask.conftest import chunked, table_arguments

# Kernels whose every slice access is `i + constant` (or a row of a row-major nest), whose loop bounds follow
# the slices' lengths and which use `i` only as an index.
CHUNKED = ["add", "copy", "copy8", "daxpy", "daxpy_atomic", "dot", "energy", "eos", "fir", "first_diff", "first_sum",
           "hydro_1d", "if_quad", "init3", "int_predict", "mul", "muladdsub", "planckian", "pressure", "reduce3_int",
           "reduce_struct", "triad", "tridiag_elim"]

# The others, with the code their source calls for and why.
REFUSED = {
    "array_of_ptrs": ("RG0202", "reads x[a * n + i]: the offset a * n depends on a slice length"),
    "del_dot_vec_2d": ("RG0201", "reads through the zone index list"),
    "diff_predict": ("RG0202", "writes px[i + k * offset], outside its own element"),
    "first_min": ("RG0204", "a min-location reduction seeded from x[0]"),
    "gen_lin_recur": ("RG0202", "its second loop indexes by n - i, n a slice length"),
    "hydro_2d": ("RG0203", "three stencil loops: the second reads what the first wrote in the halo"),
    "init_view1d": ("RG0203", "computes (i + 1) * v from the index"),
    "init_view1d_offset": ("RG0203", "computes i * v from the index"),
    "ltimes": ("RG0202", "the loops run to fields of a struct parameter"),
    "ltimes_noview": ("RG0202", "phi and psi are slabs of different sizes along z"),
    "mat_mat_shared": ("RG0203", "its rows run to the scalar n, not to the slices' length"),
    "matvec_3d_stencil": ("RG0201", "reads through the real-zone index list"),
    "multi_reduce": ("RG0201", "a scatter update through bins"),
    "nested_init": ("RG0203", "computes the value from the indices"),
    "nodal_accumulation_3d": ("RG0201", "a scatter update of the nodes"),
    "pi_atomic": ("RG0204", "returns 4.0 * pi, not the reduction itself"),
    "pi_reduce": ("RG0204", "returns 4.0 * pi, not the reduction itself"),
    "trap_int": ("RG0204", "returns sumx * h, not the reduction itself"),
    "vol3d": ("RG0203", "its loop runs between the scalars ibegin and iend"),
    "zonal_accumulation_3d": ("RG0201", "reads through the real-zone index list"),
}

# Chunk sizes in elements: a third of the arrays (not a multiple of anything), and chunks thinner than the
# deepest halos (FIR's 15, HYDRO_1D's 11), which the plan merges.
CHUNKINGS = {"thirds": None, "thin": 7}


def test_every_kernel_of_the_crate_is_classified(rajaperf) -> None:
    assert sorted(CHUNKED + list(REFUSED)) == sorted(rajaperf.kernels)


def sum_scales(name: str, args: list) -> list:
    """Σ|terms| of each float sum the kernel returns (None: a result that must be exact)."""
    if name == "dot":
        return [float(np.abs(args[0] * args[1]).sum())]
    if name == "reduce_struct":
        return [float(np.abs(args[0]).sum()), None, None, float(np.abs(args[1]).sum()), None, None]
    return [None, None, None]


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("name", CHUNKED)
def test_chunked_call_computes_what_one_whole_call_does(rajaperf, client, name: str, chunking: str) -> None:
    kernel = getattr(rajaperf, name)
    args = table_arguments(kernel)
    size = max(a.size for a in args if isinstance(a, np.ndarray))
    chunk = CHUNKINGS[chunking] or size // 3 + 1
    whole = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = kernel(*whole)
    got = dask.compute(*rs2gpu.dask.call(kernel, *chunked(args, chunk)))
    written = [p for p in kernel.entry.params if p.mutable and p.in_memory]
    for value, p in zip(got, written):
        expected = whole[kernel.entry.params.index(p)]
        assert value.tobytes() == expected.tobytes(), f"{name}: `{p.name}` differs from the whole call's"
    if kernel.entry.returns is not None:
        results = got[len(written)]
        results = results if isinstance(results, tuple) else (results,)
        want = want if isinstance(want, tuple) else (want,)
        for k, (g, w, scale) in enumerate(zip(results, want, sum_scales(name, args))):
            if scale is None:
                assert g == w, f"{name}: result {k} is {g}, the whole call's {w}"
            else:
                # a sum of n terms in another order: within n·ε·Σ|terms| + ε·|result| (the reduction rule)
                eps = float(np.finfo(np.float64).eps)
                assert abs(g - w) <= size * eps * scale + abs(w) * eps, f"{name}: result {k} is {g}, not {w}"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_kernel_that_cannot_chunk_is_refused_when_called(rajaperf, name: str) -> None:
    kernel = getattr(rajaperf, name)
    code, _reason = REFUSED[name]
    args = table_arguments(kernel)
    with pytest.raises(rs2gpu.dask.ChunkingError) as refused:
        rs2gpu.dask.call(kernel, *chunked(args, max(2, args[0].size // 3 if isinstance(args[0], np.ndarray) else 2)))
    assert refused.value.code == code
    message = str(refused.value)
    assert message.startswith(f"error[{code}]: `{name}` ")
    assert " --> src/" in message and ".rs:" in message
