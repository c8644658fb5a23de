"""Every RAJAPerf corpus kernel on the cuda backend computes what rustc's build of it computes.

The inputs are the benchmark table's (`bench/kernels.py`): RAJAPerf's shapes (meshes, zone lists, index
offsets, struct extents) at a small size, filled with random non-zero values. Outputs are compared bit
for bit, except where the table states why the arithmetic differs: reductions and scatters that add in
another order (within (n-1)·ε·Σ|terms|), and `exp` (not correctly rounded on either side) — the table's
`tolerance`.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from bench.harness import BindError, gen_results, generated_arguments, prepare
from bench.kernels import KERNELS

from tests.support.paths import RAJAPERF as EXAMPLE

pytestmark = pytest.mark.gpu

TARGET = 20_000  # small, but past several blocks in every dimension of the 2-D and 3-D kernels
# The table's entries whose Rust function is a #[kernel] (INDEXLIST's scans are plain Rust by design; the
# benchmark reports them as not translated).
_MARKED = {m for f in (EXAMPLE / "src").glob("*.rs")
           for m in re.findall(r"#\[kernel[^\]]*\]\s*pub fn (\w+)", f.read_text())}
ENTRIES = [k for k in KERNELS if k.rust in _MARKED]


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("k", ENTRIES, ids=[k.name for k in ENTRIES])
def test_corpus_kernel_matches_rustc(cuda_kernels, cpu_kernels, k):
    entry = cpu_kernels.abi.kernels[k.rust]
    dims = k.dims(TARGET)
    sides = prepare(k, dims, np, seed=7)
    cpu_vars = {name: _copy(value) for name, value in sides.gen.items()}
    gpu_vars = {name: _copy(value) for name, value in sides.gen.items()}
    try:
        cpu_args = generated_arguments(entry, cpu_vars, dims)
        gpu_args = generated_arguments(entry, gpu_vars, dims)
    except BindError as e:
        pytest.fail(str(e))
    want = gen_results(k, cpu_vars, getattr(cpu_kernels, k.rust)(*cpu_args))
    got = gen_results(k, gpu_vars, getattr(cuda_kernels, k.rust)(*gpu_args))
    bounds = k.tolerance(want, cpu_vars, dims) if k.tolerance is not None else {}
    for name, expected in want.items():
        actual = got[name]
        if name in bounds:
            assert np.all(np.abs(np.asarray(actual, dtype=np.float64) - np.asarray(expected, dtype=np.float64))
                          <= bounds[name]), f"{k.name}: `{name}` beyond the stated bound"
        elif isinstance(expected, np.ndarray):
            assert actual.tobytes() == expected.tobytes(), f"{k.name}: `{name}` differs from rustc"
        else:
            assert actual == expected, f"{k.name}: `{name}` = {actual}, rustc gives {expected}"
