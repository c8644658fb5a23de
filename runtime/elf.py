"""Just enough of ELF64 to list the symbols of a cubin or an AMDGPU code object, with no external tool."""

from __future__ import annotations

import struct
from typing import NamedTuple

EM_CUDA = 190
EM_AMDGPU = 224

STT_OBJECT = 1
STT_FUNC = 2

_SHT_SYMTAB = 2
SHT_NOTE = 7
SHT_NOBITS = 8
_SHT_DYNSYM = 11

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")


class ElfSymbol(NamedTuple):
    name: str
    kind: int  # STT_*
    bind: int  # STB_*
    other: int  # st_other: visibility, plus vendor flags such as CUDA's entry-point bit
    section: int
    value: int
    size: int


class _Section(NamedTuple):
    kind: int
    offset: int
    size: int
    link: int
    entsize: int


def _check(data: bytes) -> None:
    if len(data) < _HEADER.size or data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ValueError("only little-endian 64-bit ELF files are supported")


def elf_machine(data: bytes) -> int:
    """The e_machine field: EM_CUDA for a cubin, EM_AMDGPU for an AMD code object."""
    _check(data)
    return _HEADER.unpack_from(data)[2]


def _sections(data: bytes) -> list[_Section]:
    header = _HEADER.unpack_from(data)
    shoff, shentsize, shnum = header[6], header[11], header[12]
    if shoff + shentsize * shnum > len(data):
        raise ValueError("truncated ELF file: the section table lies past its end")
    sections = []
    for i in range(shnum):
        fields = _SECTION.unpack_from(data, shoff + i * shentsize)
        sections.append(_Section(kind=fields[1], offset=fields[4], size=fields[5], link=fields[6], entsize=fields[9]))
    return sections


class ElfSection(NamedTuple):
    name: str
    kind: int  # sh_type: SHT_NOTE, SHT_NOBITS, vendor types such as CUDA's .nv.info (0x70000000)
    flags: int
    offset: int
    size: int
    link: int
    info: int

    def data(self, elf: bytes) -> bytes:
        """The section's bytes (empty for SHT_NOBITS sections such as .nv.shared.*, which only have a size)."""
        return b"" if self.kind == SHT_NOBITS else elf[self.offset:self.offset + self.size]


def elf_sections(data: bytes) -> list[ElfSection]:
    """Every section, named from the section-header string table."""
    _check(data)
    sections = _sections(data)
    header = _HEADER.unpack_from(data)
    names = sections[header[13]] if header[13] < len(sections) else None
    found = []
    for i in range(len(sections)):
        fields = _SECTION.unpack_from(data, header[6] + i * header[11])
        name = _name_at(data, names, fields[0]) if names is not None else ""
        found.append(ElfSection(name, fields[1], fields[2], fields[4], fields[5], fields[6], fields[7]))
    return found


def _name_at(data: bytes, strtab: _Section, offset: int) -> str:
    start = strtab.offset + offset
    end = data.index(b"\0", start, strtab.offset + strtab.size)
    return data[start:end].decode("utf-8", errors="replace")


def elf_symbols(data: bytes) -> list[ElfSymbol]:
    """All symbols of the static symbol table, or of the dynamic one when the file is stripped."""
    _check(data)
    sections = _sections(data)
    tables = [s for s in sections if s.kind == _SHT_SYMTAB] or [s for s in sections if s.kind == _SHT_DYNSYM]
    symbols = []
    for table in tables:
        strtab = sections[table.link]
        entsize = table.entsize or _SYMBOL.size
        # Entry 0 is the reserved null symbol.
        for offset in range(table.offset + entsize, table.offset + table.size, entsize):
            name, info, other, shndx, value, size = _SYMBOL.unpack_from(data, offset)
            symbols.append(ElfSymbol(_name_at(data, strtab, name), info & 0xF, info >> 4, other, shndx, value, size))
    return symbols
