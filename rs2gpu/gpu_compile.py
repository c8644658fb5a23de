"""`rs2gpu compile`: each kernel's generated C++ through the compilers the GPU backends use, for any
architecture and with no GPU: NVRTC for CUDA, hiprtc (or clang) for HIP.

For each kernel and architecture the result says whether it compiled, which entry points the binary has,
its size, and what each entry point uses of the GPU (from the binary itself, see `runtime/resources.py`).
A compile error is reported at the Rust lines the compiler's log points at through the `#line`
directives of the generated file.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from rs2gpu.ir.abi import CrateABI
from rs2gpu.runtime.errors import GpuCompileError
from rs2gpu.runtime.options import DEFAULT_ARCH, CudaOptions, HipOptions
from rs2gpu.runtime.resources import KernelResources

HIP_COMPILERS = ("hiprtc", "clang")
_PTX_ENTRY = r"\.entry\s+([A-Za-z_$][\w$]*)"


@dataclass(frozen=True)
class Job:
    kernel: str
    target: str  # "cuda" | "hip"
    arch: str
    file: str  # the generated file's name, as the compile log and the reproduce command call it
    symbols: tuple[str, ...]  # the entry points the manifest launches


@dataclass
class Result:
    job: Job
    compiler: str = ""
    binary_bytes: int = 0
    symbols: list[str] = field(default_factory=list)
    resources: list[KernelResources] = field(default_factory=list)
    error: GpuCompileError | None = None
    seconds: float = 0.0

    @property
    def missing(self) -> list[str]:
        """Entry points the manifest launches that the binary lacks (a compiled binary must have them all)."""
        return [] if self.error else [s for s in self.job.symbols if s not in self.symbols]

    @property
    def ok(self) -> bool:
        return self.error is None and not self.missing

    def to_json(self) -> dict:
        out = {"kernel": self.job.kernel, "target": self.job.target, "arch": self.job.arch, "file": self.job.file,
               "ok": self.ok, "compiler": self.compiler, "binary_bytes": self.binary_bytes,
               "symbols": self.symbols, "missing_symbols": self.missing,
               "resources": [asdict(r) for r in self.resources], "seconds": round(self.seconds, 3)}
        if self.error is not None:
            out["error"] = {"summary": self.error.summary, "log": self.error.log, "command": self.error.command,
                            "locations": [loc._asdict() for loc in self.error.locations]}
        return out


def target_of_arch(arch: str) -> str:
    """"cuda" for sm_XX / compute_XX, "hip" for gfx…; ValueError naming both forms otherwise."""
    for target, options in (("cuda", CudaOptions), ("hip", HipOptions)):
        try:
            options(arch)
            return target
        except ValueError:
            continue
    raise ValueError(f"unknown GPU architecture {arch!r}: expected sm_XX or compute_XX (NVIDIA, e.g. sm_90) or "
                     "gfxNNN (AMD, e.g. gfx90a or gfx1030)")


def plan_archs(targets: tuple[str, ...], archs: list[str] | None) -> dict[str, list[str]]:
    """The archs to compile each target for: those given for it, else the target's default."""
    given: dict[str, list[str]] = {}
    for arch in archs or []:
        target = target_of_arch(arch)
        if target not in targets:
            raise ValueError(f"--arch {arch} is for {target}, which --target leaves out")
        if arch not in given.setdefault(target, []):
            given[target].append(arch)
    return {t: given.get(t) or [DEFAULT_ARCH[t]] for t in targets}


# The smallest program the compilers take: whether it compiles for an architecture tells whether the
# compiler knows that architecture, before any kernel is compiled for it.
_EMPTY_KERNEL = 'extern "C" __global__ void empty_kernel() {}\n'


def check_arch(target: str, arch: str, hip_compiler: str = "hiprtc") -> None:
    """ValueError where the compiler of `target` rejects `arch`: a name of the right form for an architecture
    that does not exist or that this release of the compiler does not know. A missing toolchain raises
    ToolchainUnavailable."""
    from rs2gpu.emit.dialect import DIALECTS

    name = "empty_kernel" + DIALECTS[target].file_suffix
    error = compile_job(Job("empty_kernel", target, arch, name, ()), _EMPTY_KERNEL, hip_compiler).error
    if error is None:
        return
    lines = [f"--arch {arch}: the compiler cannot compile for this architecture: {error.summary}"]
    lines += [f"  = note: {line}" for line in error.log.strip().splitlines()[:1]]
    if target == "cuda":
        from rs2gpu.runtime.nvrtc import supported_archs

        known = ", ".join(f"sm_{number}" for number in supported_archs())
        lines.append(f"  = note: this NVRTC compiles for {known} (each also as compute_XX)")
    elif hip_compiler == "hiprtc":
        lines.append("  = note: `--hip-compiler clang` compiles with clang and the ROCm device libraries instead")
    lines.append("  = help: --arch takes sm_XX or compute_XX (NVIDIA, e.g. sm_90) or gfxNNN (AMD, e.g. gfx90a or "
                 "gfx1030), of an architecture the compiler knows")
    raise ValueError("\n".join(lines))


def jobs_for(crate: CrateABI, archs: dict[str, list[str]], kernels: list[str] | None) -> list[Job]:
    names = kernels or list(crate.kernels)
    jobs = []
    for name in names:
        entry = crate.kernels[name]
        symbols = tuple(e.symbol for launch in entry.launches for e in launch.entry_points)
        for target, target_archs in archs.items():
            jobs += [Job(name, target, arch, entry.files[target], symbols) for arch in target_archs]
    return jobs


