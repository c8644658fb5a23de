"""Workers in processes of their own load the kernels once each, through the disk cache: the library the
test's own load built is the one they open."""
from __future__ import annotations

import numpy as np

import rs2gpu.dask


def test_a_process_worker_loads_the_kernels_from_the_disk_cache(rajaperf, kernel_cache) -> None:
    import dask.array as da
    from distributed import Client, LocalCluster

    libraries = sorted(kernel_cache.glob("cpu/*/librs2gpu_kernels.so"))
    assert libraries  # the test's own load built one
    built = {path: path.stat().st_mtime_ns for path in libraries}
    a = da.from_array(np.arange(12.0), chunks=4)
    (c,) = rs2gpu.dask.call(rajaperf.add, da.zeros(12, chunks=4), a, a)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        assert c.compute().tolist() == (2 * np.arange(12.0)).tolist()
        loaded = client.run(lambda: [source.path for source in rs2gpu.dask.graph._MODULES])
    assert list(loaded.values()) == [[rajaperf.origin.path]]
    assert sorted(kernel_cache.glob("cpu/*/librs2gpu_kernels.so")) == libraries
    assert {path: path.stat().st_mtime_ns for path in libraries} == built  # opened, not rebuilt
