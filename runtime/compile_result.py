"""The product of every compile wrapper."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompiledBinary:
    """A device binary and what made it.

    `binary` is a cubin (or NUL-terminated PTX for a `compute_XX` arch) for CUDA, an AMDGPU code object (ELF) for
    HIP. `log` is the compiler's log, often empty on success. `compiler_version` names the compiler precisely
    enough to key a disk cache.
    """

    binary: bytes
    log: str
    target: str  # "cuda" or "hip"
    arch: str
    compiler_version: str

    def __repr__(self) -> str:
        # The default repr would print the whole binary.
        return (
            f"CompiledBinary(target={self.target!r}, arch={self.arch!r}, {len(self.binary)} bytes, "
            f"compiler_version={self.compiler_version!r})"
        )
