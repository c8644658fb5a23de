"""Inputs for the benchmark: random data on the device (cupy) or the host (numpy), poisoned outputs, the
RAJAPerf mesh domains, and pointers into arrays for the hand-written kernels' arguments.

Inputs are random and non-zero (zeros hide unwritten outputs and wrong indexing, and can run faster than
real data); outputs start as a NaN with a payload no computation produces, so an element that neither
side writes stays recognisable and any element only one side writes shows up as a difference.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

POISON_F64 = 0x7FF8_DEAD_BEEF_0BAD   # a quiet NaN with a payload
POISON_I64 = -0x2152_4110_DEAD_0BAD
POISON_I32 = -0x2152_4111


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class Rand:
    """Random arrays in `xp` (numpy or cupy) from one seed; scalars from a host generator."""

    def __init__(self, xp, seed: int) -> None:
        self.xp = xp
        self.state = xp.random.RandomState(seed)
        self.host = np.random.default_rng(seed)

    def uniform(self, n: int, lo: float = 0.5, hi: float = 1.5):
        """Doubles in [lo, hi)."""
        return self.state.uniform(lo, hi, int(n))

    def signed(self, n: int, lo: float = 0.5, hi: float = 1.5):
        """Doubles with magnitude in [lo, hi) and a random sign."""
        magnitude = self.state.uniform(lo, hi, int(n))
        return magnitude * (self.state.randint(0, 2, int(n)) * 2 - 1)

    def plus_minus_one(self, n: int):
        """int32 values of ±1."""
        return (self.state.randint(0, 2, int(n)) * 2 - 1).astype(self.xp.int32)

    def scalar(self, lo: float = 0.5, hi: float = 1.5) -> float:
        return float(self.host.uniform(lo, hi))

    def index(self, n: int) -> int:
        return int(self.host.integers(0, n))

    def poison(self, n: int, dtype=np.float64):
        """An output array of `n` elements filled with the poison pattern of its type."""
        xp = self.xp
        dtype = np.dtype(dtype)
        if dtype == np.float64:
            out = xp.empty(int(n), dtype=np.uint64)
            out.fill(np.uint64(POISON_F64))
            return out.view(np.float64)
        out = xp.empty(int(n), dtype=dtype)
        out.fill(POISON_I64 if dtype.itemsize == 8 else POISON_I32)
        return out


def address(array) -> int:
    """The address of the first element of a numpy or cupy array."""
    return array.data.ptr if hasattr(array.data, "ptr") else array.ctypes.data


def ptr(array, offset: int = 0) -> np.uint64:
    """The address of element `offset` of a numpy or cupy array (which may lie outside it, as RAJAPerf's
    pre-offset node pointers do), as a 64-bit kernel argument."""
    return np.uint64((address(array) + offset * array.itemsize) % (1 << 64))


@dataclass(frozen=True)
class Domain:
    """RAJAPerf's ADomain box mesh: `r` real nodes per dimension, two ghost node layers below and one
    above, node/zone (i, j, k) at i + j·jp + k·kp."""

    ndims: int
    r: int

    @property
    def jp(self) -> int:
        return self.r + 3

    @property
    def kp(self) -> int:
        return (self.r + 3) ** 2 if self.ndims == 3 else 0

    @property
    def nnalls(self) -> int:
        return (self.r + 3) ** self.ndims

    @property
    def n_real_zones(self) -> int:
        return (self.r - 1) ** self.ndims

    @property
    def n_real_nodes(self) -> int:
        return self.r ** self.ndims

    @property
    def fpz(self) -> int:
        """The first zone of the linear zone range [fpz, lpz]."""
        return self.kp + self.jp + 1

    @property
    def lpz(self) -> int:
        top = self.r + 1
        return top * self.kp + top * self.jp + top

    def real_zones(self, xp):
        """Zone indices i + j·jp + k·kp for i, j, k in [2, r], i fastest, as int64."""
        span = xp.arange(2, self.r + 1, dtype=np.int64)
        if self.ndims == 2:
            return (span[None, :] + span[:, None] * self.jp).reshape(-1)
        return (span[None, None, :] + span[None, :, None] * self.jp + span[:, None, None] * self.kp).reshape(-1)

    def node_coordinates(self, xp):
        """(i, j[, k]) of every node, as int64 arrays of nnalls elements."""
        span = xp.arange(self.r + 3, dtype=np.int64)
        if self.ndims == 2:
            j, i = xp.meshgrid(span, span, indexing="ij")
            return i.reshape(-1), j.reshape(-1)
        k, j, i = xp.meshgrid(span, span, span, indexing="ij")
        return i.reshape(-1), j.reshape(-1), k.reshape(-1)


def domain3d(target: int) -> Domain:
    """RAJAPerf's 3D sizing: r = (cbrt(N) + 1) + cbrt(3) - 1, truncated (101 for 1e6)."""
    return Domain(3, int(((_cbrt(target) + 1) + _cbrt(3)) - 1))


def domain2d(target: int) -> Domain:
    """RAJAPerf's 2D sizing: r = (sqrt(N) + 1) + sqrt(2) - 1, truncated (1001 for 1e6)."""
    return Domain(2, int(((math.sqrt(target) + 1) + math.sqrt(2)) - 1))


def square_side(target: int) -> int:
    """RAJAPerf's n = sqrt(N) + sqrt(2) - 1, truncated (1000 for 1e6)."""
    return int(math.sqrt(target) + math.sqrt(2) - 1)


def cube_side(target: int) -> int:
    """RAJAPerf's n = cbrt(N) + cbrt(3) - 1, truncated (100 for 1e6)."""
    return int(_cbrt(target) + _cbrt(3) - 1)


def _cbrt(x: float) -> float:
    root = round(x ** (1 / 3))
    return float(root) if root ** 3 == x else x ** (1 / 3)
