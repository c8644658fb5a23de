"""The `rs2gpu` command line.

Exit status: 0 success, 1 the Rust source has errors (diagnostics printed), 2 an internal error or a
problem with the command line or the file system.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

from rs2gpu import __version__, pipeline, support_crate_path
from rs2gpu.ir.codes import CODES, explain
from rs2gpu.ir.diagnostics import CompileFailed, render

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
        result = pipeline.translate(path, _targets(args.target))
    except CompileFailed as err:
        _failure_summary(err, f"translate `{path}`")
        return EXIT_USER_ERROR
    _print_diagnostics(result.warnings, result.crate.sources)
    written = pipeline.write_outputs(result.emitted, out_dir)
    elapsed = time.perf_counter() - start
    if not args.quiet:
        kernels = result.checked.kernels
        for plan in kernels:
            files = ", ".join(result.emitted.manifest["kernels"][plan.name]["files"].values())
            print(f"   Translated {plan.name} ({len(plan.loops)} launch{'es' if len(plan.loops) != 1 else ''}) "
                  f"-> {files}")
        print(f"    Finished {len(kernels)} kernel{'s' if len(kernels) != 1 else ''} of `{result.crate.name}` "
              f"in {elapsed:.2f}s: {len(written)} files in {out_dir}")
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
    manifest = result.emitted.manifest["kernels"]
    if args.kernel not in manifest:
        known = ", ".join(sorted(manifest)) or "none"
        raise UsageError(f"no kernel named `{args.kernel}` in {path} (kernels: {known})")
    entry = manifest[args.kernel]
    source = result.emitted.files[entry["files"][args.target]]
    if args.json:
        print(json.dumps(entry, indent=2))
        return EXIT_OK
    from rs2gpu.highlight import highlight

    print(highlight(source) if _color(sys.stdout) else source)
    print(_describe_abi(args.kernel, entry))
    return EXIT_OK


def _describe_abi(name: str, entry: dict) -> str:
    lines = [f"== {name} ({entry['source']}) ==", "", "Arguments (in launch order):"]
    lines.append(f"  {'parameter':<14}{'type':<16}{'transfer':<10}{'C++ arguments'}")
    for p in entry["params"]:
        abi = ", ".join(f"{a['name']}: {a['size']} B" for a in p["abi"])
        lines.append(f"  {p['name']:<14}{p['type']:<16}{p['transfer']:<10}{abi}")
    lines += ["", "Transfer plan:"]
    for p in entry["params"]:
        lines.append(f"  {p['name']}: {p['transfer']} ({p['reason']})")
    lines += ["", "Launches:"]
    for launch in entry["launches"]:
        red = ", ".join(f"{r['name']} ({r['op']})" for r in launch["reductions"])
        dims = " x ".join(f"{d['index']}: {d['index_type']}" for d in launch["dims"])
        lines.append(f"  {launch['symbol']}: loop at {launch['source']}, over ({dims})"
                     f"{', reduces ' + red if red else ''}")
        for check in launch["checks"]:
            lines.append(f"    checked at launch: the strides of the write at {check['source']} do not overlap")
    lines.append(f"  geometry: {entry['geometry']}")
    if entry["returns"]:
        lines.append(f"Returns: {entry['returns']['type']}")
    return "\n".join(lines)


def cmd_explain(args) -> int:
    text = explain(args.code)
    if text is None:
        raise UsageError(f"unknown error code `{args.code}`; known codes: {', '.join(sorted(CODES))}")
    print(text)
    return EXIT_OK


def cmd_support_crate(args) -> int:
    print(support_crate_path())
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
    p.set_defaults(run=cmd_translate)

    p = sub.add_parser("check", help="report diagnostics only (exit 1 on error)",
                       description="Check every #[kernel] under PATH: the kernel language, and that no parallel "
                                   "loop can race. Writes nothing.")
    p.add_argument("path", metavar="PATH")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("inspect", help="show one kernel's generated C++, argument layout and transfer plan",
                       description="Print the generated C++ of one kernel (coloured on a terminal), then its "
                                   "argument layout, transfer plan and launches.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--kernel", required=True, metavar="NAME")
    p.add_argument("--target", choices=("cuda", "hip"), default="cuda")
    p.add_argument("--json", action="store_true", help="print the kernel's manifest entry as JSON instead")
    p.set_defaults(run=cmd_inspect)

    p = sub.add_parser("explain", help="explain a diagnostic code, e.g. RG0103",
                       description="Print the long explanation of a diagnostic code.")
    p.add_argument("code", metavar="CODE")
    p.set_defaults(run=cmd_explain)

    p = sub.add_parser("support-crate", help="print the path of the Rust support crate",
                       description="Print the folder of the `rs2gpu` Rust crate that provides #[kernel]; add it to "
                                   "Cargo.toml as  rs2gpu = { path = \"<that folder>\" }.")
    p.set_defaults(run=cmd_support_crate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as e:
        sys.stderr.write(f"error: {e}\n")
        return EXIT_INTERNAL
    except OSError as e:
        sys.stderr.write(f"error: {e.strerror or e}: {e.filename or ''}\n")
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
