"""What each kernel of a compiled binary uses of the GPU (registers, spills, stack, shared memory), read
from the binary in pure Python: no cuobjdump, no readelf, no llvm-readobj.

- cubin: the `.nv.info` attributes ptxas writes per function (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE,
  EIATTR_MAX_STACK_SIZE) and the size of the `.nv.shared.<kernel>` section. A cubin does not record spills;
  `ptxas_function_properties` reads them from the log of a compile run with `--ptxas-options=-v`.
- AMDGPU code object (v3 and later): the NT_AMDGPU_METADATA note, a msgpack map whose `amdhsa.kernels`
  list gives each kernel's `.vgpr_count`, `.sgpr_count`, `.agpr_count`, `.vgpr_spill_count`,
  `.sgpr_spill_count`, `.private_segment_fixed_size` (scratch), `.group_segment_fixed_size` (LDS),
  `.wavefront_size` and its `.args` layout.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from .elf import EM_AMDGPU, EM_CUDA, SHT_NOTE, elf_machine, elf_sections, elf_symbols
from .offload_bundle import is_offload_bundle, unbundle

NT_AMDGPU_METADATA = 32

# .nv.info attribute formats and the attributes read here (from NVIDIA's published ELF attribute list).
_EIFMT_NVAL, _EIFMT_BVAL, _EIFMT_HVAL, _EIFMT_SVAL = 1, 2, 3, 4
_EIATTR_FRAME_SIZE = 0x11
_EIATTR_MAX_STACK_SIZE = 0x23
_EIATTR_REGCOUNT = 0x2F
_NV_INFO = 0x70000000  # SHT_CUDA_INFO


@dataclass(frozen=True)
class KernelResources:
    """One kernel's use of the GPU. Fields a vendor's binary does not record are None."""

    symbol: str
    registers: int                      # CUDA: registers per thread; AMD: VGPRs per lane
    stack_bytes: int                    # CUDA: stack frame; AMD: private segment (scratch) per lane
    shared_bytes: int                   # static shared memory (CUDA) / LDS (AMD) per block
    scalar_registers: int | None = None     # AMD: SGPRs per wave
    accumulation_registers: int | None = None  # AMD CDNA: AGPRs per lane
    spilled_vgprs: int | None = None        # AMD: VGPRs spilled to scratch memory
    spilled_sgprs: int | None = None        # AMD: SGPRs spilled (to VGPR lanes, or to scratch)
    spill_store_bytes: int | None = None    # CUDA: from the ptxas log only
    spill_load_bytes: int | None = None
    wave_size: int | None = None

    def describe(self) -> str:
        if self.scalar_registers is not None:
            parts = [f"{self.registers} VGPRs", f"{self.scalar_registers} SGPRs"]
            if self.accumulation_registers is not None:
                parts.append(f"{self.accumulation_registers} AGPRs")
            if self.spilled_vgprs is not None:
                parts.append(f"{self.spilled_vgprs}/{self.spilled_sgprs} VGPRs/SGPRs spilled")
            else:
                parts.append("spills not recorded")
            parts += [f"{self.stack_bytes} B scratch", f"{self.shared_bytes} B LDS"]
            if self.wave_size:
                parts.append(f"wave{self.wave_size}")
            return ", ".join(parts)
        parts = [f"{self.registers} registers", f"{self.stack_bytes} B stack", f"{self.shared_bytes} B shared"]
        if self.spill_store_bytes is not None:
            parts.append(f"{self.spill_store_bytes} B spill stores, {self.spill_load_bytes} B spill loads")
        else:
            parts.append("spills not recorded in the cubin")
        return ", ".join(parts)


# ---------------------------------------------------------------- cubin


def _nv_info_entries(section: bytes):
    """(attribute, payload) for each entry of a .nv.info section; payload is bytes for SVAL, else an int."""
    offset = 0
    while offset + 2 <= len(section):
        fmt, attr = section[offset], section[offset + 1]
        if fmt == _EIFMT_NVAL:
            yield attr, None
            offset += 4
        elif fmt in (_EIFMT_BVAL, _EIFMT_HVAL):
            yield attr, struct.unpack_from("<H", section, offset + 2)[0]
            offset += 4
        elif fmt == _EIFMT_SVAL:
            (size,) = struct.unpack_from("<H", section, offset + 2)
            yield attr, section[offset + 4:offset + 4 + size]
            offset += 4 + size
        else:
            raise ValueError(f"malformed .nv.info section: unknown attribute format {fmt}")


def cubin_resources(binary: bytes, log: str = "") -> list[KernelResources]:
    """The resources of every kernel entry point of a cubin; spills come from `log` when it is the log of a
    compile with `--ptxas-options=-v`."""
    from .nvrtc import cubin_symbols

    if elf_machine(binary) != EM_CUDA:
        raise ValueError("not a cubin: the ELF machine is not EM_CUDA")
    symbols = elf_symbols(binary)
    per_symbol: dict[str, dict[int, int]] = {}
    sections = elf_sections(binary)
    for section in sections:
        if section.kind != _NV_INFO or section.name != ".nv.info":
            continue
        for attr, payload in _nv_info_entries(section.data(binary)):
            if attr in (_EIATTR_REGCOUNT, _EIATTR_FRAME_SIZE, _EIATTR_MAX_STACK_SIZE) and isinstance(payload, bytes):
                index, value = struct.unpack_from("<II", payload)
                if 0 < index <= len(symbols):  # symbol 0 is the null entry that elf_symbols leaves out
                    per_symbol.setdefault(symbols[index - 1].name, {})[attr] = value
    # The section of a kernel's static shared memory; from sm_90 on it also holds the 1 KiB the system
    # reserves per block, so ptxas's own figure is preferred when the log has it.
    shared = {s.name.removeprefix(".nv.shared."): s.size for s in sections if s.name.startswith(".nv.shared.")}
    reported = ptxas_function_properties(log)
    found = []
    for name in cubin_symbols(binary):
        attrs = per_symbol.get(name, {})
        stack = max(attrs.get(_EIATTR_FRAME_SIZE, 0), attrs.get(_EIATTR_MAX_STACK_SIZE, 0))
        stores, loads, smem = reported.get(name, (None, None, None))
        found.append(KernelResources(name, attrs.get(_EIATTR_REGCOUNT, 0), stack,
                                     shared.get(name, 0) if smem is None else smem,
                                     spill_store_bytes=stores, spill_load_bytes=loads))
    return found


_PTXAS_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PTXAS_PROPERTIES = re.compile(r"Function properties for (\S+)")
_PTXAS_SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_SMEM = re.compile(r"Used \d+ registers.*?(\d+) bytes smem")


def ptxas_function_properties(log: str) -> dict[str, tuple[int, int, int | None]]:
    """Spill store bytes, spill load bytes and static shared memory bytes per function, from a ptxas `-v`
    log (shared memory only for entry functions)."""
    found: dict[str, list] = {}
    entry = described = None
    for line in log.splitlines():
        if m := _PTXAS_ENTRY.search(line):
            entry = m[1]
        elif m := _PTXAS_PROPERTIES.search(line):
            described = m[1]
        elif (m := _PTXAS_SPILLS.search(line)) and described is not None:
            found.setdefault(described, [0, 0, None])[:2] = [int(m[2]), int(m[3])]
            described = None
        elif (m := _PTXAS_SMEM.search(line)) and entry is not None:
            found.setdefault(entry, [0, 0, None])[2] = int(m[1])
            entry = None
    return {name: tuple(values) for name, values in found.items()}


# ---------------------------------------------------------------- AMDGPU code objects


class _MsgPack:
    """Just enough msgpack to read AMDGPU metadata: maps, arrays, strings, integers, floats, booleans, nil."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError("truncated msgpack data")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def _unpack(self, fmt: str):
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def value(self):
        b = self._take(1)[0]
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0x80 <= b <= 0x8F:
            return self._map(b & 0x0F)
        if 0x90 <= b <= 0x9F:
            return [self.value() for _ in range(b & 0x0F)]
        if 0xA0 <= b <= 0xBF:
            return self._take(b & 0x1F).decode("utf-8", errors="replace")
        simple = {0xC0: None, 0xC2: False, 0xC3: True}
        if b in simple:
            return simple[b]
        numbers = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
                   0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
        if b in numbers:
            return self._unpack(numbers[b])
        lengths = {0xC4: ">B", 0xC5: ">H", 0xC6: ">I", 0xD9: ">B", 0xDA: ">H", 0xDB: ">I",
                   0xDC: ">H", 0xDD: ">I", 0xDE: ">H", 0xDF: ">I"}
        if b in lengths:
            n = self._unpack(lengths[b])
            if b <= 0xC6:
                return self._take(n)
            if b <= 0xDB:
                return self._take(n).decode("utf-8", errors="replace")
            if b <= 0xDD:
                return [self.value() for _ in range(n)]
            return self._map(n)
        raise ValueError(f"unsupported msgpack type byte 0x{b:02x}")

    def _map(self, n: int) -> dict:
        return {self.value(): self.value() for _ in range(n)}


