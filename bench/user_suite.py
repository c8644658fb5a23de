"""The user-style suite: the loops users write (bench/user-suite), run by rs2gpu against the library calls a user
would make instead, the fastest named per row.

    python3 bench/user_suite.py --out bench/results          # on an NVIDIA GPU: the table, history.csv's rows
    python3 bench/user_suite.py --small --out DIR           # without a GPU: the cpu backend against numpy
    python3 bench/user_suite.py --sanitize                   # each kernel once, small, for compute-sanitizer
    python3 bench/user_suite.py --cases matmul_f32,softmax_f32

For each case and size (bench/user_cases.py): the inputs are drawn on the host and copied to the device; the
rs2gpu kernel runs on the device arrays and its result is checked against the cpu backend's (the same Rust
built by rustc), bitwise or within the case's stated bound. Then every alternative that imports (cupy, cupyx,
torch) runs on the same arrays, its result checked against rs2gpu's (one that disagrees is named, not timed),
and all are timed with CUDA events around one call on one stream (cold L2, median of the reps, taken in turn).
The row names the fastest alternative and the ratio rs2gpu / fastest. Writes user-suite.md and
user-suite.json under --out after every row (a run cut short still leaves its table), and the rows to --out's
history.csv (bench "user_suite.py": hand_us is the fastest alternative's time, gen_us rs2gpu's).
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import shlex
import statistics
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)   # bench/'s modules are imported as `bench.*`, never as top-level names
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # appended: an installed rs2gpu takes precedence over the source tree

from bench import timing  # noqa: E402
from bench.build import git_commit, log  # noqa: E402
from bench.harness import generated_arguments  # noqa: E402
from bench.user_cases import BY_NAME, CASES, Case, Size  # noqa: E402
from bench.user_report import Row, goals, micros, write_outputs  # noqa: E402

CRATE = ROOT / "bench" / "user-suite"
GPU_LIBRARIES = ("cupy", "cupyx", "torch", "triton")
ON_TORCH = ("torch", "triton")   # libraries that take torch tensors and launch on torch's current stream
SEED = 20261205


# ---------------------------------------------------------------------------------------------------
# Comparing results

def _bits(a: np.ndarray) -> np.ndarray:
    return a.view({8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}[a.dtype.itemsize])


def compare(got: np.ndarray, want: np.ndarray, bound) -> tuple[bool, str, float]:
    """(agree, how, share): bitwise where `bound` is None, else |got - want| ≤ bound element by element (NaN
    only where both are NaN). `how` is 'bitwise', 'bound' or the first disagreement; `share` the largest
    |got - want| as a share of its bound (0 when bitwise)."""
    got, want = np.asarray(got).ravel(), np.asarray(want).ravel()
    if got.shape != want.shape:
        return False, f"{got.size} elements against {want.size}", math.inf
    if got.dtype == want.dtype and np.array_equal(_bits(got), _bits(want)):
        return True, "bitwise", 0.0
    if bound is None:
        differ = _bits(got) != _bits(want) if got.dtype == want.dtype else got != want
        first = int(np.flatnonzero(differ)[0])
        return False, (f"{int(differ.sum())} of {got.size} elements differ (bitwise expected); first at {first}: "
                       f"{got[first]!r} against {want[first]!r}"), math.inf
    g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    excess = np.where(both_nan, 0.0, np.abs(g - w) - bound)
    excess = np.nan_to_num(excess, nan=np.inf)
    if excess.max() <= 0:
        scale = np.where(both_nan, 0.0, np.abs(g - w)) / np.maximum(bound, np.finfo(np.float64).tiny)
        return True, "bound", float(scale.max())
    first = int(np.argmax(excess > 0))
    b = bound if np.ndim(bound) == 0 else np.broadcast_to(bound, g.shape)[first]
    return False, (f"{int((excess > 0).sum())} of {got.size} elements beyond the bound; first at {first}: "
                   f"{got[first]!r} against {want[first]!r} (bound {float(b):.3g})"), math.inf


def blocks(case: Case, host: dict, d: dict) -> list[tuple[dict, dict, slice]]:
    """The sub-problems the cpu backend computes to check the device's result, with fresh outputs."""
    if case.cpu_blocks is not None:
        return case.cpu_blocks(host, d)
    return [({name: value.copy() if isinstance(value, np.ndarray) else value for name, value in host.items()},
             d, slice(None))]


