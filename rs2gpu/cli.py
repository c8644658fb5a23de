"""The `rs2gpu` command line.

Exit status: 0 success, 1 the Rust source has errors (diagnostics printed), 2 an internal error or a
problem with the command line or the file system. Output whose reader has gone ends the command by
SIGPIPE, as it ends other Unix tools.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

from rs2gpu import __version__, incremental, pipeline, support_crate_path
from rs2gpu.ir.abi import (BLOCK_SIZE, PRODUCT_STAGING, TENSOR_STAGING, TRANSPOSE_STAGING, EntryKind, EntryPoint, KernelABI, Launch,
                           ParamKind, to_json)
from rs2gpu.ir.codes import CODES, explain
from rs2gpu.ir.diagnostics import CompileFailed, render
from rs2gpu.runtime.options import DEFAULT_ARCH

EXIT_OK, EXIT_USER_ERROR, EXIT_INTERNAL = 0, 1, 2


class UsageError(Exception):
    """A problem with the command line or the input paths (not with the Rust source)."""


def _color(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return os.environ.get("CLICOLOR_FORCE") == "1" or (hasattr(stream, "isatty") and stream.isatty())


def _existing(path: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise UsageError(f"no such file or directory: {path}")
    if p.is_dir() and not any(p.rglob("*.rs")):
        raise UsageError(f"no .rs files under {path}")
    if p.is_file() and p.suffix != ".rs":
        raise UsageError(f"{path} is not a .rs file")
    return p


def _print_diagnostics(diagnostics, sources) -> None:
    color = _color(sys.stderr)
    for d in diagnostics:
        sys.stderr.write(render(d, sources, color) + "\n")


def _failure_summary(err: CompileFailed, what: str) -> None:
    _print_diagnostics(err.diagnostics, err.sources)
    errors = sum(1 for d in err.diagnostics if d.severity == "error")
    codes = sorted({d.code for d in err.diagnostics if d.severity == "error"})
    sys.stderr.write(f"error: could not {what} due to {errors} previous error{'s' if errors != 1 else ''}\n")
    if codes:
        sys.stderr.write(f"For more information about an error, try `rs2gpu explain {codes[0]}`.\n")


def _targets(value: str) -> tuple[str, ...]:
    return pipeline.ALL_TARGETS if value == "all" else (value,)


# ------------------------------------------------------------------ commands


def cmd_translate(args) -> int:
    path = _existing(args.path)
    out_dir = Path(args.output)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"output path {out_dir} exists and is not a directory")
    start = time.perf_counter()
    try:
        result = incremental.translate(path, _targets(args.target), use_cache=not args.no_cache)
    except CompileFailed as err:
        _failure_summary(err, f"translate `{path}`")
        return EXIT_USER_ERROR
    _print_diagnostics(result.warnings, result.sources)
    outputs = pipeline.write_files(result.files, out_dir)
    elapsed = time.perf_counter() - start
    if not args.quiet:
        kernels = result.kernels
        for name, (launches, files) in kernels.items():
            print(f"   Translated {name} ({launches} launch{'es' if launches != 1 else ''}) -> {', '.join(files)}")
        if outputs.removed:
            print(f"      Removed {', '.join(p.name for p in outputs.removed)}: written by an earlier translation, "
                  "not by this one")
        print(f"    Finished {len(kernels)} kernel{'s' if len(kernels) != 1 else ''} of `{result.crate}` "
              f"in {elapsed:.2f}s: {len(outputs.written)} files in {out_dir}")
    return EXIT_OK


def cmd_check(args) -> int:
    path = _existing(args.path)
    start = time.perf_counter()
    try:
        result = pipeline.check(path)
    except CompileFailed as err:
        _failure_summary(err, f"check `{path}`")
        return EXIT_USER_ERROR
    _print_diagnostics(result.warnings, result.crate.sources)
    n = len(result.checked.kernels)
    print(f"    Checked {n} kernel{'s' if n != 1 else ''} of `{result.crate.name}` in "
          f"{time.perf_counter() - start:.2f}s: no races, no aliasing writes")
    return EXIT_OK


def cmd_inspect(args) -> int:
    path = _existing(args.path)
    try:
        result = pipeline.translate(path, (args.target,))
    except CompileFailed as err:
        _failure_summary(err, f"translate `{path}`")
        return EXIT_USER_ERROR
    kernels = result.emitted.abi.kernels
    if args.kernel not in kernels:
        instances = sorted(k for k, e in kernels.items() if e.generic and e.generic.name == args.kernel)
        if instances:
            raise UsageError(f"`{args.kernel}` is generic: inspect one of its instantiations, "
                             f"{', '.join(instances)}")
        known = ", ".join(sorted(kernels)) or "none"
        raise UsageError(f"no kernel named `{args.kernel}` in {path} (kernels: {known})")
    entry = kernels[args.kernel]
    source = result.emitted.files[entry.files[args.target]]
    if args.json:
        print(json.dumps(to_json(entry), indent=2))
        return EXIT_OK
    from rs2gpu.highlight import highlight

    code = source if args.prelude else _without_prelude(source, args.target)
    print(highlight(code) if _color(sys.stdout) else code)
    print(_describe_abi(args.kernel, entry))
    return EXIT_OK


def _without_prelude(source: str, target: str) -> str:
    """A generated file with its vendor prelude, the same few hundred lines in every file of a target, left
    out: what remains is the kernel's own code, its header, structs, helpers and entry points."""
    from rs2gpu.emit import render_prelude
    from rs2gpu.emit.dialect import DIALECTS

    prelude = render_prelude(DIALECTS[target])
    lines = len(prelude.splitlines())
    return source.replace(prelude, f"// [the {DIALECTS[target].language} prelude, {lines} lines, is left out: "
                                    "`rs2gpu inspect --prelude` prints the whole file]", 1)


