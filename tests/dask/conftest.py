"""Kernel modules on the cpu backend (the Rust built by rustc: what a whole call computes), one Dask cluster
per test module, and Dask arrays of the bench table's inputs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

from tests.support.paths import REPO

HEAT = REPO / "examples" / "heat"


@pytest.fixture(scope="session")
def heat(kernel_cache: Path):
    return rs2gpu.load(HEAT, backend="cpu")


@pytest.fixture(scope="module")
def client(kernel_cache: Path):
    """A cluster of one in-process worker with two threads."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        yield client


def table_arguments(kernel, seed: int = 5) -> list:
    """The kernel's arguments from the bench table (RAJAPerf's shapes, random values) at a small size."""
    from bench import harness
    from bench.kernels import BY_NAME

    entry = next(k for k in BY_NAME.values() if k.rust == kernel.name)
    dims = entry.dims(150)
    return list(harness.generated_arguments(kernel.entry, harness.prepare(entry, dims, np, seed).gen, dims))


def chunked(args: list, chunk: int) -> list:
    """`args` with each 1-D array of more than one chunk as a Dask array of `chunk`-element chunks."""
    import dask.array as da

    return [da.from_array(a, chunks=chunk) if isinstance(a, np.ndarray) and a.ndim == 1 and a.size > chunk else a
            for a in args]