def _alt_bound(case: Case, sub: dict, d: dict, bound, ours: np.ndarray):
    """How far an alternative's result may lie from rs2gpu's. Where rs2gpu must match rustc bitwise, a
    library that orders the same float operations otherwise (a stencil's terms) still counts as agreeing
    within a few rounding steps of the result's magnitude."""
    if case.alt_bound is not None:
        return case.alt_bound(sub, d)
    if bound is not None:
        return bound
    if ours.dtype.kind != "f" or not np.isfinite(ours).any():
        return None
    return 8 * float(np.finfo(ours.dtype).eps) * float(np.nanmax(np.abs(ours[np.isfinite(ours)])))


def _signed(array):
    """An unsigned integer array as the signed one of its width, the same bits: torch indexes with signed
    integers and supports few operations on unsigned ones (the suite's indices are below 2^31)."""
    if array.dtype.kind == "u" and array.dtype.itemsize > 1:
        return array.view(f"i{array.dtype.itemsize}")
    return array


def kernel_call(kernels, case: Case, arrays: dict, d: dict, verified: tuple = ()):
    """A call of the case's kernel from `kernels` (an rs2gpu module) on `arrays`, bound by parameter name
    (the lists named in `verified` as `rs2gpu.IndexList`s); the call returns the result array."""
    function = getattr(kernels, case.kernel)
    args = generated_arguments(kernels.abi.kernels[case.kernel], arrays, d, verified)
    return lambda: (function(*args), arrays[case.result])[1]


# ---------------------------------------------------------------------------------------------------
# Libraries

def import_libraries(small: bool) -> tuple[dict, dict]:
    """(modules by library name, why each missing one is missing). --small uses numpy alone."""
    if small:
        return {"numpy": np}, {name: "not used by --small" for name in GPU_LIBRARIES}
    # before cupy and torch are imported: their f32 products stay f32 (the comparison is with TF32 off)
    os.environ["CUPY_TF32"] = "0"
    os.environ["NVIDIA_TF32_OVERRIDE"] = "0"
    found, missing = {}, {}
    for name in GPU_LIBRARIES:
        try:
            if name == "cupyx":
                import cupyx.scipy.special  # noqa: F401 - softmax lives there
                import cupyx
                found[name] = cupyx
            elif name == "torch":
                import torch
                # the same arithmetic as rs2gpu's f32: no TF32 in products or convolutions
                torch.backends.cuda.matmul.allow_tf32 = False
                torch.backends.cudnn.allow_tf32 = False
                torch.set_float32_matmul_precision("highest")
                if not torch.cuda.is_available():
                    raise RuntimeError("torch.cuda.is_available() is False")
                found[name] = torch
            elif name == "triton":
                if "torch" not in found:
                    raise RuntimeError("the Triton kernels run on torch tensors, and torch is absent")
                import triton
                found[name] = triton
            else:
                found[name] = __import__(name)
        except Exception as e:  # noqa: BLE001 - a missing library is a row's note, never a failure
            missing[name] = f"{type(e).__name__}: {e}".splitlines()[0][:160]
    return found, missing


def versions(libraries: dict) -> str:
    return ", ".join(f"{name} {module.__version__}" for name, module in libraries.items()
                     if hasattr(module, "__version__"))


# ---------------------------------------------------------------------------------------------------
# One row

