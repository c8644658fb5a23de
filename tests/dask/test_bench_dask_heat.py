"""bench/dask_heat.py's comparison, in its mode for a machine without a GPU: the Dask path's grid agrees
bitwise with the plain call's, and the JSON holds the timings and their ratio."""
from __future__ import annotations

import json

from bench import dask_heat


def test_small_cpu_run_writes_timings_and_the_ratio(heat, tmp_path) -> None:
    out = tmp_path / "dask-heat.json"
    dask_heat.main(["--small", "--backend", "cpu", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["bitwise_equal"] is True
    assert result["backend"] == "cpu" and result["rows"] == 256 and result["chunk_rows"] == 32
    assert result["ratio"] == result["dask_median_s"] / result["plain_median_s"] > 0
