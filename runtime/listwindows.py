"""The windows of index-list values whose reads through the list are in bounds, computed on the host for
each call, so that the loop checks all reads of one slice through a list value in one comparison.

A loop that writes `out[list[ii]]` and reads `x[scale * list[ii] + o_k]` (offsets `o_k` the same in every
iteration) reads, for a list value v, at (b + o_k) mod 2^64 with b = scale * v mod 2^64, as Rust's wrapping
usize arithmetic does. Read k is in bounds exactly for the b on the arc [-o_k, -o_k + len) of the circle
of integers modulo 2^64. Arcs of one length `len` (at most 2^63) meet in one arc when their starts all lie
on an arc shorter than `len`, from the last start to the first start + len, and nowhere otherwise. So all
reads are in bounds exactly when (b - low) mod 2^64 < width (`rs2gpu_in_window`), for the (low, width)
below; width 0 means that every value leaves the slice somewhere.
"""
from __future__ import annotations

WORD = 1 << 64


def read_window(offsets: list[int], length: int) -> tuple[int, int]:
    """(low, width) of the bases b for which every b + offset (mod 2^64) is below `length`."""
    starts = sorted({-offset % WORD for offset in offsets})
    gaps = [(starts[(k + 1) % len(starts)] - starts[k]) % WORD or WORD for k in range(len(starts))]
    widest = max(range(len(gaps)), key=gaps.__getitem__)
    spread = WORD - gaps[widest]  # the shortest arc holding every start: it ends at starts[widest]
    if spread >= length:
        return 0, 0
    return starts[widest], length - spread