class Runner:
    """What every row of a run shares: the kernels on both backends, the libraries, the timer."""

    def __init__(self, args) -> None:
        import rs2gpu

        self.args = args
        self.small = args.small
        self.libraries, self.missing = import_libraries(args.small)
        self.reference, self.unchecked = None, ""
        try:
            self.reference = rs2gpu.load(CRATE, backend="cpu")
        except Exception as e:  # noqa: BLE001 - on a GPU machine without rustc or the prepared cache
            if args.small:
                raise
            self.unchecked = (f"unchecked: the cpu backend did not load ({type(e).__name__}: {e}; "
                              "bench/gpu_prepare.sh builds it)").replace("\n", " ")[:300]
            log(self.unchecked)
        if self.small:
            self.kernels, self.cp, self.timer, self.stream = self.reference, None, None, None
            return
        import cupy as cp

        self.cp = cp
        self.kernels = rs2gpu.load(CRATE, backend="cuda")
        from bench import timing

        # cupy's calls and rs2gpu's go to cupy's current stream: this one, while `main` runs the rows
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.timer = timing.Timer(cp, self.stream, "sm_" + cp.cuda.Device(0).compute_capability)
        torch = self.libraries.get("torch")
        self.torch_stream = torch.cuda.ExternalStream(self.stream.ptr) if torch is not None else None

    # -- arrays and calls --------------------------------------------------------------------------

    def device(self, host: dict) -> dict:
        if self.small:
            return {n: v.copy() if isinstance(v, np.ndarray) else v for n, v in host.items()}
        return {n: self.cp.array(v) if isinstance(v, np.ndarray) else v for n, v in host.items()}

    def to_host(self, array) -> np.ndarray:
        """A host copy (later calls write the array again)."""
        if hasattr(array, "get"):
            return array.get()
        if hasattr(array, "detach"):
            return array.detach().cpu().numpy()
        return np.array(array)

    def rs2gpu_call(self, case: Case, arrays: dict, d: dict):
        kernel = kernel_call(self.kernels, case, arrays, d, ("idx",) if "verified_idx" in case.tags else ())
        if not case.before_call:
            return kernel
        zeroed = arrays[case.before_call]

        def call():
            zeroed.fill(0)   # a fresh histogram each call, as the libraries' calls make
            return kernel()
        return call

    def alternative_call(self, alternative, arrays: dict, d: dict):
        lib = self.libraries[alternative.library]
        if alternative.library not in ON_TORCH:
            return alternative.make(lib, arrays, d)
        torch = self.libraries["torch"]
        tensors = {n: torch.from_dlpack(_signed(v)) if hasattr(v, "__dlpack__") else v for n, v in arrays.items()}
        call = alternative.make(lib, tensors, d)
        stream = self.torch_stream

        def on_our_stream():
            with torch.cuda.stream(stream):
                return call()
        return on_our_stream

    # -- timing ------------------------------------------------------------------------------------

    def sync(self) -> None:
        if self.stream is not None:
            self.stream.synchronize()

    def time_in_turn(self, calls: dict) -> tuple[dict, int]:
        """Median µs per call of each side, the sides taking their reps in turn after one warm-up each."""
        estimate = {}
        for name, call in calls.items():
            call()
            estimate[name] = self.once(call)
        slowest = max(estimate.values())
        reps = max(3, min(self.args.reps, int(self.args.row_seconds * 1e6 / len(calls) / (slowest + 300.0))))
        times = {name: [] for name in calls}
        for _ in range(reps):
            for name, call in calls.items():
                times[name].append(self.timer.events(call, 1)[0] if self.timer else self.once(call))
        return {name: statistics.median(values) for name, values in times.items()}, reps

    def once(self, call) -> float:
        if self.timer is not None:
            return self.timer.once(call)
        started = time.perf_counter()
        call()
        return (time.perf_counter() - started) * 1e6

    # -- the row -----------------------------------------------------------------------------------

    def row(self, case: Case, size: Size, seed: int) -> Row:
        d = size.dims
        moved, flops = case.work(d)
        row = Row(case.name, size.label, size.elements, bytes=moved, flops=flops, flops_rate=case.flops_rate)
        host = case.make(np.random.default_rng(seed), d)
        arrays = self.device(host)
        ours = self.rs2gpu_call(case, arrays, d)
        result = self.to_host(ours())
        # rs2gpu against the cpu backend (rustc), block by block, then each alternative against rs2gpu
        checks = []
        for sub, sub_d, part in blocks(case, host, d) if not self.unchecked else ():
            if self.small:   # the cpu backend is the side under test: numpy's reference, computed independently
                want, against = case.reference(sub, sub_d), "numpy"
            else:
                want, against = self.to_host(kernel_call(self.reference, case, sub, sub_d)()), "rustc"
            bound = case.bound(sub, sub_d) if case.bound is not None else None
            exact = "exact_gpu" in case.tags and not self.small
            agree, how, share = compare(result[part], want, None if exact else bound)
            if not agree:
                row.status = f"MISMATCH: {case.kernel} against {against}: {how}"
                return row
            checks.append((sub, sub_d, part, share, bound))
        if checks:
            worst = max(c[3] for c in checks)
            row.check = "bitwise" if worst == 0 else f"bound (largest Δ {worst:.2g} of it)"
        else:   # the alternatives are still compared with rs2gpu's result, over the whole of it
            checks = [(host, d, slice(None), 0.0, case.bound(host, d) if case.bound is not None else None)]
        calls = {"rs2gpu": ours}
        for alternative in case.alternatives:
            if alternative.library not in self.libraries:
                continue
            name = alternative.name
            try:
                call = self.alternative_call(alternative, arrays, d)
                returned = call()
                self.sync()   # before the copy, which torch makes on its own stream
                theirs = self.to_host(returned).ravel()
                for sub, sub_d, part, _, bound in checks:
                    agree, how, _ = compare(theirs[part], result[part], _alt_bound(case, sub, sub_d, bound,
                                                                                   result[part]))
                    if not agree:
                        row.alternatives[name] = f"disagrees: {how}"
                        break
                else:
                    calls[name] = call
            except Exception as e:  # noqa: BLE001 - one library's failure is the row's note
                row.alternatives[name] = f"error: {type(e).__name__}: {e}".replace("\n", " ")[:200]
        for alternative in case.alternatives:
            if alternative.library not in self.libraries and alternative.library in self.missing \
                    and not self.small:
                row.alternatives.setdefault(alternative.name, f"absent: {alternative.library} does not import")
        medians, row.reps = self.time_in_turn(calls)
        row.rs2gpu_us = medians.pop("rs2gpu")
        row.alternatives.update(medians)
        if medians:
            row.best = min(medians, key=medians.get)
            row.best_us = medians[row.best]
        row.status = self.unchecked or "ok"
        return row

    def healthy(self) -> bool:
        return self.cp is None or timing.device_healthy(self.cp)

    def release(self) -> None:
        if self.cp is not None:
            self.sync()
            self.cp.get_default_memory_pool().free_all_blocks()
        torch = self.libraries.get("torch")
        if torch is not None:
            torch.cuda.empty_cache()


