"""RAJAPerf kernels on an NVIDIA GPU: rs2gpu's generated CUDA against hand-written CUDA and the copy bandwidth.

    python3 bench/run.py --out bench/results          # every kernel, at RAJAPerf's default size and 100x
    python3 bench/run.py --quick                      # a few kernels, default size only
    python3 bench/run.py --kernels TRIAD,FIR --sizes default
    python3 bench/run.py --dry-run                    # everything that needs no GPU (translation, compiles,
                                                      # registers, argument binding; the Rust side on the CPU)

For each kernel and size: the generated kernel (`k.<name>(...)` on cupy arrays, so no transfers) and the
hand-written baseline (bench/baselines, compiled by NVRTC with the same flags) run on the same random
inputs and their results are compared first (bitwise, or within a stated bound; a row that disagrees says
MISMATCH and is not timed). Then each side is timed with CUDA events around one launch (cold L2, median)
and RAJAPerf's way (back-to-back launches, host clock / count), with cupy's own routine where one exists.
Also measured: the device copy bandwidth (the ceiling), and the transfers of a `k.triad` call on numpy
arrays against pinned and pageable cudaMemcpy. Writes results.md, results.csv, results.json and ratios.png
under --out, appends the rows to --out's history.csv under the measured commit (replacing the rows of that
commit, kernel and size a run before wrote there; a dry run appends nothing) and prints the table last.
Needs cupy and rs2gpu (pip install -e .).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)   # bench/'s modules are imported as `bench.*`, never as top-level names
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # appended: an installed rs2gpu takes precedence over the source tree

from bench import harness, report, timing  # noqa: E402
from bench.build import (covered_symbol, compile_baselines, gen_status, git_commit, log, prepare_corpus,  # noqa: E402
                         registers, rs2gpu_version)
from bench.cubin import kernel_resources  # noqa: E402
from bench.data import address  # noqa: E402
from bench.dry import dry_run  # noqa: E402
from bench.kernels import KERNELS, NOT_IN_SUITE, Kernel, bytes_per_rep, target_size  # noqa: E402
from bench.report import Row  # noqa: E402

QUICK = ("TRIAD", "DOT", "DAXPY", "EOS", "HYDRO_2D", "FIR", "LTIMES", "ENERGY", "VOL3D", "REDUCE_STRUCT")
STICKY = ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "unusable", "illegal", "ASSERT", "misaligned")


def parse_sizes(text: str) -> list[tuple[str, float]]:
    sizes = []
    for token in (t.strip() for t in text.split(",") if t.strip()):
        if token == "default":
            sizes.append(("default", 1.0))
        elif token.endswith("x"):
            sizes.append((token, float(token[:-1])))
        else:
            raise SystemExit(f"--sizes: `{token}` is neither `default` nor a factor like `100x`")
    return sizes


def select(names: str | None, quick: bool) -> list[Kernel]:
    if names:
        wanted = [n.strip().upper() for n in names.split(",") if n.strip()]
        unknown = sorted(set(wanted) - {k.name for k in KERNELS})
        if unknown:
            raise SystemExit(f"--kernels: no such kernel {', '.join(unknown)}")
        return [k for k in KERNELS if k.name in wanted]
    return [k for k in KERNELS if k.name in QUICK] if quick else list(KERNELS)


# ---------------------------------------------------------------------------------------------------
# The GPU run

def machine_info(cp, args, copy_bw: float | None) -> dict:
    info = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": "python3 bench/run.py " + shlex.join(sys.argv[1:])}
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            name, driver, memory, clock = (s.strip() for s in out.stdout.splitlines()[0].split(","))
            info.update(gpu=name, driver=driver, memory=memory, max_sm_clock=clock)
    except Exception:  # noqa: BLE001 - nvidia-smi is optional
        pass
    props = cp.cuda.runtime.getDeviceProperties(0)
    info.setdefault("gpu", props["name"].decode() if isinstance(props["name"], bytes) else props["name"])
    info.setdefault("driver", f"CUDA driver API {cp.cuda.runtime.driverGetVersion()}")
    info["L2"] = f"{props.get('l2CacheSize', 0) / 2**20:.0f} MiB, {props.get('multiProcessorCount', '?')} SMs"
    info["software"] = (f"CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, cupy {cp.__version__}, "
                        f"Python {platform.python_version()}, rs2gpu {rs2gpu_version()} ({git_commit()})")
    if copy_bw:
        info["device copy bandwidth"] = (f"{copy_bw / 1e12:.2f} TB/s ({args.copy_mib} MiB device-to-device copy, "
                                         "bytes read + written)")
    return info


class GpuContext:
    """Everything shared by the rows of a GPU run."""

    def __init__(self, args, cp, arch: str, workdir: Path) -> None:
        import rs2gpu

        self.args, self.cp, self.arch = args, cp, arch
        self.corpus, self.corpus_error = prepare_corpus(workdir, arch)
        self.module, self.module_error = None, None
        if self.corpus is not None and self.corpus.kernels:
            try:
                self.module = rs2gpu.load(self.corpus.root, backend="cuda")
            except Exception as e:  # noqa: BLE001
                self.module_error = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                log(f"rs2gpu.load failed: {self.module_error}")
        backend = getattr(self.module, "device_backend", None) if self.module is not None else None
        self.stream = getattr(backend, "stream", None) or cp.cuda.Stream(non_blocking=True)
        self.cubins, self.baseline_errors = compile_baselines(arch)
        for name, error in self.baseline_errors.items():
            log(f"baseline {name}.cu does not compile: {error}")
        cubin_dir = Path(tempfile.mkdtemp(prefix="bench-cubins-", dir=workdir))
        self.modules = {name: timing.load_cubin(cp, binary, cubin_dir, name) for name, binary in self.cubins.items()}
        self.resources = {name: kernel_resources(binary) for name, binary in self.cubins.items()}
        self.timer = timing.Timer(cp, self.stream, arch)

    def functions(self, k: Kernel) -> dict:
        module = self.modules[k.source]
        return {lp.symbol: module.get_function(lp.symbol) for lp in k.launches}

    def healthy(self) -> bool:
        return timing.device_healthy(self.cp)


def run_row(ctx: GpuContext, k: Kernel, label: str, factor: float, seed: int) -> Row:
    cp, args = ctx.cp, ctx.args
    cp.get_default_memory_pool().free_all_blocks()   # what the previous row's calls still held
    target, used = target_size(k, factor)
    d = k.dims(target)
    row = Row(k.name, k.group, label, d["size"], used, k.rust, note=k.note, bytes_per_rep=bytes_per_rep(k, d),
              flops_per_rep=k.flops(d))
    report.attach_anchor(row)
    status = gen_status(k, ctx.corpus, ctx.corpus_error)
    if status == "ok" and ctx.module is None:
        status = f"error: rs2gpu.load failed: {ctx.module_error}"
    entry = ctx.corpus.kernels.get(k.rust) if ctx.corpus is not None else None
    gen_fn = getattr(ctx.module, k.rust, None) if status == "ok" else None
    if gen_fn is not None and not args.graphs and hasattr(gen_fn, "graphs"):  # the cpu backend has none
        gen_fn.graphs = False
    try:
        if k.source in ctx.resources:
            row.regs_hand, row.frame_hand = registers(ctx.resources[k.source], [lp.symbol for lp in k.launches])
        if gen_fn is not None:
            verified = args.verified_lists and bool(k.verified_lists)
            row.regs_gen, row.frame_gen = registers(kernel_resources(gen_fn.binary),
                                                    [covered_symbol(launch, verified) for launch in entry.launches])
    except Exception as e:  # noqa: BLE001 - registers are informative only
        row.extra["registers"] = f"{type(e).__name__}: {e}"
    if k.source not in ctx.modules:
        row.status = f"error: baseline {k.source}.cu does not compile"
        return row
    sides = None
    try:
        with ctx.stream:
            sides = harness.prepare(k, d, cp, seed)
            ctx.stream.synchronize()
            if k.hand_setup is not None:
                k.hand_setup(ctx.modules[k.source], sides.hand)
            functions = ctx.functions(k)
            try:   # the driver's register counts, to cross-check the ones read from the cubin
                row.extra["regs_hand_driver"] = ",".join(str(functions[lp.symbol].num_regs) for lp in k.launches)
            except Exception:  # noqa: BLE001
                pass
            hand_call = harness.hand_caller(k, sides.hand, d, functions, ctx.stream)
            gen_call = harness.generated_caller(k, entry, sides.gen, d, gen_fn, args.verified_lists) \
                if gen_fn is not None else None
            hand_out = harness.hand_results(k, sides.hand, hand_call())
            if gen_call is not None:
                gen_out = harness.gen_results(k, sides.gen, gen_call())
                ctx.stream.synchronize()
                agree, how = harness.compare(k, gen_out, hand_out, sides.hand, d)
                unwritten = harness.unwritten_check(k, gen_out, d, "generated") or \
                    harness.unwritten_check(k, hand_out, d, "hand-written")
                if not agree or unwritten:
                    row.status = f"MISMATCH: {how if not agree else unwritten}"
                    return row
                row.check = how
                ran = list(dict.fromkeys(getattr(gen_fn, "last_variants", ())))
                if ran:  # the registers of the entry points the call ran, where the runtime says which
                    row.regs_gen, row.frame_gen = registers(kernel_resources(gen_fn.binary), ran)
            cupy_call = (lambda hand=sides.hand: k.cupy(hand, d)) if k.cupy is not None else None
            reference = k.reference or k.cupy
            if reference is not None:
                agree, how = harness.compare(k, reference(sides.hand, d), hand_out, sides.hand, d)
                row.extra["cupy_check"] = how if agree else f"cupy disagrees with the hand-written kernel: {how}"
                if gen_call is None:
                    if not agree:
                        row.status = f"MISMATCH: {row.extra['cupy_check']}"
                        return row
                    row.check = "hand vs cupy: " + how
            calls = {side: call for side, call in (("hand", hand_call), ("gen", gen_call), ("cupy", cupy_call))
                     if call is not None}
            plans = {}
            for side, call in calls.items():
                call()
                plans[side] = timing.plan_reps(ctx.timer.once(call), k.reps, args.quick)
            events = timing.events_in_turn(ctx.timer, calls, {side: plan[0] for side, plan in plans.items()})
            reps = timing.back_to_back_in_turn(ctx.timer, calls, {side: plan[1] for side, plan in plans.items()},
                                               {side: plan[2] for side, plan in plans.items()})
            for side in calls:
                setattr(row, f"{side}_us", timing.median(events[side]))
                setattr(row, f"{side}_rep_us", reps[side])
            if getattr(gen_fn, "last_graph", False):
                row.extra["graph"] = "the repeat calls replayed a graph of the launches"
            row.event_reps = max(plan[0] for plan in plans.values())
            row.rep_count = max(plan[1] for plan in plans.values())
        row.status = status
    except Exception as e:  # noqa: BLE001 - one kernel's failure must not stop the others
        text = f"{type(e).__name__}: {e}".replace("\n", " ")
        row.status = f"error: {text[:400]}"
        row.extra["traceback"] = traceback.format_exc(limit=6)
    finally:
        del sides
        try:
            ctx.stream.synchronize()
            cp.get_default_memory_pool().free_all_blocks()
        except Exception:  # noqa: BLE001 - reported by the next row's health check
            pass
    return row


def measure_transfers(ctx: GpuContext, n: int = 1 << 25) -> list[dict]:
    """`k.triad` on numpy arrays (two uploads, one download) against pinned and pageable cudaMemcpy."""
    import numpy as np

    cp = ctx.cp
    out = []
    host_b = np.random.default_rng(1).uniform(0.5, 1.5, n)
    host_c = np.random.default_rng(2).uniform(0.5, 1.5, n)
    host_a = np.empty(n)
    dev = cp.empty(n)
    nbytes = 8 * n

    def best(fn, reps=5):
        fn()
        times = []
        for _ in range(reps):
            started = time.perf_counter()
            fn()
            times.append(time.perf_counter() - started)
        return timing.median(times)

    if ctx.module is not None and "triad" in ctx.module.kernels:
        triad = ctx.module.triad
        triad(host_a, host_b, host_c, 2.0)
        if host_a.tobytes() != (host_b + 2.0 * host_c).tobytes():
            out.append({"what": "rs2gpu triad, numpy arrays", "error": "computed a wrong result"})
        else:
            seconds = best(lambda: triad(host_a, host_b, host_c, 2.0))
            detail = ", ".join(f"{t.param} {t.direction} {t.nbytes / t.seconds / 1e9:.1f} GB/s"
                               for t in getattr(triad, "last_transfers", []) if t.seconds > 0)
            out.append({"what": "rs2gpu `k.triad` on numpy arrays (2 uploads + 1 download + kernel)",
                        "bytes": 3 * nbytes, "ms": seconds * 1e3, "GB/s": 3 * nbytes / seconds / 1e9,
                        "detail": detail})
    pinned = cp.cuda.alloc_pinned_memory(nbytes)
    pinned_view = np.frombuffer(pinned, dtype=np.float64, count=n)
    pinned_view[:] = host_b
    rt = cp.cuda.runtime
    copies = [("pinned cudaMemcpy H2D", lambda: rt.memcpy(address(dev), pinned.ptr, nbytes, rt.memcpyHostToDevice)),
              ("pinned cudaMemcpy D2H", lambda: rt.memcpy(pinned.ptr, address(dev), nbytes, rt.memcpyDeviceToHost)),
              ("pageable cudaMemcpy H2D", lambda: rt.memcpy(address(dev), host_b.ctypes.data, nbytes,
                                                            rt.memcpyHostToDevice)),
              ("pageable cudaMemcpy D2H", lambda: rt.memcpy(host_a.ctypes.data, address(dev), nbytes,
                                                            rt.memcpyDeviceToHost))]
    for what, fn in copies:
        seconds = best(fn)
        out.append({"what": what, "bytes": nbytes, "ms": seconds * 1e3, "GB/s": nbytes / seconds / 1e9})
    return out


def gpu_run(args, pairs: list[tuple[Kernel, str, float]], workdir: Path) -> tuple[list[Row], dict, list]:
    import cupy as cp

    device = cp.cuda.Device(0)
    device.use()
    arch = "sm_" + device.compute_capability
    started = time.perf_counter()
    try:
        ctx = GpuContext(args, cp, arch, workdir)
    except Exception as e:  # noqa: BLE001 - still write what can be written
        log(f"setup failed: {traceback.format_exc()}")
        reason = f"error: the benchmark's setup failed: {type(e).__name__}: {e}".replace("\n", " ")[:400]
        rows = [Row(k.name, k.group, label, k.dims(target_size(k, factor)[0])["size"], rust=k.rust, status=reason)
                for k, label, factor in pairs]
        return rows, {"date": datetime.now(timezone.utc).isoformat(timespec="seconds")}, {"copy": None, "transfers": []}
    log(f"setup: {time.perf_counter() - started:.1f} s (corpus, rs2gpu.load, baselines); GPU arch {arch}")
    extras = {"copy": None, "transfers": []}
    if not args.resume:
        try:
            extras["copy"] = timing.copy_bandwidth(cp, ctx.stream, args.copy_mib << 20)
            log(f"device copy bandwidth: {extras['copy'] / 1e12:.2f} TB/s")
        except Exception as e:  # noqa: BLE001
            log(f"device copy bandwidth: failed ({e})")
        try:
            extras["transfers"] = measure_transfers(ctx, args.transfer_elements)
            for t in extras["transfers"]:
                log(f"transfer: {t['what']}: " + (t.get("error") or f"{t['GB/s']:.1f} GB/s"))
        except Exception as e:  # noqa: BLE001
            extras["transfers"] = [{"what": "transfers", "error": f"{type(e).__name__}: {e}"}]
            log(f"transfers: failed ({e})")
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()
    info = machine_info(cp, args, extras["copy"])
    rows: list[Row] = []
    for index, (k, label, factor) in enumerate(pairs):
        elapsed = time.perf_counter() - args.t0
        if elapsed > args.budget_s:
            row = Row(k.name, k.group, label, k.dims(target_size(k, factor)[0])["size"], rust=k.rust,
                      status=f"skipped: the run's time budget ({args.budget_s:.0f} s) was spent")
            rows.append(row)
            continue
        t_row = time.perf_counter()
        row = run_row(ctx, k, label, factor, seed=1000 * index + 7)
        rows.append(row)
        log(progress_line(row, time.perf_counter() - t_row, elapsed))
        if row.status.startswith("error") and any(mark in row.status for mark in STICKY) or not ctx.healthy():
            rest = pairs[index + 1:]
            log(f"the CUDA context is unusable after {k.name}; running the {len(rest)} remaining rows in a new process")
            rows += run_child(args, rest, workdir)
            break
    return rows, info, extras


def progress_line(row: Row, seconds: float, elapsed: float) -> str:
    def us(v):
        return f"{v:9.1f}" if v is not None else "        –"
    ratio = f"{row.ratio:6.2f}" if row.ratio else "     –"
    status = row.status if row.status != "ok" else (row.check or "ok")
    return (f"[{elapsed:6.1f} s] {row.kernel:<22} {row.size_label:>7}  hand {us(row.hand_us)} µs  "
            f"gen {us(row.gen_us)} µs"
            f"  ratio {ratio}  rep {us(row.hand_rep_us)}/{us(row.gen_rep_us)} µs  ({seconds:4.1f} s)  {status[:90]}")


def run_child(args, pairs, workdir: Path) -> list[Row]:
    """Run the given rows in a fresh process (after a fault that poisoned this process's CUDA context)."""
    if not pairs:
        return []
    spec = ",".join(f"{k.name}@{label}@{factor}" for k, label, factor in pairs)
    out_json = workdir / f"child-{len(pairs)}.json"
    remaining = max(10.0, args.budget_s - (time.perf_counter() - args.t0))
    command = [sys.executable, str(Path(__file__).resolve()), "--resume", spec, "--resume-json", str(out_json),
               "--budget-s", str(remaining), "--out", str(args.out)] + (["--quick"] if args.quick else []) \
        + ([] if args.verified_lists else ["--plain-lists"]) + ([] if args.graphs else ["--no-graphs"])
    subprocess.run(command, check=False)
    if not out_json.exists():
        return [Row(k.name, k.group, label, 0, rust=k.rust, status="error: the child process wrote no results")
                for k, label, factor in pairs]
    return [Row(**r) for r in json.loads(out_json.read_text(encoding="utf-8"))]


def _have_cupy() -> bool:
    if "cupy" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("cupy") is not None
    except (ImportError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results",
                        help="results folder, whose history.csv gains the run's rows")
    parser.add_argument("--sizes", default=None, help="comma list of `default` and factors like `100x` "
                                                      "(default: default,100x; with --quick: default)")
    parser.add_argument("--kernels", default=None, help="comma list of RAJAPerf kernel names (default: all)")
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, fewer reps")
    parser.add_argument("--budget-s", type=float, default=480.0,
                        help="stop starting new rows after this many seconds (default 480)")
    parser.add_argument("--dry-run", action="store_true", help="do everything that needs no GPU")
    parser.add_argument("--dry-scale", type=float, default=1e-3, help="dry run: data size as a share of the real one")
    parser.add_argument("--no-cpu", dest="cpu", action="store_false", help="dry run: do not run the Rust on the CPU")
    parser.add_argument("--copy-mib", type=int, default=2048, help="size of the device copy that measures the ceiling")
    parser.add_argument("--transfer-elements", type=int, default=1 << 25, help="doubles per array in the transfer test")
    parser.add_argument("--plain-lists", dest="verified_lists", action="store_false",
                        help="pass the generated side's index lists as plain arrays, which the kernels check on "
                             "the device in every call (default: verified lists, rs2gpu.IndexList)")
    parser.add_argument("--no-graphs", dest="graphs", action="store_false",
                        help="launch the loops of a generated call one by one, never as a CUDA graph (default: "
                             "a repeat call of several launches replays a graph)")
    parser.add_argument("--resume", default=None, help=argparse.SUPPRESS)       # rows for a child process
    parser.add_argument("--resume-json", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.t0 = time.perf_counter()
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")   # µ, ≤ and Δ on a terminal that cannot show them
    sizes = parse_sizes(args.sizes or ("default" if args.quick else "default,100x"))
    if args.resume:
        by_name = {k.name: k for k in KERNELS}
        pairs = [(by_name[name], label, float(factor)) for name, label, factor in
                 (item.split("@") for item in args.resume.split(","))]
    else:
        kernels = select(args.kernels, args.quick)
        pairs = [(k, label, factor) for label, factor in sizes for k in kernels]
    labels = list(dict.fromkeys(label for _, label, _ in pairs))
    log(f"bench: {len(pairs)} rows ({', '.join(labels)}), "
        f"{'dry run' if args.dry_run else 'GPU'}; command: python3 bench/run.py {shlex.join(sys.argv[1:])}")
    workdir = Path(tempfile.mkdtemp(prefix="rs2gpu-bench-"))
    if args.dry_run:
        rows, info, extras = dry_run(args, pairs, workdir)
    else:
        if not _have_cupy():
            log("bench/run.py needs cupy and an NVIDIA GPU (or use --dry-run)")
            return 2
        rows, info, extras = gpu_run(args, pairs, workdir)
    if args.resume_json:
        args.resume_json.write_text(json.dumps([asdict(r) for r in rows], default=str), encoding="utf-8")
        return 0
    info["wall time"] = f"{time.perf_counter() - args.t0:.0f} s"
    report.write_outputs(args.out, rows, info, extras, args.dry_run, NOT_IN_SUITE, commit=git_commit())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
