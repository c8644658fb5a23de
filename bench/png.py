"""A PNG writer and a small bar chart drawn with numpy, for machines without matplotlib."""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np

# A 5×7 bitmap font: each glyph is 7 rows of 5 bits, most significant bit on the left.
_FONT = {
    " ": "00000 00000 00000 00000 00000 00000 00000",
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11110 00001 00001 01110 00001 00001 11110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 11111 10001 10001 10001", "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110", "D": "11110 10001 10001 10001 10001 10001 11110",
    "E": "11111 10000 10000 11110 10000 10000 11111", "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111", "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110", "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001", "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001", "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110", "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101", "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110", "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110", "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010", "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 01010 00100 00100 00100 00100", "Z": "11111 00001 00010 00100 01000 10000 11111",
    "_": "00000 00000 00000 00000 00000 00000 11111", ".": "00000 00000 00000 00000 00000 01100 01100",
    "-": "00000 00000 00000 11111 00000 00000 00000", "/": "00001 00010 00010 00100 01000 01000 10000",
    "(": "00010 00100 01000 01000 01000 00100 00010", ")": "01000 00100 00010 00010 00010 00100 01000",
    ":": "00000 01100 01100 00000 01100 01100 00000", ",": "00000 00000 00000 00000 01100 00100 01000",
    "=": "00000 00000 11111 00000 11111 00000 00000", "%": "11001 11010 00010 00100 01000 01011 10011",
    "+": "00000 00100 00100 11111 00100 00100 00000", "?": "01110 10001 00001 00010 00100 00000 00100",
}
_GLYPHS = {c: np.array([[bit == "1" for bit in row] for row in rows.split()], dtype=bool) for c, rows in _FONT.items()}

WHITE, BLACK, GREY = (255, 255, 255), (0, 0, 0), (200, 200, 200)
COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189)]


def write_png(pixels: np.ndarray) -> bytes:
    """PNG bytes of an (height, width, 3) uint8 RGB image."""
    height, width, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def text_bitmap(text: str) -> np.ndarray:
    """A (7, 6·len) boolean bitmap of the text (unknown characters as '?')."""
    glyphs = [_GLYPHS.get(c.upper(), _GLYPHS["?"]) for c in text]
    out = np.zeros((7, 6 * max(1, len(glyphs))), dtype=bool)
    for k, g in enumerate(glyphs):
        out[:, 6 * k:6 * k + 5] = g
    return out


def _blit(img: np.ndarray, bitmap: np.ndarray, x: int, y: int, colour) -> None:
    h, w = bitmap.shape
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(img.shape[1], x + w), min(img.shape[0], y + h)
    if x1 <= x0 or y1 <= y0:
        return
    region = bitmap[y0 - y:y1 - y, x0 - x:x1 - x]
    img[y0:y1, x0:x1][region] = colour


def bar_chart_png(labels: list[str], series: dict[str, list[float | None]], title: str) -> bytes:
    """Bars of ratios per label on a log scale, starting from a black line at 1.0; one colour per series."""
    values = [v for vs in series.values() for v in vs if v]
    lo = min([0.5] + values)
    hi = max([2.0] + values)
    lo_exp, hi_exp = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    group = max(12, 6 * max(1, len(series)) + 4)
    left, right, top = 60, 20, 40
    plot_h = 320
    label_h = 6 * max([len(s) for s in labels] + [1]) + 10
    width = left + right + group * max(1, len(labels))
    height = top + plot_h + label_h + 20
    img = np.full((height, width, 3), 255, dtype=np.uint8)

    def y_of(v: float) -> int:
        return top + int(round((hi_exp - math.log2(v)) / (hi_exp - lo_exp) * plot_h))

    for e in range(lo_exp, hi_exp + 1):
        y = y_of(2.0 ** e)
        img[y, left:width - right] = GREY
        _blit(img, text_bitmap(f"{2.0 ** e:g}"), 4, y - 3, BLACK)
    bar_w = max(2, (group - 4) // max(1, len(series)))
    for s, vs in enumerate(series.values()):
        for k, v in enumerate(vs):
            if not v:
                continue
            x = left + k * group + 2 + s * bar_w
            y0, y1 = sorted((y_of(1.0), y_of(min(max(v, 2.0 ** lo_exp), 2.0 ** hi_exp))))
            img[y0:max(y1, y0 + 1), x:x + bar_w - 1] = COLOURS[s % len(COLOURS)]
    one = y_of(1.0)
    img[one - 1:one + 1, left:width - right] = BLACK
    img[top:top + plot_h + 1, left] = BLACK
    for k, label in enumerate(labels):
        bitmap = np.rot90(text_bitmap(label))   # read bottom to top
        _blit(img, bitmap, left + k * group + group // 2 - 3, top + plot_h + 6, BLACK)
    _blit(img, text_bitmap(title[:max(1, (width - 10) // 6)]), 8, 8, BLACK)
    x = 8
    for s, name in enumerate(series):
        img[24:31, x:x + 7] = COLOURS[s % len(COLOURS)]
        _blit(img, text_bitmap(name), x + 10, 24, BLACK)
        x += 10 + 6 * len(name) + 16
    return write_png(img.repeat(2, axis=0).repeat(2, axis=1))