# What each kind of entry point is, and when the host runs it (see `ir.abi.EntryKind`).
ENTRY_KINDS = {
    EntryKind.PRIVATE: "each block updates a copy of the scatter target in shared memory; runs where the target "
                       "has at most {private.capacity} elements",
    EntryKind.PROVEN: "one thread per iteration without the index-list checks; runs where every list is a verified "
                      "list (rs2gpu.IndexList) whose values prove them, and a grid covers the loop",
    EntryKind.L2_ADDS: "its f64 `+=`/`-=` as atomic adds in the L2; runs where the loop's data "
                       "({l2_adds.bytes_per_iteration} B per iteration) fit in the L2",
    EntryKind.VECTOR: "{vector.width} iterations per thread with 16-byte accesses; runs where the slices' first lanes "
                      "are aligned",
    EntryKind.BLOCKS: "one block per iteration, its inner loops split over its threads; runs where a warp per "
                      "iteration would leave the GPU partly idle",
    EntryKind.WARPS: "one warp per iteration, its inner loops split over the lanes; runs on any grid",
    EntryKind.COLUMNS: "8 iterations per block, their inner loops split over its groups of 8 threads; runs where "
                       "the loop has fewer iterations than the GPU holds threads",
    EntryKind.TILES: "one thread per iteration; runs where the nest has at least {grid.fill} iterations per thread "
                     "the GPU holds and a grid covers it",
    EntryKind.COVERING: "one thread per iteration; runs where a grid covers the nest",
    EntryKind.GENERAL: "each thread strides over the iterations; runs otherwise",
    EntryKind.CHECKED: "the same loop checking its conditional accesses on the device; runs otherwise",
    EntryKind.VERIFY: "verifies the index lists the loop writes through; runs after the loop",
}


# What a covering entry point whose block shares its iterations does instead of one thread per iteration.
STAGINGS = {
    PRODUCT_STAGING: "a matrix product on register tiles, {tile[1]} x {tile[0]} iterations per thread "
                     "(rows x columns), each adding its terms in k order, the operands staged in shared memory "
                     "slice by slice of k",
    TENSOR_STAGING: "a product of half values on the tensor cores (CUDA, sm_80 and later; lane by lane "
                    "elsewhere), {tile[1]} x {tile[0]} iterations per thread, the f32 sums reassociated within "
                    "the reduction bound, the operands staged in shared memory slice by slice of k",
    TRANSPOSE_STAGING: "a transpose staged through shared memory, {tile[1]} iterations per thread, read by "
                       "rows and written by columns",
}


