"""The Cargo build-script hook: `rs2gpu cargo init` prepares a crate, `rs2gpu cargo build-script` is what
its `build.rs` runs.

    rs2gpu cargo init [CRATE]   writes build.rs, adds the `rs2gpu` support crate to Cargo.toml
    build.rs → python3 -m rs2gpu.cli cargo build-script
                                 translates the crate's src/ into OUT_DIR: <kernel>.cu, <kernel>.hip.cpp,
                                 manifest.json, and the typed Rust module rs2gpu_kernels.rs (+ its runtime)

The build script speaks Cargo's protocol: `cargo::rerun-if-changed=` for every file the translation
depends on, `cargo::warning=` for each line of rs2gpu's warnings, and on errors only the rustc-style
diagnostics on stderr and a failing exit status, which fails the build and shows them. A source that does
not parse is left to rustc, which compiles the crate next and reports it in its own words.
"""
from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from rs2gpu import __version__, incremental, pipeline, support_crate_path
from rs2gpu.ir.abi import CrateABI
from rs2gpu.ir.diagnostics import CompileFailed, render

BUILD_SCRIPT = "build.rs"
INCLUDE_LINE = 'include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));'
SYNTAX_ERROR = "RG0001"
# The folders of rs2gpu whose files decide what a translation writes (not the Python runtime).
TRANSLATOR_PACKAGES = ("rs2gpu", "rs2gpu.frontend", "rs2gpu.ir", "rs2gpu.checker", "rs2gpu.emit", "rs2gpu.templates")


class CargoSetupError(Exception):
    """The crate cannot be prepared as asked (no Cargo.toml, a different build.rs, ...)."""


# ------------------------------------------------------------------ rs2gpu cargo init


def build_script_text() -> str:
    from rs2gpu.emit import environment

    return environment().get_template("build_rs.j2").render(version=__version__)


def _read_toml(text: str) -> dict:
    """Cargo.toml as a dict: tomllib where Python has it (3.11+), else the two tables init reads,
    [package] and [dependencies], parsed line by line."""
    try:
        import tomllib
    except ImportError:
        data: dict = {}
        table = None
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            header = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]", line)
            if header:
                table = data.setdefault(header.group(1), {})
                if header.group(1).startswith("dependencies."):
                    data.setdefault("dependencies", {})[header.group(1).split(".", 1)[1]] = {}
            elif table is not None and "=" in line:
                key, value = (part.strip() for part in line.split("=", 1))
                table[key.strip('"')] = {"false": False, "true": True}.get(value, value.strip('"'))
        return data
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CargoSetupError(f"Cargo.toml is not valid TOML: {e}") from e


def _package_table(crate_dir: Path) -> tuple[Path, str, dict]:
    manifest = crate_dir / "Cargo.toml"
    if not manifest.is_file():
        raise CargoSetupError(f"{crate_dir} has no Cargo.toml: run `cargo init` there first, or name the crate folder")
    text = manifest.read_text(encoding="utf-8")
    data = _read_toml(text)
    if "package" not in data:
        raise CargoSetupError(f"{manifest} has no [package]: name the folder of one crate, not a workspace")
    return manifest, text, data


def support_dependency(crate_dir: Path) -> str:
    """The path of the support crate as Cargo.toml should name it: relative when both live in one git
    repository (so the repository can move), absolute otherwise (an installed rs2gpu)."""
    support = support_crate_path()
    crate = crate_dir.resolve()
    common = Path(os.path.commonpath([support, crate]))
    in_one_repository = any((folder / ".git").exists() for folder in (common, *common.parents)) and common != Path("/")
    path = os.path.relpath(support, crate) if in_one_repository else str(support)
    return Path(path).as_posix()


def add_dependency(text: str, path: str) -> str:
    """`text` (a Cargo.toml) with `rs2gpu = { path = ... }` added to [dependencies]."""
    line = f'rs2gpu = {{ path = "{path}" }}'
    lines = text.splitlines(keepends=True)
    for i, current in enumerate(lines):
        if current.split("#", 1)[0].strip() == "[dependencies]":
            lines.insert(i + 1, line + "\n")
            return "".join(lines)
    return text + ("" if text.endswith("\n") or not text else "\n") + f"\n[dependencies]\n{line}\n"


