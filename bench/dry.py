"""The dry run: everything the benchmark does except touching a GPU.

Translation and NVRTC compiles of both sides with their register counts, the table's data at a small size,
the hand-written kernels' arguments, the generated kernels' arguments bound by name, the Rust kernels run by
rs2gpu's CPU backend (rustc), and the hand-written kernels run thread by thread on the CPU (bench.emulate)
and compared with them as the GPU run compares the two sides.
"""
from __future__ import annotations

import platform
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bench import emulate, harness, report
from bench.build import (BASELINES, compile_baselines, covered_symbol, gen_status, git_commit, log, prepare_corpus,
                         registers, rs2gpu_version)
from bench.cubin import kernel_resources
from bench.kernels import Kernel, bytes_per_rep, target_size
from bench.report import Row
from rs2gpu.runtime.options import DEFAULT_ARCH

DRY_MAX = 3000   # the dry run's largest target size (the CPU runs the hand-written kernels thread by thread)


def dry_run(args, pairs, workdir: Path) -> tuple[list[Row], dict, list]:
    import numpy as np

    arch = DEFAULT_ARCH["cuda"]
    started = time.perf_counter()
    corpus, corpus_error = prepare_corpus(workdir, arch)
    log(f"corpus: {time.perf_counter() - started:.1f} s" + (f" ({corpus_error})" if corpus_error else ""))
    cubins, errors = compile_baselines(arch)
    for name, error in errors.items():
        log(f"baseline {name}.cu does not compile: {error}")
    resources = {name: kernel_resources(binary) for name, binary in cubins.items()}
    from rs2gpu.runtime.nvrtc import cubin_symbols

    symbols = {name: set(cubin_symbols(binary)) for name, binary in cubins.items()}
    cpu = None
    if args.cpu and corpus is not None:
        try:
            import rs2gpu

            t = time.perf_counter()
            cpu = rs2gpu.load(corpus.root, backend="cpu")
            log(f"cpu backend: the crate built with rustc in {time.perf_counter() - t:.1f} s")
        except Exception as e:  # noqa: BLE001
            log(f"cpu backend unavailable ({type(e).__name__}: {str(e).splitlines()[0][:200]}); binding only")
    emulated = {}
    if cpu is not None:
        for path in sorted(BASELINES.glob("*.cu")):
            try:
                emulated[path.stem] = emulate.Library(path, workdir)
            except Exception as e:  # noqa: BLE001
                log(f"baseline {path.name} cannot run on the CPU: {str(e).splitlines()[0]}")
    rows = []
    for index, (k, label, factor) in enumerate(pairs):
        target, used = target_size(k, factor)
        d = k.dims(target)
        row = Row(k.name, k.group, label, d["size"], used, k.rust, note=k.note, bytes_per_rep=bytes_per_rep(k, d),
                  flops_per_rep=k.flops(d))
        report.attach_anchor(row)
        status = gen_status(k, corpus, corpus_error)
        try:
            missing = [lp.symbol for lp in k.launches if lp.symbol not in symbols.get(k.source, set())]
            if missing:
                raise harness.BindError(f"baseline {k.source}.cu lacks {', '.join(missing)}")
            row.regs_hand, row.frame_hand = registers(resources[k.source], [lp.symbol for lp in k.launches])
            small = k.dims(max(64, min(int(target * args.dry_scale), DRY_MAX)))
            sides = harness.prepare(k, small, np, seed=index)
            harness.hand_launches(k, sides.hand, small)   # every hand argument builds
            checks = ["hand arguments build"]
            if status == "ok":
                from bench import corpus as corpus_module

                entry = corpus.kernels[k.rust]
                binary = corpus_module.generated_binary(corpus, k.rust, arch)
                entry_points = [covered_symbol(lp, bool(k.verified_lists)) for lp in entry.launches]
                row.regs_gen, row.frame_gen = registers(kernel_resources(binary), entry_points)
                call = harness.generated_caller(k, entry, sides.gen, small, getattr(cpu, k.rust) if cpu else None)
                checks.append("generated arguments bind")
                if cpu is not None:
                    gen_out = harness.gen_results(k, sides.gen, call())
                    checks.append("Rust ran on the CPU backend")
                    library = emulated.get(k.source)
                    if library is not None:
                        hand_out = emulated_hand(k, library, sides, small)
                        agree, how = harness.compare(k, gen_out, hand_out, sides.hand, small)
                        unwritten = harness.unwritten_check(k, gen_out, small, "generated") or \
                            harness.unwritten_check(k, hand_out, small, "hand-written")
                        if not agree or unwritten:
                            raise harness.BindError(f"MISMATCH on the CPU (hand-written kernel run thread by thread "
                                                    f"against the Rust): {how if not agree else unwritten}")
                        checks.append(f"hand-written kernel on the CPU agrees: {how}")
            library = emulated.get(k.source)
            reference = k.reference or k.cupy
            if status != "ok" and reference is not None and library is not None:
                hand_out = emulated_hand(k, library, sides, small)
                agree, how = harness.compare(k, reference(sides.hand, small), hand_out, sides.hand, small)
                if not agree:
                    raise harness.BindError(f"MISMATCH on the CPU (hand-written kernel against numpy): {how}")
                checks.append(f"hand-written kernel on the CPU agrees with numpy: {how}")
            row.check = ", ".join(checks)
            row.status = "dry run" if status == "ok" else status
        except Exception as e:  # noqa: BLE001
            row.status = f"error: {type(e).__name__}: {e}".replace("\n", " ")[:400]
        rows.append(row)
        log(f"{k.name:<22} {label:>7} size {row.size:>11,}  regs {row.regs_hand or '–'}/{row.regs_gen or '–'}  "
            f"{row.check if row.status == 'dry run' else row.status[:60] + '...; ' + row.check}")
    info = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "gpu": "none (dry run)",
            "command": "python3 bench/run.py " + shlex.join(sys.argv[1:]),
            "software": f"Python {platform.python_version()}, numpy {np.__version__}, rs2gpu {rs2gpu_version()} "
                        f"({git_commit()})"}
    return rows, info, {"copy": None, "transfers": []}


def emulated_hand(k: Kernel, library, sides, d: dict) -> dict:
    """The hand-written side's results with its kernels run on the CPU, thread after thread."""
    if k.hand_setup is not None:
        k.hand_setup(library, sides.hand)
    if k.host_result is not None:
        k.host_result.before(sides.hand, d)
    for symbol, grid, block, args, _ in harness.hand_launches(k, sides.hand, d):
        library.launch(symbol, grid, block, args)
    finished = k.host_result.finish(sides.hand, d) if k.host_result is not None else None
    return harness.hand_results(k, sides.hand, finished)