def _describe_entry(e: EntryPoint, launch: Launch) -> str:
    text = ENTRY_KINDS[e.kind].format(private=e.private, l2_adds=e.l2_adds, vector=e.vector, grid=e.grid)
    if e.kind == EntryKind.VECTOR and e.grid is not None:  # a nest's: the host tests no slice
        text = text.replace("where the slices' first lanes are aligned",
                            "where a grid covers its groups (each row tests its own alignment)")
    if e.kind == EntryKind.BLOCKS and e.split.fill == 0:  # its loops read the row in turn (emit.warps.split_kinds)
        text = text.replace("runs where a warp per iteration would leave the GPU partly idle", "runs on any grid")
    if launch.entry(EntryKind.CHECKED):  # only the checked entry point runs with a conditional access out of bounds
        found = "the host found every conditional access in bounds"
        if e.kind == EntryKind.GENERAL:
            text = text.replace("runs otherwise", f"runs where {found}")
        elif "runs on any grid" in text:
            text = text.replace("runs on any grid", f"runs where {found}")
        elif e.kind in (EntryKind.PROVEN, EntryKind.L2_ADDS, EntryKind.VECTOR, EntryKind.BLOCKS, EntryKind.COLUMNS,
                        EntryKind.TILES, EntryKind.COVERING):
            text = text.replace("; runs where ", f"; runs where {found} and ")
    grid = e.grid
    if grid is not None and grid.staging:
        text = text.replace("one thread per iteration", STAGINGS[grid.staging].format(tile=grid.tile))
    if grid is not None:
        text += f", blocks of {' x '.join(map(str, grid.block))}" if grid.block else ""
        text += f", after {grid.lead} idle thread{'s' if grid.lead > 1 else ''} (warps from multiples of 32)" \
            if grid.lead else ""
    checks = len(e.checks)
    return f"{e.symbol} ({e.kind.value}): {text}; {checks} device check{'s' if checks != 1 else ''}" \
        + (" (the call waits for them)" if e.records_panics else "")


def _describe_abi(name: str, entry: KernelABI) -> str:
    generic = entry.generic
    of = f", {generic.name}::<{', '.join(generic.type_args)}>" if generic else ""
    lines = [f"== {name} ({entry.source}{of}) ==", "",
             "Arguments (in launch order; a slice's length only in the launches that read it):"]
    lines.append(f"  {'parameter':<14}{'type':<16}{'transfer':<10}{'C++ arguments'}")
    for p in entry.params:
        parts = ", ".join(f"{a.name}: {a.size} B" for a in p.parts)
        lines.append(f"  {p.name:<14}{p.rust_type:<16}{p.transfer.value:<10}{parts}")
    lines += ["", "Transfer plan:"]
    for p in entry.params:
        lines.append(f"  {p.name}: {p.transfer.value} ({p.reason})")
    lines += ["", f"Launches (blocks of {BLOCK_SIZE} threads; the host runs the first entry point whose condition "
                  "holds):"]
    for index, launch in enumerate(entry.launches):
        red = ", ".join(f"{r.name} ({r.op})" for r in launch.reductions)
        scattered = ", ".join(f"{s.target} ({s.op})" for s in launch.scatters)
        dims = " x ".join(f"{d.index}: {d.index_type}" for d in launch.dims)
        uniforms = ", ".join(f"`{u.name}`" for u in launch.uniforms)
        lines.append(f"  launch {index}: loop at {launch.source}, over ({dims})"
                     f"{', reduces ' + red if red else ''}{', updates with atomics ' + scattered if scattered else ''}"
                     f"{', given ' + uniforms if uniforms else ''}")
        if any(p.kind == ParamKind.SLICE for p in entry.params):
            taken = ", ".join(f"`{n}`" for n in launch.lengths) or "none (its code reads none)"
            lines.append(f"    slice lengths it takes: {taken}")
        for check in launch.stride_checks:
            lines.append(f"    checked at launch: the strides of the write at {check.source} do not overlap")
        for check in launch.bounds:
            lines.append(f"    checked at launch: `{check.param}` at {check.source} stays in bounds")
        if launch.guarded_bounds:
            where = ", ".join(f"`{c.param}` at {c.source}" for c in launch.guarded_bounds)
            lines.append(f"    conditional accesses checked at launch: {where}")
        for lists in launch.index_lists:
            lines.append(f"    index list `{lists.list}` (writes `{lists.target}` at {lists.source}): its values "
                         f"must be distinct")
        for inner in launch.inner_loops:
            lines.append(f"    inner loop at {inner.source}: {inner.detail}")
        lines += [f"    {_describe_entry(e, launch)}" for e in launch.entry_points]
    if entry.schedule is not None:
        lines += ["", "Schedule (host loops run on the host; the data stays on the device):"]
        lines += _describe_schedule(entry.schedule, "  ")
    if entry.returns:
        lines.append(f"Returns: {entry.returns.type}")
    return "\n".join(lines)


