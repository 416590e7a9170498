"""Lane maps as PNG images (`emu lanes --format png`), for a README or an issue where SVG does not
show: the matrix grid, each cell in its lane's color (stripes where several lanes hold it, a red
outline where a --diff differs), labelled "lane.element" with row and column numbers, in a 3x5
pixel font drawn at twice its size. Written with zlib alone (no imaging library)."""
from __future__ import annotations

import struct
import zlib

import numpy as np

# 3x5 glyphs, rows top to bottom, 3 bits each (4 = left column)
_FONT = {
    "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7), "2": (7, 1, 7, 4, 7), "3": (7, 1, 7, 1, 7),
    "4": (5, 5, 7, 1, 1), "5": (7, 4, 7, 1, 7), "6": (7, 4, 7, 5, 7), "7": (7, 1, 1, 2, 2),
    "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 7), ".": (0, 0, 0, 0, 2), "/": (1, 1, 2, 4, 4),
    "*": (0, 5, 2, 5, 0), "?": (7, 1, 2, 0, 2), "-": (0, 0, 7, 0, 0), " ": (0, 0, 0, 0, 0),
}
S = 2                   # pixels per font pixel
GLYPH_W, GLYPH_H = 4 * S, 5 * S
CELL_H = GLYPH_H + 8
INK = (40, 40, 40)


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


def _text(img, x: int, y: int, s: str, color=INK) -> None:
    for ch in s:
        for row, bits in enumerate(_FONT.get(ch, _FONT["?"])):
            for col in range(3):
                if bits >> (2 - col) & 1:
                    img[y + row * S:y + (row + 1) * S, x + col * S:x + (col + 1) * S] = color
        x += GLYPH_W


def _outline(img, x, y, w, h, color) -> None:
    img[y, x:x + w] = img[y + h - 1, x:x + w] = color
    img[y:y + h, x] = img[y:y + h, x + w - 1] = color


def draw(v, lane_color, marked=frozenset()) -> np.ndarray:
    """The grid of MapView `v` (emu/trace/lanes.py) as an RGB array; lane_color(lane, n) -> '#rrggbb'."""
    labels = {rc: v.label(rc) + ("*" if rc in marked else "") for rc in v.owners_cache}
    cw = max(len(s) for s in list(labels.values()) + [str(v.cols - 1)]) * GLYPH_W + 8
    left = len(str(v.rows - 1)) * GLYPH_W + 8
    top = CELL_H
    img = np.full((top + v.rows * CELL_H + 1, left + v.cols * cw + 1, 3), 255, np.uint8)
    for c in range(v.cols):
        _text(img, left + c * cw + (cw - len(str(c)) * GLYPH_W) // 2, 4, str(c))
    for r in range(v.rows):
        _text(img, 2, top + r * CELL_H + 4, str(r))
        for c in range(v.cols):
            x, y = left + c * cw, top + r * CELL_H
            own = v.owners_cache.get((r, c), [])
            for j, (lane, _) in enumerate(own):
                a, b = x + j * cw // len(own), x + (j + 1) * cw // len(own)
                img[y:y + CELL_H, a:b] = _rgb(lane_color(lane, v.subgroup_size))
            _outline(img, x, y, cw + 1, CELL_H + 1, (255, 255, 255))
            if (r, c) in marked:
                _outline(img, x, y, cw + 1, CELL_H + 1, (220, 30, 30))
            lab = labels.get((r, c), "?")
            _text(img, x + (cw - len(lab) * GLYPH_W) // 2 + 1, y + 4, lab)
    return img


def encode(img: np.ndarray) -> bytes:
    """A PNG file (8-bit RGB, no interlace) of an (H, W, 3) uint8 array."""
    h, w, _ = img.shape

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = np.concatenate([np.zeros((h, 1), np.uint8), img.reshape(h, w * 3)], axis=1)   # filter 0 a row
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9)) + chunk(b"IEND", b""))


def render_png(v, lane_color) -> bytes:
    return encode(draw(v, lane_color))


def render_png_diff(v1, v2, differing, lane_color) -> bytes:
    """Both grids side by side, the cells in `differing` outlined in red."""
    d = set(differing)
    a, b = draw(v1, lane_color, d), draw(v2, lane_color, d)
    h = max(a.shape[0], b.shape[0])
    gap = np.full((h, 24, 3), 255, np.uint8)
    pad = lambda x: np.concatenate([x, np.full((h - x.shape[0], x.shape[1], 3), 255, np.uint8)])  # noqa: E731
    return encode(np.concatenate([pad(a), gap, pad(b)], axis=1))
