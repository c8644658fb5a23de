"""What the device checks cost, read from the compiled kernels: registers and SASS instructions of every
entry point of the benchmark crate's kernels as rs2gpu generates them, against the same loops emitted
with every device check left out (code that is not safe to run: compiled and measured, never launched).

    python3 bench/check_cost.py [--arch sm_90] [--kernels if_quad,zonal_accumulation_3d]

Roles: `default` is the entry point a launch runs when the host found every access in bounds that it can
check (conditional ones included), `checked` the one it runs otherwise (it checks those accesses on the
device), `verify` the kernel that runs after a loop writing through an index list (it finds repeated
values where the loop found the list out of order, and states the panic of a read through the list the
loop found out of bounds; nothing to compare it with), `private` the one a launch runs when its scatter
target fits a copy per block in shared memory (compared with the same entry point without checks),
`proven` the one it runs when the host proved the checks of the indices made from index-list values from
verified lists (`rs2gpu.IndexList`; one thread per iteration, compared with the loop's covering entry
point without checks).
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)   # bench/'s modules are imported as `bench.*`, never as top-level names
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # appended: an installed rs2gpu takes precedence over the source tree

CRATE = ROOT / "examples" / "rajaperf"

from rs2gpu.ir.abi import EntryKind  # noqa: E402
from rs2gpu.runtime.options import DEFAULT_ARCH  # noqa: E402

# the entry points whose checks the table counts, by the role the table names them with (the covering,
# vector and L2-adds entry points run the general one's body, with its checks)
ROLES = {EntryKind.GENERAL: "default", EntryKind.CHECKED: "checked", EntryKind.VERIFY: "verify",
         EntryKind.PRIVATE: "private", EntryKind.PROVEN: "proven"}


@dataclass(frozen=True)
class Cost:
    kernel: str
    symbol: str
    role: str                     # "default" | "checked" | "verify" | "private" | "proven"
    device_checks: int            # panic sites the entry point contains
    registers: int
    instructions: int
    bare_registers: int | None    # the same loop without device checks (None for a verification kernel)
    bare_instructions: int | None


@dataclass(frozen=True)
class CompileTimes:
    kernel: str
    seconds: float                # NVRTC, the file as generated (every entry point)
    bare_seconds: float           # NVRTC, the file without device checks


def measure(crate: Path = CRATE, arch: str = DEFAULT_ARCH["cuda"], kernels: list[str] | None = None):
    """(costs of every entry point, NVRTC compile times per kernel file)."""
    from bench.cubin import kernel_resources, sass_instructions
    from rs2gpu import pipeline
    from rs2gpu.emit import emit_crate
    from rs2gpu.runtime.nvrtc import compile_cuda

    translation = pipeline.translate(crate, ("cuda",))
    bare = emit_crate(translation.checked, ("cuda",), device_checks=False)
    costs, times = [], []
    for name, entry in translation.emitted.abi.kernels.items():
        if kernels and name not in kernels:
            continue
        file = entry.files["cuda"]
        started = time.perf_counter()
        binary = compile_cuda(translation.emitted.files[file], file, arch).binary
        middle = time.perf_counter()
        bare_binary = compile_cuda(bare.files[file], file, arch).binary
        times.append(CompileTimes(name, middle - started, time.perf_counter() - middle))
        regs, sass = kernel_resources(binary), sass_instructions(binary)
        bare_regs, bare_sass = kernel_resources(bare_binary), sass_instructions(bare_binary)
        for launch, bare_launch in zip(entry.launches, bare.abi.kernels[name].launches):
            plain = launch.general.symbol
            roles = [(e.symbol, ROLES[e.kind], len(e.checks)) for e in launch.entry_points if e.kind in ROLES]
            for symbol, role, checks in roles:
                compared = role != "verify"
                # the private one against the same shared-memory copy without checks, the proven one (one thread
                # per iteration) against the loop's covering entry point without checks
                bare_symbol = symbol if role == "private" \
                    else bare_launch.entry(EntryKind.COVERING).symbol if role == "proven" else plain
                costs.append(Cost(name, symbol, role, checks, regs[symbol].registers, sass[symbol],
                                  bare_regs[bare_symbol].registers if compared else None,
                                  bare_sass[bare_symbol] if compared else None))
    return costs, times


def render(costs: list[Cost], times: list[CompileTimes], arch: str) -> str:
    lines = [f"Device checks, statically ({arch}, NVRTC): registers and SASS instructions of each entry point, "
             "as generated and with every device check left out.", "",
             "| kernel | entry point | role | device checks | registers | without checks | SASS instructions "
             "| without checks |", "|---|---|---|---|---|---|---|---|"]

    def show(value) -> str:
        return "–" if value is None else str(value)

    for c in costs:
        lines.append(f"| {c.kernel} | {c.symbol} | {c.role} | {c.device_checks} | {c.registers} | "
                     f"{show(c.bare_registers)} | {c.instructions} | {show(c.bare_instructions)} |")
    defaults = [c for c in costs if c.role == "default"]
    same = sum(c.registers == c.bare_registers and c.instructions == c.bare_instructions for c in defaults)
    unchecked = sum(c.device_checks == 0 for c in defaults)
    lines += ["", f"{len(defaults)} launches: {unchecked} run with no device check; {same} run code identical in "
              f"registers and instructions to the code without checks.",
              f"NVRTC time for the {len(times)} files: {sum(t.seconds for t in times):.2f} s as generated, "
              f"{sum(t.bare_seconds for t in times):.2f} s without checks."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default=DEFAULT_ARCH["cuda"])
    parser.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    args = parser.parse_args(argv)
    costs, times = measure(CRATE, args.arch, args.kernels.split(",") if args.kernels else None)
    print(render(costs, times, args.arch))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