@dataclass
class InitReport:
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def init_crate(crate_dir: Path, force: bool = False) -> InitReport:
    """Write build.rs and add the support crate to Cargo.toml; refuse to replace a different build.rs
    unless `force`."""
    report = InitReport()
    manifest, text, data = _package_table(crate_dir)
    script = crate_dir / BUILD_SCRIPT
    wanted = build_script_text()
    if script.exists() and script.read_text(encoding="utf-8") == wanted:
        report.messages.append(f"{script} is up to date")
    elif script.exists() and not force:
        raise CargoSetupError(f"{script} already exists and is not the build script rs2gpu writes; merge them by "
                              "hand, or pass --force to replace it")
    else:
        replaced = script.exists()
        script.write_text(wanted, encoding="utf-8")
        report.messages.append(f"{'Replaced' if replaced else 'Wrote'} {script}: it runs rs2gpu on src/ at every build")
    declared = data["package"].get("build")
    if declared is False or (isinstance(declared, str) and Path(declared) != Path(BUILD_SCRIPT)):
        report.warnings.append(f"{manifest} sets `build = {declared!r}` in [package], so cargo does not run "
                               f"{BUILD_SCRIPT}; remove that line")
    dependencies = data.get("dependencies", {})
    if "rs2gpu" in dependencies:
        report.messages.append(f"{manifest} already depends on rs2gpu")
    else:
        path = support_dependency(crate_dir)
        manifest.write_text(add_dependency(text, path), encoding="utf-8")
        report.messages.append(f'Added rs2gpu = {{ path = "{path}" }} to {manifest}')
    return report


# ------------------------------------------------------------------ rs2gpu cargo build-script


def _source_files(crate_dir: Path) -> list[Path]:
    src = crate_dir / "src"
    return sorted(p for p in src.rglob("*.rs") if "target" not in p.relative_to(src).parts)


def translator_files() -> list[Path]:
    """The files of rs2gpu that a translation depends on, so that upgrading rs2gpu rebuilds the kernels: its
    translator's Python and templates, and the Rust runtime files it copies beside the module."""
    import importlib

    from rs2gpu.emit.rust_host import RUNTIME_FILES

    files: set[Path] = set(RUNTIME_FILES)
    for name in TRANSLATOR_PACKAGES:
        folder = Path(importlib.import_module(name).__file__).parent
        files.update(p for p in folder.glob("*.py"))
        files.update(p for p in folder.glob("*.j2"))
    return sorted(files)


def struct_paths(crate_dir: Path) -> dict[str, str]:
    """The path of each struct of the crate, e.g. {"Particle": "crate::physics::Particle"}."""
    from rs2gpu.frontend.items import collect_items
    from rs2gpu.frontend.source import read_sources

    _, files = read_sources(crate_dir)
    return {item.name: "::".join(("crate", *item.module, item.name))
            for item in collect_items(files) if item.kind == "struct"}


def generate(crate_dir: Path, out_dir: Path) -> tuple[incremental.Translated, CrateABI]:
    """Translate the crate (through the translation cache, see `rs2gpu.incremental`) and write the C++, the
    manifest and the Rust module into `out_dir`."""
    from rs2gpu.emit.rust_host import render_rust_module

    result = incremental.translate(crate_dir, pipeline.ALL_TARGETS)
    abi = CrateABI.from_json(json.loads(result.files[pipeline.MANIFEST]))
    rust = render_rust_module(abi, struct_paths(crate_dir), __version__)
    pipeline.write_files({**result.files, **rust}, out_dir)
    return result, abi


