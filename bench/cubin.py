"""Registers and stack frame of each kernel of a cubin, read from the cubin itself (no GPU, no cuobjdump).

A cubin's `.nv.info` section is a list of attributes; EIATTR_REGCOUNT (0x2f) gives a function's register
count and EIATTR_FRAME_SIZE (0x11) its stack frame (non-zero when it spills or keeps an array in local
memory), each as a (symbol index, value) pair. `nvcc -Xptxas -v` reports the same register counts.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")

EIFMT_SVAL = 4           # attribute with a 16-bit size and a payload; every other format is 4 bytes long
EIATTR_FRAME_SIZE = 0x11
EIATTR_REGCOUNT = 0x2F


@dataclass(frozen=True)
class Resources:
    registers: int
    frame_bytes: int = 0


def kernel_resources(cubin: bytes) -> dict[str, Resources]:
    """Registers and stack frame of every function of a cubin, by symbol name."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2 or cubin[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file (a cubin)")
    header = _HEADER.unpack_from(cubin)
    shoff, shentsize, shnum, shstrndx = header[6], header[11], header[12], header[13]
    sections = [_SECTION.unpack_from(cubin, shoff + k * shentsize) for k in range(shnum)]

    def section_name(offset: int) -> str:
        start = sections[shstrndx][4] + offset
        return cubin[start:cubin.index(b"\0", start)].decode()

    symbols: list[str] = []
    for sh in sections:
        if sh[1] == 2:  # SHT_SYMTAB
            strtab = sections[sh[6]]
            for offset in range(sh[4], sh[4] + sh[5], sh[9] or _SYMBOL.size):
                name = _SYMBOL.unpack_from(cubin, offset)[0]
                start = strtab[4] + name
                symbols.append(cubin[start:cubin.index(b"\0", start)].decode())
    registers: dict[str, int] = {}
    frames: dict[str, int] = {}
    for sh in sections:
        if section_name(sh[0]) != ".nv.info":
            continue
        blob = cubin[sh[4]:sh[4] + sh[5]]
        pos = 0
        while pos + 4 <= len(blob):
            fmt, attr = blob[pos], blob[pos + 1]
            if fmt != EIFMT_SVAL:
                pos += 4
                continue
            size = struct.unpack_from("<H", blob, pos + 2)[0]
            if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and size == 8:
                index, value = struct.unpack_from("<II", blob, pos + 4)
                if index < len(symbols):
                    (registers if attr == EIATTR_REGCOUNT else frames)[symbols[index]] = value
            pos += 4 + size
    return {name: Resources(count, frames.get(name, 0)) for name, count in registers.items()}


NOP = 0x7918        # the low 64-bit word of an sm_70+ NOP, which pads each function's code to 128 bytes
INSTRUCTION_BYTES = 16  # every Volta-and-later SASS instruction is 128 bits


def sass_instructions(cubin: bytes) -> dict[str, int]:
    """The number of SASS instructions of every function of a cubin, by symbol name: its `.text.<name>`
    section in 16-byte instructions, without the NOPs that pad the section at its end (the count
    `cuobjdump -sass` lists, less that padding)."""
    from rs2gpu.runtime.elf import elf_sections

    counts = {}
    for section in elf_sections(cubin):
        if not section.name.startswith(".text."):
            continue
        code = section.data(cubin)
        words = [struct.unpack_from("<Q", code, k)[0] for k in range(0, len(code), INSTRUCTION_BYTES)]
        while words and words[-1] == NOP:
            words.pop()
        counts[section.name[len(".text."):]] = len(words)
    return counts