def compile_job(job: Job, source: str, hip_compiler: str = "hiprtc") -> Result:
    """Compile one generated file; a compile failure is the result's `error`, a missing toolchain raises
    ToolchainUnavailable."""
    import re

    from rs2gpu.runtime.hipclang import code_object_symbols
    from rs2gpu.runtime.resources import binary_resources

    result = Result(job)
    started = time.perf_counter()
    try:
        if job.target == "cuda":
            from rs2gpu.runtime.nvrtc import compile_cuda, cubin_symbols

            ptx = CudaOptions(job.arch).emits_ptx
            # ptxas -v puts the spill counts, which a cubin does not record, into the log.
            compiled = compile_cuda(source, job.file, job.arch, options=() if ptx else ("--ptxas-options=-v",))
            if ptx:
                text = compiled.binary.rstrip(b"\0").decode("utf-8", errors="replace")
                result.symbols = re.findall(_PTX_ENTRY, text)
            else:
                result.symbols = cubin_symbols(compiled.binary)
                result.resources = binary_resources(compiled.binary, compiled.log)
        else:
            if hip_compiler == "clang":
                from rs2gpu.runtime.hipclang import compile_hip_clang as compile_hip
            else:
                from rs2gpu.runtime.hiprtc import compile_hip
            compiled = compile_hip(source, job.file, job.arch)
            result.symbols = code_object_symbols(compiled.binary)
            result.resources = binary_resources(compiled.binary)
        result.compiler = compiled.compiler_version
        result.binary_bytes = len(compiled.binary)
    except GpuCompileError as e:
        result.error = e
    result.seconds = time.perf_counter() - started
    return result


def compile_all(jobs: list[Job], files: dict[str, str], hip_compiler: str = "hiprtc",
                workers: int = 1) -> list[Result]:
    """Compile every job (in parallel threads: NVRTC runs in the process, hiprtc and clang in children)."""
    if workers <= 1 or len(jobs) <= 1:
        return [compile_job(job, files[job.file], hip_compiler) for job in jobs]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda job: compile_job(job, files[job.file], hip_compiler), jobs))


# ---------------------------------------------------------------- reporting

_PLAIN = {"error": "", "blue": "", "bold": "", "green": "", "reset": ""}
_COLORED = {"error": "\x1b[1;31m", "blue": "\x1b[1;34m", "bold": "\x1b[1m", "green": "\x1b[1;32m",
            "reset": "\x1b[0m"}


def describe_success(result: Result, color: bool = False) -> str:
    c = _COLORED if color else _PLAIN
    job = result.job
    count = len(result.symbols)
    lines = [f"{c['green']}    Compiled{c['reset']} {job.kernel} for {job.target} {job.arch} with {result.compiler}: "
             f"{result.binary_bytes:,} B, {count} entry point{'s' if count != 1 else ''}"]
    described = {r.symbol: r for r in result.resources}
    for symbol in result.symbols:
        usage = described[symbol].describe() if symbol in described else "resources not recorded (PTX)"
        lines.append(f"             {symbol}: {usage}")
    return "\n".join(lines)


def _excerpt(file: str, line: int, sources: dict[str, str], c: dict[str, str]) -> list[str]:
    gutter = " " * len(str(line))
    text = sources.get(file)
    source_lines = text.splitlines() if text is not None else []
    if not 0 < line <= len(source_lines):
        return [f"{gutter}{c['blue']}-->{c['reset']} {file}:{line}"]
    code = source_lines[line - 1].expandtabs(4)
    col = len(code) - len(code.lstrip()) + 1
    return [f"{gutter}{c['blue']}-->{c['reset']} {file}:{line}:{col}",
            f"{gutter} {c['blue']}|{c['reset']}",
            f"{c['blue']}{line} |{c['reset']} {code}",
            f"{gutter} {c['blue']}|{c['reset']} {' ' * (col - 1)}{c['error']}{'^' * max(1, len(code.strip()))}"
            f"{c['reset']}"]


def describe_failure(result: Result, sources: dict[str, str], color: bool = False) -> str:
    """rustc's shape: one `error:` per Rust line the compiler blamed, then what failed and how to redo it."""
    c = _COLORED if color else _PLAIN
    job = result.job
    note = f"{c['blue']}  = {c['reset']}{c['bold']}note{c['reset']}: "
    if result.error is None:
        return (f"{c['error']}error{c['reset']}{c['bold']}: the binary of `{job.kernel}` for {job.arch} lacks the "
                f"entry point{'s' if len(result.missing) != 1 else ''} {', '.join(result.missing)}{c['reset']}\n"
                f"{note}it has {', '.join(result.symbols) or 'none'}\n")
    error = result.error
    what = f"`{job.kernel}` ({job.file}) did not compile for {job.target} {job.arch}: {error.summary}"
    blocks = []
    for loc in error.locations:
        lines = [f"{c['error']}error{c['reset']}{c['bold']}: {loc.message}{c['reset']}"]
        lines += _excerpt(loc.file, loc.line, sources, c)
        lines.append(note + what)
        blocks.append("\n".join(lines))
    if not error.locations:
        log = error.log.strip().splitlines() or ["(empty)"]
        shown = log[:40] + ([f"... {len(log) - 40} more lines"] if len(log) > 40 else [])
        blocks.append("\n".join([f"{c['error']}error{c['reset']}{c['bold']}: {what}{c['reset']}",
                                 note + "no error points into the Rust source (a bug in rs2gpu's C++); "
                                        "the compiler log:", *("      " + line for line in shown)]))
    blocks[-1] += (f"\n{note}to reproduce, write the generated files with `rs2gpu translate` and run in "
                   f"their folder: {error.command}")
    return "\n\n".join(blocks) + "\n"
