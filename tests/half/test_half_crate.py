"""Kernels that name the `half` crate's types (a local crate named `half` with the same surface, crates.io
being out of reach: tests/half/data/half_stand_in) translate as if they named the support crate's, and give
on the device the bits rustc's build gives (tests/half/data/half_crate_kernels.rs)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rs2gpu import support_crate_path

from tests.support.devices import CUDA, EMULATED, on, rustc_build

ml_dtypes = pytest.importorskip("ml_dtypes")

DATA = Path(__file__).parent / "data"
HALF_STAND_IN = DATA / "half_stand_in"


def write_half_crate(folder: Path) -> Path:
    """A crate in `folder` whose kernels `use half::f16`, depending on the stand-in by path (bench/gpu_prepare.sh
    builds its cpu library too)."""
    root = folder / "uses_half"
    (root / "src").mkdir(parents=True)
    support = support_crate_path()
    (root / "Cargo.toml").write_text(
        '[package]\nname = "uses_half"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
        f'half = {{ path = "{HALF_STAND_IN.as_posix()}" }}\nrs2gpu = {{ path = "{support.as_posix()}" }}\n\n'
        "[workspace]\n")
    (root / "src" / "lib.rs").write_text((DATA / "half_crate_kernels.rs").read_text())
    return root


@pytest.fixture(scope="module")
def half_crate(tmp_path_factory) -> Path:
    return write_half_crate(tmp_path_factory.mktemp("half-crate"))


@pytest.mark.parametrize("device", [on(EMULATED, id="half-crate"), on(CUDA, id="half-crate")], indirect=["device"])
def test_kernels_naming_the_half_crates_types_give_rusts_bits(device, half_crate) -> None:
    rust, kernels = rustc_build(half_crate), device.load(half_crate)
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    outs = [np.zeros(1 << 16, np.float16) for _ in range(2)]
    for k, out in zip((rust, kernels), outs):
        k.scale(out, x, 0.3)
    np.testing.assert_array_equal(outs[0].view(np.uint16), outs[1].view(np.uint16))
    wide = np.random.default_rng(5).standard_normal(5000) * 10.0 ** np.random.default_rng(6).integers(-40, 40, 5000)
    narrow = [np.zeros(5000, ml_dtypes.bfloat16) for _ in range(2)]
    for k, out in zip((rust, kernels), narrow):
        k.narrow(out, wide)
    np.testing.assert_array_equal(narrow[0].view(np.uint16), narrow[1].view(np.uint16))
