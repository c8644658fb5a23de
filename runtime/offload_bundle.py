"""Reader for clang offload bundles (`clang-offload-bundler` output), so no bundler tool is needed.

Layout (all integers little-endian uint64): the magic `__CLANG_OFFLOAD_BUNDLE__`, the number of entries, then per
entry its offset, size, triple length and triple (e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a`).
"""

from __future__ import annotations

import struct

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
# ROCm >= 6 may compress bundles (clang-offload-bundler --compress); those start with this magic instead.
_COMPRESSED_MAGIC = b"CCOB"


def is_offload_bundle(data: bytes) -> bool:
    return data.startswith(MAGIC)


def unbundle(data: bytes) -> dict[str, bytes]:
    """Map each bundle entry's triple to its bytes; the host entry of a device-only bundle is empty."""
    if data.startswith(_COMPRESSED_MAGIC):
        raise ValueError("compressed offload bundle: unpack it with `clang-offload-bundler --unbundle` first")
    if not is_offload_bundle(data):
        raise ValueError("not a clang offload bundle")
    try:
        (count,) = struct.unpack_from("<Q", data, len(MAGIC))
        cursor = len(MAGIC) + 8
        entries = {}
        for _ in range(count):
            offset, size, triple_len = struct.unpack_from("<QQQ", data, cursor)
            cursor += 24
            triple = data[cursor : cursor + triple_len].decode("ascii")
            cursor += triple_len
            if offset + size > len(data):
                raise ValueError(f"truncated offload bundle: entry {triple!r} lies past its end")
            entries[triple] = data[offset : offset + size]
    except struct.error as exc:
        raise ValueError("truncated offload bundle header") from exc
    return entries
