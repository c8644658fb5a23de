"""Verified index lists: a list of indices checked once, so that the kernels reading through it need not
check it in every call.

A loop that reads or writes through an index list (`x[list[ii] + jp]`, `out[list[ii]] = ...`) can only
be proved safe from the list's values, which the host does not have when the list is device memory: by
default the loop checks them itself and the call waits for the verdict (see `emit.verify`). An
`IndexList` takes a private copy of the values, computes their least and greatest value, whether they
rise or fall strictly and whether they are distinct, and never changes. A call given one proves the
loop's checks on the host from those facts, before the launch: every index read or written through the
list stays in bounds when the least and greatest values' indices do, and distinct values write distinct
elements (a loop writes a slice through a list at one index `scale * value + offset` per iteration).
The launch then runs the loop without those checks, and a call on device arrays that has nothing else
to wait for returns at once. When the facts do not clear a check (a value out of range, a list out of
values) the call runs the checking loop, which finds Rust's panic as for a plain array.

A verified list is read-only: it can be passed to `&[T]` parameters only.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ListFacts:
    """What a call may assume of a verified list: its least and greatest value (0 and -1 for an empty list),
    its order: "rising" or "falling" when each value is strictly above or below the one before it (a
    list of fewer than two values rises), else None, and whether no value repeats."""

    low: int
    high: int
    order: str | None
    distinct: bool


class IndexList:
    """A read-only list of integer indices whose range and order were verified once (see the module text).

    `IndexList(values)` copies `values` (a one-dimensional integer numpy array, cupy array or torch tensor,
    or a sequence of ints with `dtype` given); later changes to `values` do not reach it. `low`, `high`,
    `order` and `distinct` are its `ListFacts`; `numpy()` returns a copy of the values."""

    def __init__(self, values, dtype=None) -> None:
        import numpy as np

        host = _host_copy(values, dtype)
        if host.ndim != 1:
            raise ValueError(f"an IndexList holds a one-dimensional list of indices, got shape {host.shape}")
        if host.dtype.kind not in "iu":
            raise TypeError(f"an IndexList holds integers, got dtype {host.dtype}")
        host = np.ascontiguousarray(host)
        host.setflags(write=False)
        self._values = host
        self.facts = _facts(host)
        self._device: dict[tuple[int, int], tuple] = {}  # (id of the backend, device) → (backend, its copy there)
        self._lock = threading.Lock()

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def low(self) -> int:
        return self.facts.low

    @property
    def high(self) -> int:
        return self.facts.high

    @property
    def order(self) -> str | None:
        return self.facts.order

    @property
    def distinct(self) -> bool:
        return self.facts.distinct

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        shown = f"{self.low}..={self.high}" if len(self) else "empty"
        repeats = "distinct" if self.distinct else "with repeats"
        return f"IndexList({len(self)} values of {self.dtype}, {shown}, order {self.order}, {repeats})"

    def numpy(self):
        """A writable copy of the values."""
        return self._values.copy()

    def host_values(self):
        """The values in host memory (read-only), as the runtime passes them to a kernel."""
        return self._values

    def device_pointer(self, backend, ordinal: int) -> int:
        """The address of the list's copy in `backend`'s memory on device `ordinal`, uploaded at first use
        and kept as long as the list."""
        key = (id(backend), ordinal)
        with self._lock:
            kept = self._device.get(key)
            if kept is None:
                buffer = backend.alloc(max(self._values.nbytes, 1))
                if self._values.nbytes:
                    backend.upload(buffer.ptr, self._values)
                    backend.synchronize()  # before any stream of the device reads it
                kept = self._device[key] = (backend, buffer)  # the backend too, so that its id stays its own
            return kept[1].ptr


def _host_copy(values, dtype):
    """The values as a new numpy array in host memory."""
    import numpy as np

    if hasattr(values, "__cuda_array_interface__"):
        if hasattr(values, "get"):  # cupy
            return values.get()
        if hasattr(values, "cpu"):  # torch
            return values.detach().cpu().numpy().copy()
        raise TypeError(f"an IndexList copies device arrays through cupy or torch; got {type(values).__name__}")
    if hasattr(values, "detach") and hasattr(values, "numpy"):  # a torch tensor in host memory
        return values.detach().numpy().copy()
    if isinstance(values, np.ndarray):
        return values.copy()
    if dtype is None:
        raise TypeError("an IndexList of a Python sequence needs its element type: IndexList(values, dtype=...)")
    return np.array(values, dtype=dtype)


def _facts(values) -> ListFacts:
    import numpy as np

    if len(values) == 0:
        return ListFacts(0, -1, "rising", True)
    low, high = int(values.min()), int(values.max())
    if len(values) == 1 or bool(np.all(values[1:] > values[:-1])):
        return ListFacts(low, high, "rising", True)
    if bool(np.all(values[1:] < values[:-1])):
        return ListFacts(low, high, "falling", True)
    return ListFacts(low, high, None, _distinct(values, low, high))


def _distinct(values, low: int, high: int) -> bool:
    """Whether no value repeats: one count per value of the range where the range is not much longer than
    the list (a permutation's), else the sorted values."""
    import numpy as np

    if high - low < 4 * len(values):
        offsets = (values - values.dtype.type(low)).astype(np.int64)  # in the list's type: no overflow
        return int(np.bincount(offsets).max()) == 1
    ordered = np.sort(values)
    return not bool(np.any(ordered[1:] == ordered[:-1]))