# ---------------------------------------------------------------------------------------------------
# The run

def select(names: str | None) -> list[Case]:
    if not names:
        return list(CASES)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in BY_NAME]
    if unknown:
        raise SystemExit(f"--cases: no such case {', '.join(unknown)}; cases: {', '.join(BY_NAME)}")
    return [BY_NAME[n] for n in wanted]


def machine(runner: Runner, args) -> dict:
    info = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": git_commit(),
            "command": "python3 bench/user_suite.py " + shlex.join(args.argv)}
    if runner.cp is not None:
        props = runner.cp.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        info["gpu"] = name.decode() if isinstance(name, bytes) else name
        runtime = runner.cp.cuda.runtime
        info["CUDA"] = f"driver {runtime.driverGetVersion()}, runtime {runtime.runtimeGetVersion()}"
    else:
        info["device"] = "none: --small runs the cpu backend (rustc) against numpy on the host clock"
    others = versions({n: m for n, m in runner.libraries.items() if n != "numpy"})
    info["software"] = f"Python {platform.python_version()}, numpy {np.__version__}" + (f", {others}" if others else "")
    return info


def sanitize(args, cases: list[Case]) -> int:
    """Each rs2gpu kernel once at its small size on device arrays, against numpy's reference: the run
    compute-sanitizer watches. Exits 1 if a call raised or disagreed."""
    import cupy as cp

    import rs2gpu

    kernels = rs2gpu.load(CRATE, backend="cuda")
    failures = 0
    for case in cases:
        d = case.small.dims
        host = case.make(np.random.default_rng(SEED), d)
        arrays = {n: cp.asarray(v) if isinstance(v, np.ndarray) else v for n, v in host.items()}
        verified = ("idx",) if "verified_idx" in case.tags else ()
        try:
            result = kernel_call(kernels, case, arrays, d, verified)()
            kernels.synchronize()
            agree, how, _ = compare(result.get(), case.reference(host, d),
                                 case.bound(host, d) if case.bound is not None else None)
            status = how if agree else f"FAILED: {how}"
            failures += not agree
        except Exception as e:  # noqa: BLE001 - report and go on: the sanitizer's summary is what this is for
            failures += 1
            status = f"FAILED: {type(e).__name__}: {e}"
        print(f"{case.name:<26} {status}", flush=True)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="results folder (default bench/results; with --small or --quick build/user-suite-small "
                             "or build/user-suite-quick)")
    parser.add_argument("--cases", default=None, help="comma list of case names (default: all)")
    parser.add_argument("--small", action="store_true",
                        help="tiny sizes on the cpu backend against numpy: no GPU, no history rows")
    parser.add_argument("--quick", action="store_true",
                        help="the GPU path at the small sizes (a smoke run): no history rows")
    parser.add_argument("--sanitize", action="store_true",
                        help="run each kernel once at its small size on the GPU, for compute-sanitizer")
    parser.add_argument("--budget-s", type=float, default=400.0,
                        help="start no new row after this many seconds (default 400)")
    parser.add_argument("--row-seconds", type=float, default=0.6,
                        help="time a row's reps may take, all sides together (default 0.6)")
    parser.add_argument("--reps", type=int, default=30, help="most reps per side (default 30; at least 3)")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    cases = select(args.cases)
    if args.sanitize:
        return sanitize(args, cases)
    out = args.out or ROOT / ("build/user-suite-small" if args.small else "build/user-suite-quick" if args.quick
                              else "bench/results")
    # size by size, every case at one size before any at the next: a run cut short loses the largest sizes
    pairs = [(case, size) for index in range(3) for case in cases
             for size in ((case.small,) if args.small or args.quick else case.sizes)[index:index + 1]]
    try:
        runner = Runner(args)
    except Exception as e:  # noqa: BLE001 - still leave a table that says why nothing ran
        log(traceback.format_exc(limit=6))
        reason = f"error: the suite's setup failed: {type(e).__name__}: {e}".replace("\n", " ")[:300]
        info = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": git_commit()}
        write_outputs(out, [Row(c.name, s.label, s.elements, status=reason) for c, s in pairs], info, cases, {},
                      history=False)
        return 1
    info = machine(runner, args)
    log(f"user suite: {len(pairs)} rows, {'--small (cpu backend, numpy)' if args.small else info.get('gpu')}; "
        f"setup {time.perf_counter() - started:.1f} s; absent: "
        + (", ".join(f"{n} ({why})" for n, why in runner.missing.items()) or "nothing"))
    rows: list[Row] = []
    with runner.stream if runner.stream is not None else contextlib.nullcontext():
        run_rows(runner, args, pairs, rows, info, cases, out, started)
    log(f"wrote {out / 'user-suite.md'} and user-suite.json" + ("" if args.small or args.quick else ", history.csv"))
    for line in goals(rows):
        log(line)
    return 0


