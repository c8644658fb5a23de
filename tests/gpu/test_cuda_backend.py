"""The cuda backend computes what rustc's build of the same source computes.

Bitwise equality holds for every kernel whose arithmetic is + − × ÷ sqrt without contraction (NVRTC
is run with --fmad=false, and these operations are correctly rounded on both sides). Reductions are
the exception: the GPU adds in a different order, so `dot` is compared within the bound of
reordering a sum of n terms, n·ε·Σ|aᵢbᵢ|.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import rs2gpu
from rs2gpu.ir.abi import KernelABI, ParamKind

from tests.support.paths import RAJAPERF as EXAMPLE

pytestmark = pytest.mark.gpu

SIZES = (1, 255, 256, 257, 1_000_003)

# Kernel names come from the sources, so a translation failure fails the tests instead of their collection.
KERNELS = sorted(m.group(1) for f in (EXAMPLE / "src").rglob("*.rs")
                 for m in re.finditer(r"#\[kernel[^\]]*\]\s*pub fn (\w+)\(([^)]*)\)", f.read_text(), re.S))
# Element-wise here means: only f64 slices and f64 scalars, loops over the slices' lengths, no result. The
# corpus kernels with other parameters (sizes, structs, index lists) are checked in test_corpus_gpu.py.
_SIGNATURES = {m.group(1): (m.group(2), m.group(3)) for f in (EXAMPLE / "src").rglob("*.rs")
               for m in re.finditer(r"#\[kernel[^\]]*\]\s*pub fn (\w+)\(([^)]*)\)([^{]*)\{", f.read_text(), re.S)}
ELEMENTWISE = sorted(k for k, (params, ret) in _SIGNATURES.items()
                     if "->" not in ret and all(t.strip() in ("&mut [f64]", "&[f64]", "f64")
                                                for t in re.findall(r":\s*([^,]+)", params)))


def random_arguments(entry: KernelABI, n: int, rng: np.random.Generator, input_extra: int) -> list:
    """Non-zero random data: outputs of length n, inputs of length n + input_extra (stencils read past
    the loop's end), scalars in (0.5, 1.5)."""
    args = []
    for p in entry.params:
        if p.kind == ParamKind.SLICE:
            length = n if p.mutable else n + input_extra
            args.append(rng.uniform(0.5, 1.5, length) * rng.choice([-1.0, 1.0], length))
        elif p.kind == ParamKind.SCALAR:
            args.append(float(rng.uniform(0.5, 1.5)))
        else:
            raise NotImplementedError(p.kind)
    return args


INPUT_EXTRAS = (lambda n: 0, lambda n: 16, lambda n: 25 * n + 16)  # exact, stencil halo, 26 rows (ARRAY_OF_PTRS)


def input_extra_for(cpu_kernels, name: str, n: int) -> int:
    """The smallest extra input length with which the Rust kernel does not panic at size n."""
    entry = cpu_kernels.abi.kernels[name]
    rng = np.random.default_rng(0)
    for extra in INPUT_EXTRAS:
        try:
            getattr(cpu_kernels, name)(*random_arguments(entry, n, rng, extra(n)))
            return extra(n)
        except rs2gpu.KernelPanic:
            continue
    raise AssertionError(f"{name} panics on the cpu backend with any input length")


def planckian_bound(args, expected):
    """planckian computes w = x / (exp(y) - 1). CUDA's exp is within 1 ulp and glibc's within 1 ulp
    of the true value, so the two exp results differ by at most 2 ulp(exp(y)); the subtraction turns
    that into a relative error of 2 ulp(exp(y)) / |exp(y) - 1| in the denominator, and the division and
    subtraction add at most 2 more rounding errors (ε each) of their own."""
    x, y, u, v, w = expected
    e = np.exp(y)
    relative = 2 * np.spacing(np.abs(e)) / np.abs(e - 1.0) + 4 * np.finfo(np.float64).eps
    return {"w": np.abs(w) * relative}


# Kernels that call a math function which is not correctly rounded on both sides: the outputs it feeds
# are compared within a derived bound, every other output bitwise.
NOT_CORRECTLY_ROUNDED = {"planckian": planckian_bound}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_kernel_matches_rustc_bitwise(cuda_kernels, cpu_kernels, name, n):
    entry = cpu_kernels.abi.kernels[name]
    rng = np.random.default_rng([n, len(name)])
    args = random_arguments(entry, n, rng, input_extra_for(cpu_kernels, name, n))
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    getattr(cpu_kernels, name)(*expected)
    getattr(cuda_kernels, name)(*args)
    bounds = NOT_CORRECTLY_ROUNDED[name](args, expected) if name in NOT_CORRECTLY_ROUNDED else {}
    for p, got, want in zip(entry.params, args, expected):
        if not isinstance(got, np.ndarray):
            continue
        if p.name in bounds:
            assert np.all(np.abs(got - want) <= bounds[p.name]), f"{name}: `{p.name}` beyond the bound"
        else:
            assert got.tobytes() == want.tobytes(), f"{name}: `{p.name}` differs from rustc at n={n}"


@pytest.mark.parametrize("n", SIZES)
def test_dot_matches_rustc_within_reordering_bound(cuda_kernels, cpu_kernels, n):
    rng = np.random.default_rng(n)
    a, b = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    want = cpu_kernels.dot(a, b)
    got = cuda_kernels.dot(a, b)
    bound = n * np.finfo(np.float64).eps * np.sum(np.abs(a * b))
    assert abs(got - want) <= bound


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_shared_inputs_are_left_untouched(cuda_kernels, cpu_kernels, name):
    entry = cuda_kernels.abi.kernels[name]
    args = random_arguments(entry, 1000, np.random.default_rng(7), input_extra_for(cpu_kernels, name, 1000))
    before = {p.name: a.tobytes() for p, a in zip(entry.params, args) if p.kind == ParamKind.SLICE and not p.mutable}
    getattr(cuda_kernels, name)(*args)
    for p, a in zip(entry.params, args):
        if p.name in before:
            assert a.tobytes() == before[p.name]


def test_write_only_output_is_never_uploaded(cuda_kernels):
    n = 4096
    a, b, c = np.full(n, np.nan), np.ones(n), np.ones(n)
    cuda_kernels.triad(a, b, c, 2.0)
    uploads = {t.param for t in cuda_kernels.triad.last_transfers if t.direction == "h2d"}
    downloads = {t.param for t in cuda_kernels.triad.last_transfers if t.direction == "d2h"}
    assert uploads == {"b", "c"}
    assert downloads == {"a"}
    assert np.all(a == 3.0)


def test_read_modify_write_output_is_uploaded_and_downloaded(cuda_kernels):
    y, x = np.ones(100), np.arange(100.0)
    cuda_kernels.daxpy(y, x, 2.0)
    directions = sorted((t.param, t.direction) for t in cuda_kernels.daxpy.last_transfers)
    assert directions == [("x", "h2d"), ("y", "d2h"), ("y", "h2d")]
    assert np.array_equal(y, 1.0 + 2.0 * np.arange(100.0))


def test_device_arrays_are_never_copied(cuda_kernels):
    import cupy as cp

    n = 100_000
    b, c = cp.random.random(n), cp.random.random(n)
    a = cp.empty(n)
    cuda_kernels.triad(a, b, c, 0.5)
    cuda_kernels.synchronize()
    assert cuda_kernels.triad.last_transfers == []
    assert cp.asnumpy(a).tobytes() == (cp.asnumpy(b) + 0.5 * cp.asnumpy(c)).tobytes()


def test_repeated_calls_with_cupy_arrays_skip_the_general_path_and_keep_its_checks(cuda_kernels):
    import cupy as cp

    n = 100_001
    before = cuda_kernels.triad.repeats
    for alpha in (0.5, -2.0, 3.0):
        b, c = cp.random.random(n), cp.random.random(n)
        a = cp.empty(n)
        cuda_kernels.triad(a, b, c, alpha)
        assert cp.asnumpy(a).tobytes() == (cp.asnumpy(b) + alpha * cp.asnumpy(c)).tobytes()
    assert cuda_kernels.triad.repeats - before >= 2  # the first call of this length decides
    with pytest.raises(rs2gpu.AliasError):
        cuda_kernels.triad(b, b, c, 1.0)


def test_repeated_reductions_with_cupy_arrays_return_rustcs_results(cuda_kernels, cpu_kernels):
    import cupy as cp

    rng = np.random.default_rng(11)
    before = cuda_kernels.reduce3_int.repeats
    for _ in range(3):
        vec = rng.integers(-1000, 1000, 1_000_003, dtype=np.int32)
        assert cuda_kernels.reduce3_int(cp.asarray(vec)) == cpu_kernels.reduce3_int(vec)
        x = rng.uniform(-1, 1, 1_000_003)
        assert cuda_kernels.first_min(cp.asarray(x)) == cpu_kernels.first_min(x)  # a compare: exact
    assert cuda_kernels.reduce3_int.repeats - before >= 2  # the first call of this length decides


def test_repeated_fir_calls_with_numpy_coefficients_return_rustcs_results(cuda_kernels, cpu_kernels):
    import cupy as cp

    rng = np.random.default_rng(12)
    n = 100_003
    before = cuda_kernels.fir.repeats
    for _ in range(3):
        coeff, data = rng.uniform(-1, 1, 16), rng.uniform(-1, 1, n + 15)
        expected = np.zeros(n)
        cpu_kernels.fir(expected, data, coeff)
        out = cp.empty(n)
        cuda_kernels.fir(out, cp.asarray(data), coeff)  # the 16 coefficients travel in the launch arguments
        assert cp.asnumpy(out).tobytes() == expected.tobytes()  # no fused multiply-adds: bitwise
    assert cuda_kernels.fir.repeats - before >= 2  # the first call of this length decides


def test_torch_tensors_on_both_devices(cuda_kernels):
    import torch  # the GPU machine has it: a missing torch fails here instead of skipping the coverage

    n = 1000
    b = torch.rand(n, dtype=torch.float64)
    c = torch.rand(n, dtype=torch.float64)
    a_host = torch.empty(n, dtype=torch.float64)
    cuda_kernels.triad(a_host, b, c, 2.0)
    assert torch.equal(a_host, b + 2.0 * c)
    a_dev, b_dev, c_dev = a_host.cuda() * 0, b.cuda(), c.cuda()
    cuda_kernels.triad(a_dev, b_dev, c_dev, 2.0)
    cuda_kernels.synchronize()
    assert torch.equal(a_dev.cpu(), b + 2.0 * c)


def test_repeated_calls_with_torch_cuda_tensors_skip_the_general_path_and_keep_its_checks(cuda_kernels):
    import torch

    n = 100_001
    before = cuda_kernels.triad.repeats
    for alpha in (0.5, -2.0, 3.0):
        b, c = torch.rand(n, dtype=torch.float64, device="cuda"), torch.rand(n, dtype=torch.float64, device="cuda")
        a = torch.empty(n, dtype=torch.float64, device="cuda")
        cuda_kernels.triad(a, b, c, alpha)
        assert torch.equal(a, b + alpha * c)
    assert cuda_kernels.triad.repeats - before >= 2  # the first call of this length decides
    with pytest.raises(rs2gpu.AliasError):
        cuda_kernels.triad(b, b, c, 1.0)
    with pytest.raises(ValueError, match="C-contiguous"):
        cuda_kernels.triad(a[::2], b[::2], c[::2], 1.0)
    with pytest.raises(TypeError):
        cuda_kernels.triad(a.float(), b.float(), c.float(), 1.0)


def test_aliasing_device_views_are_refused_before_any_work(cuda_kernels):
    import cupy as cp

    x = cp.arange(20, dtype=cp.float64)
    before = cp.asnumpy(x).copy()
    with pytest.raises(rs2gpu.AliasError):
        cuda_kernels.copy(x[0:10], x[5:15])
    assert np.array_equal(cp.asnumpy(x), before)
    cuda_kernels.copy(x[0:10], x[10:20])  # disjoint views of one buffer are fine
    cuda_kernels.synchronize()
    assert np.array_equal(cp.asnumpy(x[0:10]), before[10:20])


def test_empty_arrays_launch_nothing(cuda_kernels):
    a = np.empty(0)
    cuda_kernels.triad(a, np.empty(0), np.empty(0), 1.0)
    assert cuda_kernels.dot(np.empty(0), np.empty(0)) == 0.0


def test_a_second_process_finds_the_cubins_in_the_disk_cache(tmp_path):
    script = (
        "import rs2gpu, sys\n"
        f"k = rs2gpu.load({str(EXAMPLE)!r}, backend='cuda')\n"
        "print(k.device_backend.compiles)\n"
    )
    env = dict(os.environ, RS2GPU_CACHE_DIR=str(tmp_path))
    # run from tmp_path, so the source tree's top-level `rs2gpu/` folder cannot shadow the installed package
    first = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert int(first.stdout.split()[-1]) == len(KERNELS)
    assert int(second.stdout.split()[-1]) == 0


def test_host_arrays_larger_than_the_staging_ring_round_trip(cuda_kernels):
    from rs2gpu.runtime.staging import STAGING_BUFFERS, STAGING_CHUNK

    n = (STAGING_BUFFERS + 3) * STAGING_CHUNK // 8 + 5  # more chunks than pinned buffers, and a ragged end
    rng = np.random.default_rng(11)
    y, x = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    expected = y + 0.75 * x
    cuda_kernels.daxpy(y, x, 0.75)
    assert y.tobytes() == expected.tobytes()


# A kernel of cupy's that waits ~2 ms on the device, then writes `value` into every element: whatever runs
# after it on the same stream sees the values; anything that overtook it would see the old ones.
_SLOW_FILL = r"""
extern "C" __global__ void slow_fill(double* out, double value, unsigned long long n, unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = value;
}
"""


def _slow_fill(cp, array, value):
    kernel = cp.RawKernel(_SLOW_FILL, "slow_fill")
    kernel((64,), (256,), (array, cp.float64(value), cp.uint64(array.size), cp.uint64(2_000_000)))


@pytest.mark.parametrize("stream", ["default", "a stream of the caller's"])
def test_a_call_runs_after_the_work_queued_before_it_on_the_current_stream(cuda_kernels, stream):
    import cupy as cp

    with (cp.cuda.Stream(non_blocking=True) if stream != "default" else cp.cuda.Stream.null):
        source, copied = cp.zeros(1 << 20), cp.full(1 << 20, -1.0)
        cp.cuda.get_current_stream().synchronize()
        _slow_fill(cp, source, 3.0)
        cuda_kernels.copy(copied, source)   # c = a: must read what slow_fill wrote
        assert bool((copied == 3.0).all())  # a cupy reduction after it on the same stream


def test_work_queued_after_a_call_sees_what_it_wrote(cuda_kernels):
    import cupy as cp

    n = 1 << 26  # long enough that a read racing the kernel would see the old values
    source, copied = cp.full(n, 5.0), cp.zeros(n)
    cp.cuda.get_current_stream().synchronize()
    cuda_kernels.copy(copied, source)
    assert float(copied[-1].get()) == 5.0  # .get() waits for the current stream only