def _describe_schedule(steps, indent: str) -> list[str]:
    lines = []
    for step in steps:
        if isinstance(step, int):
            lines.append(f"{indent}launch {step}")
            continue
        lines.append(f"{indent}for `{step.var}` ({step.type}) at {step.source}:")
        lines += _describe_schedule(step.body, indent + "  ")
    return lines


def cmd_compile(args) -> int:
    from rs2gpu import gpu_compile
    from rs2gpu.runtime.errors import ToolchainUnavailable

    path = _existing(args.path)
    targets = _targets(args.target)
    try:
        archs = gpu_compile.plan_archs(targets, args.arch)
        for target, target_archs in archs.items():
            for arch in (a for a in target_archs if a in (args.arch or ())):  # rs2gpu's defaults are known
                gpu_compile.check_arch(target, arch, args.hip_compiler)
    except ValueError as e:
        raise UsageError(str(e)) from e
    except ToolchainUnavailable as e:
        raise UsageError(f"cannot compile: {e}") from e
    start = time.perf_counter()
    try:
        result = pipeline.translate(path, targets)
    except CompileFailed as err:
        _failure_summary(err, f"compile `{path}`")
        return EXIT_USER_ERROR
    _print_diagnostics(result.warnings, result.crate.sources)
    crate_abi = result.emitted.abi
    unknown = [k for k in args.kernel or [] if k not in crate_abi.kernels]
    if unknown:
        known = ", ".join(sorted(crate_abi.kernels)) or "none"
        raise UsageError(f"no kernel named `{unknown[0]}` in {path} (kernels: {known})")
    jobs = gpu_compile.jobs_for(crate_abi, archs, args.kernel)
    try:
        results = gpu_compile.compile_all(jobs, result.emitted.files, args.hip_compiler, args.jobs)
    except ToolchainUnavailable as e:
        raise UsageError(f"cannot compile: {e}") from e
    failed = [r for r in results if not r.ok]
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
    else:
        for r in results:
            if r.ok:
                print(gpu_compile.describe_success(r, _color(sys.stdout)))
    for r in failed:
        sys.stderr.write(gpu_compile.describe_failure(r, result.crate.sources, _color(sys.stderr)) + "\n")
    if failed:
        sys.stderr.write(f"error: {len(failed)} of {len(results)} compile{'s' if len(results) != 1 else ''} failed\n")
        return EXIT_USER_ERROR
    if not args.json:
        kernels = len({j.kernel for j in jobs})
        print(f"    Finished {len(results)} compile{'s' if len(results) != 1 else ''} of {kernels} "
              f"kernel{'s' if kernels != 1 else ''} of `{result.crate.name}` in {time.perf_counter() - start:.2f}s")
    return EXIT_OK


def cmd_explain(args) -> int:
    text = explain(args.code)
    if text is None:
        raise UsageError(f"unknown error code `{args.code}`; known codes: {', '.join(sorted(CODES))}")
    print(text)
    return EXIT_OK


def cmd_support_crate(args) -> int:
    print(support_crate_path())
    return EXIT_OK


