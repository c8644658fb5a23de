"""A content-addressed disk cache for compiled binaries, shared between processes.

Entries are written to a temporary file and renamed into place, so concurrent processes never read a
partial binary; each entry ends with the SHA-256 of its data, so a corrupt or unreadable entry is
treated as a miss.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable

_DIGEST_SIZE = hashlib.sha256().digest_size


def cache_key(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def replace_atomically(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it onto `path`: a process reading
    `path` meanwhile sees the old file or the new one, never a partial write."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class BinaryCache:
    def __init__(self, root: Path | None) -> None:
        self.root = Path(root) if root is not None else None
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> bytes | None:
        if self.root is None:
            self.misses += 1
            return None
        try:
            raw = self._path(key).read_bytes()
        except OSError:
            raw = b""
        data, digest = raw[:-_DIGEST_SIZE], raw[-_DIGEST_SIZE:]
        if len(raw) < _DIGEST_SIZE or hashlib.sha256(data).digest() != digest:
            self.misses += 1
            return None
        self.hits += 1
        return data

    def put(self, key: str, data: bytes) -> None:
        if self.root is None:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(path, data + hashlib.sha256(data).digest())
        except OSError:
            pass  # a read-only or full cache directory costs a recompile next time, nothing more

    def get_or_make(self, key: str, make: Callable[[], bytes]) -> tuple[bytes, bool]:
        """The entry under `key`, or `make()`'s bytes stored there; with whether `make` ran."""
        data = self.get(key)
        if data is not None:
            return data, False
        data = make()
        self.put(key, data)
        return data, True