def run_rows(runner: Runner, args, pairs: list, rows: list[Row], info: dict, cases: list[Case], out: Path,
             started: float) -> None:
    """Each row in turn, the outputs written after every one."""
    broken = ""
    for index, (case, size) in enumerate(pairs):
        elapsed = time.perf_counter() - started
        if elapsed > args.budget_s:
            rows.append(Row(case.name, size.label, size.elements,
                            status=f"skipped: the run's budget ({args.budget_s:.0f} s) was spent"))
        elif broken:
            rows.append(Row(case.name, size.label, size.elements,
                            status=f"skipped: the CUDA context failed in {broken}"))
        else:
            t_row = time.perf_counter()
            try:
                row = runner.row(case, size, SEED + index)
            except Exception as e:  # noqa: BLE001 - one case's failure must not stop the others
                row = Row(case.name, size.label, size.elements,
                          status=f"error: {type(e).__name__}: {e}".replace("\n", " ")[:400])
                log(traceback.format_exc(limit=4))
            finally:
                runner.release()
            rows.append(row)
            if row.status.startswith("error") and not runner.healthy():
                broken = f"{case.name} {size.label}"
            ratio = f"{row.ratio:6.2f}" if row.ratio else "     –"
            log(f"[{elapsed:6.1f} s] {case.name:<24} {size.label:>20}  rs2gpu {micros(row.rs2gpu_us):>12} µs  "
                f"{row.best or '-':>14} {micros(row.best_us):>12} µs  ratio {ratio}  "
                f"({time.perf_counter() - t_row:4.1f} s)  {row.check if row.status == 'ok' else row.status[:120]}")
        info["wall time"] = f"{time.perf_counter() - started:.0f} s"
        write_outputs(out, rows, info, cases, runner.missing, history=not (args.small or args.quick))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
