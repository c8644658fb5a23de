"""Verified index lists (`rs2gpu.IndexList`) on the cuda backend: RAJAPerf's Apps kernels that go through a
zone list, with the bench's meshes, against rustc's build of the same kernels (the cpu backend) given the
list as a plain array. With a verified list the host proves the list checks, so the loop runs without them,
and a call on device arrays returns without waiting for the device."""
from __future__ import annotations

import numpy as np
import pytest

import rs2gpu
from bench import harness
from bench.kernels import KERNELS
from rs2gpu.ir.abi import KernelABI

pytestmark = pytest.mark.gpu

BY_NAME = {k.name: k for k in KERNELS}
LISTED = ["ZONAL_ACCUMULATION_3D", "DEL_DOT_VEC_2D", "MATVEC_3D_STENCIL", "NODAL_ACCUMULATION_3D"]
SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
"""


def arguments(kernel, entry: KernelABI, target: int, seed: int, verified: bool):
    """The bench's data for the kernel at `target` zones (numpy), bound to the Rust signature."""
    k = BY_NAME[kernel]
    d = k.dims(target)
    sides = harness.prepare(k, d, np, seed)
    if kernel == "NODAL_ACCUMULATION_3D":  # integers and eighths of multiples of 8: every order adds exactly
        sides.gen["x"] = np.round(64 * sides.gen["x"])
        sides.gen["vol"] = 8 * np.round(64 * sides.gen["vol"])
    return list(harness.generated_arguments(entry, sides.gen, d, k.verified_lists if verified else ()))


@pytest.mark.parametrize("kernel", LISTED)
def test_a_verified_zone_list_runs_the_loop_without_list_checks_and_gives_rustcs_bits(cuda_kernels, cpu_kernels,
                                                                                       kernel):
    name = BY_NAME[kernel].rust
    entry = cuda_kernels.abi.kernels[name]
    want, got = arguments(kernel, entry, 200_000, 7, False), arguments(kernel, entry, 200_000, 7, True)
    getattr(cpu_kernels, name)(*want)
    getattr(cuda_kernels, name)(*got)
    assert getattr(cuda_kernels, name).last_variants == [f"rs2gpu_{name}_0_proven"]
    for w, g in zip(want, got):
        if isinstance(g, np.ndarray):  # the outputs and the inputs; not the verified list
            assert w.tobytes() == g.tobytes()


def _spin(cp):
    return cp.RawKernel(SPIN, "spin")


@pytest.mark.parametrize("verified", [True, False], ids=["verified list", "plain array"])
def test_a_call_on_device_arrays_waits_for_the_device_only_with_a_plain_list(cuda_kernels, cpu_kernels, verified):
    import cupy as cp  # the cuda backend's own dependency: a GPU machine without it fails here

    kernel = BY_NAME["ZONAL_ACCUMULATION_3D"]
    entry = cuda_kernels.abi.kernels[kernel.rust]
    host = arguments(kernel.name, entry, 200_000, 8, False)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in host]
    cpu_kernels.zonal_accumulation_3d(*want)
    device = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in host]
    if verified:
        device[2] = rs2gpu.IndexList(device[2])
    cuda_kernels.zonal_accumulation_3d(*device)  # the first call loads the module and uploads the list
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        _spin(cp)((1,), (1,), (np.int64(200_000_000),))  # about 0.1 s of a busy device
        cuda_kernels.zonal_accumulation_3d(*device)
        returned_first = not stream.done
        stream.synchronize()
    assert returned_first == verified
    assert cp.asnumpy(device[0]).tobytes() == want[0].tobytes()


def test_a_verified_list_with_a_zone_past_the_mesh_panics_as_rust_does(cuda_kernels, cpu_kernels):
    kernel = BY_NAME["ZONAL_ACCUMULATION_3D"]
    entry = cuda_kernels.abi.kernels[kernel.rust]
    plain = arguments(kernel.name, entry, 200_000, 9, False)
    zones = plain[2].copy()
    zones[5000] = plain[1].size - 1  # its corners past x's end
    plain[2] = zones
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        cpu_kernels.zonal_accumulation_3d(*plain)
    verified = list(plain)
    verified[2] = rs2gpu.IndexList(zones)
    with pytest.raises(rs2gpu.KernelPanic) as got:
        cuda_kernels.zonal_accumulation_3d(*verified)
    assert (got.value.message, got.value.location) == (expected.value.message, expected.value.location)
    assert cuda_kernels.zonal_accumulation_3d.last_variants == ["rs2gpu_zonal_accumulation_3d_0"]


@pytest.mark.parametrize("kernel", LISTED)
def test_repeated_calls_through_a_verified_zone_list_skip_the_general_path_and_give_rustcs_bits(
        cuda_kernels, cpu_kernels, kernel):
    import cupy as cp

    name = BY_NAME[kernel].rust
    entry = cuda_kernels.abi.kernels[name]
    gpu_kernel = getattr(cuda_kernels, name)
    lists = {at: a for at, a in enumerate(arguments(kernel, entry, 200_000, 10, True))
             if isinstance(a, rs2gpu.IndexList)}
    before = gpu_kernel.repeats
    for seed in (10, 11, 12):  # new data on the same mesh in every call
        want = arguments(kernel, entry, 200_000, seed, False)
        device = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in want]
        for at, verified in lists.items():
            assert verified.numpy().tobytes() == want[at].tobytes()  # the mesh's zones
            device[at] = verified
        getattr(cpu_kernels, name)(*want)
        gpu_kernel(*device)
        assert gpu_kernel.last_variants == [f"rs2gpu_{name}_0_proven"]
        for w, g in zip(want, device):
            if isinstance(g, cp.ndarray):
                assert w.tobytes() == cp.asnumpy(g).tobytes()
    assert gpu_kernel.repeats - before >= 2  # the first call of this mesh decides