def cmd_cargo(args) -> int:
    from rs2gpu import cargo

    try:
        if args.cargo_command == "build-script":
            crate_dir, out_dir = cargo.build_script_paths(args.crate_dir, args.out_dir)
            return cargo.run_build_script(crate_dir, out_dir)
        crate_dir = Path(args.crate_dir)
        report = cargo.init_crate(crate_dir, args.force)
    except cargo.CargoSetupError as e:
        raise UsageError(str(e)) from e
    for message in report.messages:
        print(f"    {message}")
    for warning in report.warnings:
        sys.stderr.write(f"warning: {warning}\n")
    print("\nAdd the generated kernels module to the crate that holds the kernels (src/lib.rs or src/main.rs):\n\n"
          f"    pub mod kernels {{\n        {cargo.INCLUDE_LINE}\n    }}\n\n"
          "then call a kernel on the GPU with  let gpu = kernels::Gpu::new()?;  kernels::triad(&gpu, &mut a, &b, "
          "&c, 2.0)?;\nThe build runs rs2gpu with `python3` (or $RS2GPU_PYTHON), which must have rs2gpu installed.")
    return EXIT_OK


# ------------------------------------------------------------------ argument parsing


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rs2gpu",
        description="Translate safe Rust #[kernel] functions into race-free CUDA and HIP C++.",
        epilog="Exit status: 0 success, 1 errors in the Rust source (diagnostics on stderr), 2 internal or "
               "usage error.")
    parser.add_argument("--version", action="version", version=f"rs2gpu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("translate", help="write CUDA/HIP C++ and manifest.json for every kernel",
                       description="Translate every #[kernel] under PATH (a .rs file, a crate's src/, or a crate "
                                   "folder) into one .cu and one .hip.cpp file per kernel, plus manifest.json "
                                   "(argument layout, transfer plan and launches of each kernel).")
    p.add_argument("path", metavar="PATH")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for the generated files")
    p.add_argument("--target", choices=("cuda", "hip", "all"), default="all", help="which C++ to write (default: all)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--no-cache", action="store_true",
                   help="translate every kernel afresh, without reading or writing the translation cache (kept "
                        "in $RS2GPU_CACHE_DIR/translations, default ~/.cache/rs2gpu/translations; "
                        "RS2GPU_CACHE_DIR=off turns every cache off)")
    p.set_defaults(run=cmd_translate)

    p = sub.add_parser("check", help="report diagnostics only (exit 1 on error)",
                       description="Check every #[kernel] under PATH: the kernel language, and that no parallel "
                                   "loop can race. Writes nothing.")
    p.add_argument("path", metavar="PATH")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("inspect", help="show one kernel's generated C++, argument layout and transfer plan",
                       description="Print the kernel's own generated C++ (coloured on a terminal): its header with "
                                   "the transfer plan, its structs, helpers and entry points, without the vendor "
                                   "prelude of a few hundred lines that every generated file of a target starts "
                                   "with (--prelude prints the whole file); then its argument layout, transfer "
                                   "plan and launches.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--kernel", required=True, metavar="NAME")
    p.add_argument("--target", choices=("cuda", "hip"), default="cuda")
    p.add_argument("--prelude", action="store_true",
                   help="print the whole generated file, the vendor prelude included, as `translate` writes it")
    p.add_argument("--json", action="store_true", help="print the kernel's manifest entry as JSON instead")
    p.set_defaults(run=cmd_inspect)

    p = sub.add_parser("compile", help="compile each kernel with NVRTC/hiprtc (no GPU needed) and report resources",
                       description="Translate the kernels under PATH and compile each generated file with the "
                                   "compilers the GPU backends use, for any architecture and without a GPU: "
                                   "NVRTC for CUDA, hiprtc for HIP. For each kernel it prints the entry points "
                                   "in the binary, the binary's size and what each entry point uses: registers, "
                                   "spill bytes (from ptxas) and stack for CUDA; VGPRs, SGPRs, AGPRs, spilled "
                                   "registers, scratch, LDS and wave size for AMD. Compile errors are printed "
                                   "at the Rust lines they come from, and the exit status is 1.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--target", choices=("cuda", "hip", "all"), default="all",
                   help="which generated C++ to compile (default: all)")
    p.add_argument("--arch", action="append", metavar="ARCH",
                   help="sm_XX or compute_XX (CUDA) or gfxNNN (HIP) of an architecture the compiler knows (exit "
                        "status 2 otherwise), repeatable; a target with no --arch of its own is compiled for "
                        f"{DEFAULT_ARCH['cuda']} (CUDA) or {DEFAULT_ARCH['hip']} (HIP)")
    p.add_argument("--kernel", action="append", metavar="NAME", help="compile only this kernel (repeatable)")
    p.add_argument("--hip-compiler", choices=("hiprtc", "clang"), default="hiprtc",
                   help="hiprtc (default, what the HIP backend uses) or clang with the ROCm device libraries, "
                        "for architectures this hiprtc does not know")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="compiles to run at once (default: the number of CPUs)")
    p.set_defaults(run=cmd_compile)

    p = sub.add_parser("explain", help="explain a diagnostic code, e.g. RG0103",
                       description="Print the long explanation of a diagnostic code.")
    p.add_argument("code", metavar="CODE")
    p.set_defaults(run=cmd_explain)

    p = sub.add_parser("support-crate", help="print the path of the Rust support crate",
                       description="Print the folder of the `rs2gpu` Rust crate that provides #[kernel]; add it to "
                                   "Cargo.toml as  rs2gpu = { path = \"<that folder>\" }.")
    p.set_defaults(run=cmd_support_crate)

    p = sub.add_parser("cargo", help="the Cargo build-script hook: `cargo init` prepares a crate",
                       description="Use rs2gpu from Cargo: `rs2gpu cargo init [CRATE]` writes a build.rs that "
                                   "translates the crate's kernels at every build (into OUT_DIR: the C++ and a "
                                   "typed Rust module that launches them) and adds the support crate to "
                                   "Cargo.toml. `rs2gpu cargo build-script` is what that build.rs runs.")
    cargo_sub = p.add_subparsers(dest="cargo_command", metavar="ACTION", required=True)
    q = cargo_sub.add_parser("init", help="write build.rs and add the support crate to Cargo.toml",
                             description="Prepare an existing crate for the hook: write build.rs (refusing to replace "
                                         "a different one unless --force) and add `rs2gpu = { path = ... }` to "
                                         "[dependencies].")
    q.add_argument("crate_dir", nargs="?", default=".", metavar="CRATE_DIR", help="the crate folder (default: .)")
    q.add_argument("--force", action="store_true", help="replace an existing build.rs")
    q = cargo_sub.add_parser("build-script", help="what build.rs runs: translate src/ into OUT_DIR",
                             description="Translate the crate's kernels into OUT_DIR and print Cargo's build-script "
                                         "instructions; rs2gpu's errors go to stderr and fail the build.")
    q.add_argument("--crate-dir", metavar="DIR", help="the crate folder (default: $CARGO_MANIFEST_DIR)")
    q.add_argument("--out-dir", metavar="DIR", help="the output folder (default: $OUT_DIR)")
    p.set_defaults(run=cmd_cargo)
    return parser


def _end_as_unix_tools_do_on_a_closed_pipe() -> int:
    """Whoever reads rs2gpu's output stopped reading (`rs2gpu inspect ... | head`): end as a Unix tool ends
    then, killed by SIGPIPE, silently, which a shell reports as exit status 141 (128 + SIGPIPE). Python
    ignores SIGPIPE, turning it into BrokenPipeError; the default action is put back and taken."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    return 128 + signal.SIGPIPE  # only where the caller blocked the signal, which then stays pending


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = args.run(args)
        sys.stdout.flush()  # output still buffered meets a closed pipe here, not at the interpreter's exit
        return status
    except BrokenPipeError:
        return _end_as_unix_tools_do_on_a_closed_pipe()
    except UsageError as e:
        sys.stderr.write(f"error: {e}\n")
        return EXIT_INTERNAL
    except OSError as e:
        sys.stderr.write(f"error: {e.strerror or e}{f': {e.filename}' if e.filename else ''}\n")
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except Exception:  # an rs2gpu bug: say so, and keep the details for the report
        sys.stderr.write("error: internal compiler error: rs2gpu crashed. This is a bug in rs2gpu, not in your "
                         "code; please report it with the input file and this trace:\n")
        sys.stderr.write(traceback.format_exc())
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
