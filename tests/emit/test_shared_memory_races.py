"""The shared memory of the tiled products (the tiles and covering entry points) and of the staged transpose,
under ThreadSanitizer: the emulated device (bench/emulate.py) runs each block's threads as real threads that
meet at a `std::barrier`, here built with `-fsanitize=thread`, so two accesses to a tile that no barrier
orders are reported. The same products with their barrier between storing a slice and multiplying it out
taken out are reported, so a clean run is not a sanitizer that sees nothing. In the `slow` tier: the
sanitizer slows the threads down."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench import emulate
from tests.support.paths import REPO

PROBE = "tests.support.tsan_tiles"
RUNS = ["tiles matmul", "tiles matmul_fused", "covering matmul", "covering matmul_fused", "covering transpose"]


def sanitized(*args: str) -> subprocess.CompletedProcess:
    runtime = subprocess.run([emulate.compiler() or "g++", "-print-file-name=libtsan.so.2"], capture_output=True,
                             text=True).stdout.strip()
    if not os.path.isabs(runtime):
        pytest.fail("ThreadSanitizer's runtime (libtsan.so.2, from g++) is required for this test")
    # the runtime must be loaded before the process starts threads: preloaded into the Python that runs the probe
    env = {**os.environ, "LD_PRELOAD": runtime, "TSAN_OPTIONS": "halt_on_error=0 exitcode=66"}
    return subprocess.run([sys.executable, "-m", PROBE, *args], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=600)


@pytest.mark.slow
def test_staged_kernels_share_memory_without_a_race_and_agree_with_rustc() -> None:
    run = sanitized()
    assert "ThreadSanitizer" not in run.stderr, run.stderr[-4000:]
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.splitlines() == [f"{name} agrees" for name in RUNS]


@pytest.mark.slow
def test_a_product_without_its_slice_barrier_is_reported() -> None:
    run = sanitized("--without-barrier")
    assert "WARNING: ThreadSanitizer: data race" in run.stderr
    assert run.returncode == 66