def msgpack_decode(data: bytes):
    reader = _MsgPack(data)
    return reader.value()


def _notes(section: bytes):
    """(name, type, desc) of each ELF note of a SHT_NOTE section (4-byte aligned, as in AMDGPU objects)."""
    offset = 0
    while offset + 12 <= len(section):
        namesz, descsz, kind = struct.unpack_from("<III", section, offset)
        offset += 12
        name = section[offset:offset + namesz].rstrip(b"\0").decode("ascii", errors="replace")
        offset += (namesz + 3) & ~3
        yield name, kind, section[offset:offset + descsz]
        offset += (descsz + 3) & ~3


def _code_objects(binary: bytes) -> list[bytes]:
    if is_offload_bundle(binary):
        return [entry for triple, entry in unbundle(binary).items() if "amdgcn" in triple and entry]
    return [binary]


def code_object_metadata(binary: bytes) -> dict:
    """The msgpack metadata of an AMDGPU code object (or of the first one in an offload bundle):
    `amdhsa.version`, `amdhsa.target`, `amdhsa.kernels`."""
    for code_object in _code_objects(binary):
        if elf_machine(code_object) != EM_AMDGPU:
            raise ValueError("not an AMDGPU code object: the ELF machine is not EM_AMDGPU")
        for section in elf_sections(code_object):
            if section.kind != SHT_NOTE:
                continue
            for name, kind, desc in _notes(section.data(code_object)):
                if name == "AMDGPU" and kind == NT_AMDGPU_METADATA:
                    return msgpack_decode(desc)
    raise ValueError("no AMDGPU metadata note (code object v3 or later) in the binary")


def code_object_resources(binary: bytes) -> list[KernelResources]:
    """The resources of every kernel of an AMDGPU code object, from its metadata note."""
    found = []
    for kernel in code_object_metadata(binary).get("amdhsa.kernels", []):
        found.append(KernelResources(
            symbol=kernel[".name"],
            registers=kernel.get(".vgpr_count", 0),
            stack_bytes=kernel.get(".private_segment_fixed_size", 0),
            shared_bytes=kernel.get(".group_segment_fixed_size", 0),
            scalar_registers=kernel.get(".sgpr_count", 0),
            accumulation_registers=kernel.get(".agpr_count"),
            spilled_vgprs=kernel.get(".vgpr_spill_count"),
            spilled_sgprs=kernel.get(".sgpr_spill_count"),
            wave_size=kernel.get(".wavefront_size"),
        ))
    return found


def binary_resources(binary: bytes, log: str = "") -> list[KernelResources]:
    """Resources of a cubin or an AMDGPU code object (or offload bundle), whichever `binary` is."""
    if is_offload_bundle(binary) or elf_machine(binary) == EM_AMDGPU:
        return code_object_resources(binary)
    return cubin_resources(binary, log)
