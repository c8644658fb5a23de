"""Triton kernels for the user-style suite's cases that no library routine computes in one pass: the 2-D and 3-D
stencils, written as a Triton user writes them (one program per run of BLOCK points along a row, the
neighbours loaded with the same mask). Imported only where Triton imports; they run on torch tensors, on
torch's current stream.
"""
from __future__ import annotations

import triton
import triton.language as tl

BLOCK = 512


@triton.jit
def stencil_2d(out_ptr, u_ptr, cols, w, BLOCK: tl.constexpr):
    row = tl.program_id(1) + 1
    col = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + 1
    mask = col < cols - 1
    c = row * cols + col
    centre = tl.load(u_ptr + c, mask=mask)
    north = tl.load(u_ptr + c - cols, mask=mask)
    south = tl.load(u_ptr + c + cols, mask=mask)
    west = tl.load(u_ptr + c - 1, mask=mask)
    east = tl.load(u_ptr + c + 1, mask=mask)
    tl.store(out_ptr + c, centre + w * (north + south + west + east - 4.0 * centre), mask=mask)


@triton.jit
def stencil_3d(out_ptr, u_ptr, ny, nx, w, BLOCK: tl.constexpr):
    j = tl.program_id(1) + 1
    k = tl.program_id(2) + 1
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + 1
    mask = i < nx - 1
    plane = ny * nx
    c = k * plane + j * nx + i
    centre = tl.load(u_ptr + c, mask=mask)
    total = tl.load(u_ptr + c - plane, mask=mask) + tl.load(u_ptr + c + plane, mask=mask)
    total += tl.load(u_ptr + c - nx, mask=mask) + tl.load(u_ptr + c + nx, mask=mask)
    total += tl.load(u_ptr + c - 1, mask=mask) + tl.load(u_ptr + c + 1, mask=mask)
    tl.store(out_ptr + c, centre + w * (total - 6.0 * centre), mask=mask)


def stencil_2d_call(v: dict, d: dict):
    out, u, rows, cols = v["alt_out"], v["u"], d["rows"], d["cols"]
    grid = (triton.cdiv(cols - 2, BLOCK), rows - 2)
    return lambda: (stencil_2d[grid](out, u, cols, d["w"], BLOCK=BLOCK), out)[1]


def stencil_3d_call(v: dict, d: dict):
    out, u = v["alt_out"], v["u"]
    grid = (triton.cdiv(d["nx"] - 2, BLOCK), d["ny"] - 2, d["nz"] - 2)
    return lambda: (stencil_3d[grid](out, u, d["ny"], d["nx"], d["w"], BLOCK=BLOCK), out)[1]