def run_build_script(crate_dir: Path, out_dir: Path, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> int:
    """What build.rs runs. Returns the exit status: 0, or 1 when the kernels have errors (other than a source
    that does not parse, which rustc reports).

    The files to watch are named only after a translation that succeeded: cargo runs a build script that
    failed again at the next build whatever it watched, and shows the whole of its stdout above its stderr,
    where dozens of `rerun-if-changed` lines would bury the diagnostics."""
    try:
        result, abi = generate(crate_dir, out_dir)
    except CompileFailed as err:
        errors = [d for d in err.diagnostics if d.severity == "error"]
        if errors and all(d.code == SYNTAX_ERROR for d in errors):
            return _leave_syntax_errors_to_rustc(crate_dir, out_dir, err, stdout)
        for d in err.diagnostics:
            stderr.write(render(d, err.sources, False) + "\n")
        codes = sorted({d.code for d in errors})
        stderr.write(f"error: rs2gpu could not translate the kernels due to {len(errors)} previous "
                     f"error{'s' if len(errors) != 1 else ''}\n")
        if codes:
            stderr.write(f"For more information about an error, try `rs2gpu explain {codes[0]}`.\n")
        return 1
    _watch(crate_dir, stdout)
    for d in result.warnings:
        for line in render(d, result.sources, False).splitlines():
            if line.strip():
                print(f"cargo::warning={line}", file=stdout)
    from rs2gpu.emit.rust_host import unsupported

    for name, entry in abi.kernels.items():
        reason = unsupported(entry)
        if reason:
            print(f"cargo::warning=kernel `{name}` uses {reason}, which the generated Rust API cannot launch yet: "
                  f"the `kernels` module has no function for it", file=stdout)
    for generic in result.open_generics:
        one = ", ".join(["f32"] * len(generic.type_params))
        example = "f32, f64" if len(generic.type_params) == 1 else f"({one})"
        print(f"cargo::warning=kernel `{generic.name}` is generic and lists no `types(...)`: the `kernels` module "
              f"has no function for it (only a call from Python instantiates it); name its instantiations in the "
              f"attribute to have one for each, e.g. #[kernel(types({example}))]", file=stdout)
    if not result.kernels and not result.open_generics:
        print(f"cargo::warning=rs2gpu found no #[kernel] functions under {crate_dir / 'src'}", file=stdout)
    return 0


def _watch(crate_dir: Path, stdout: TextIO) -> None:
    """Tell cargo to run the build script again when the crate's sources or rs2gpu change."""
    print(f"cargo::rerun-if-changed={crate_dir / 'src'}", file=stdout)
    for path in [*_source_files(crate_dir), *translator_files()]:
        print(f"cargo::rerun-if-changed={path}", file=stdout)


def _leave_syntax_errors_to_rustc(crate_dir: Path, out_dir: Path, err: CompileFailed, stdout: TextIO) -> int:
    """A source that does not parse: rustc, which compiles the crate right after the build script, says why
    in its own words (cargo builds the script before the crate, so failing here would show rs2gpu's parse
    error instead, and `cargo check` no other). The module of an earlier build is removed, so that a file
    only rs2gpu's parser rejects fails at the `include!` rather than building with stale kernels."""
    from rs2gpu.emit.rust_host import MODULE_FILE

    (out_dir / MODULE_FILE).unlink(missing_ok=True)
    for file in dict.fromkeys(d.span.file for d in err.diagnostics if d.severity == "error"):
        print(f"cargo::warning=rs2gpu did not translate the kernels: {file} does not parse as Rust (see "
              "rustc's error; `rs2gpu check` gives rs2gpu's own)", file=stdout)
    _watch(crate_dir, stdout)
    return 0


def build_script_paths(crate_dir: str | None, out_dir: str | None) -> tuple[Path, Path]:
    """The crate and output folders: the arguments, else what Cargo tells a build script."""
    crate = crate_dir or os.environ.get("CARGO_MANIFEST_DIR")
    out = out_dir or os.environ.get("OUT_DIR")
    if not crate or not out:
        raise CargoSetupError("`rs2gpu cargo build-script` runs inside a Cargo build (it reads CARGO_MANIFEST_DIR and "
                              "OUT_DIR); outside one, pass --crate-dir and --out-dir")
    return Path(crate), Path(out)


__all__ = ["init_crate", "run_build_script", "generate", "build_script_text", "add_dependency", "CargoSetupError",
           "INCLUDE_LINE"]
