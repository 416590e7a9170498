"""GL_NV_cooperative_matrix2's tensor addressing (emu/memory/tensor.py), element by element against
indices worked out by hand: the clamp modes, block sizes, a view with its own dimensions and
strides, and the two ways a layout addresses nothing."""
from __future__ import annotations

import numpy as np
import pytest

from emu.memory import tensor as T


def layout(dims, clamp=T.CONSTANT, block=None, stride=None, offset=None, span=None, value=0):
    d = len(dims)
    block = block or [1] * d
    if stride is None:                    # setTensorLayoutDimensionNV's packed strides, in blocks
        stride, s = [0] * d, 1
        for k in range(d - 1, -1, -1):
            stride[k] = s
            s *= -(-dims[k] // block[k])
    offset = [x & 0xFFFFFFFF for x in (offset or [0] * d)]
    return np.array([[clamp] + block + list(dims) + stride + offset + list(span or dims) + [value]], np.int64)


def addr(lay, rows, cols, ncols, view=None, store=False):
    r, c = np.array([rows]), np.array([cols])
    return T.element_index(lay, view, r, c, ncols, store)


def test_a_slice_of_a_row_major_matrix():
    lay = layout([10, 12], offset=[2, 3], span=[4, 5])
    idx, acc, clamped, undef = addr(lay, [0, 1, 3], [0, 4, 2], 5)
    assert idx.tolist() == [[2 * 12 + 3, 3 * 12 + 7, 5 * 12 + 5]]
    assert acc.all() and not clamped.any() and not undef.any()


@pytest.mark.parametrize("mode,want", [(T.CLAMP_TO_EDGE, [0, 0, 4, 4]), (T.REPEAT, [4, 0, 0, 2]),
                                       (T.MIRROR_REPEAT, [1, 0, 3, 1])])
def test_clamp_modes_move_the_coordinate(mode, want):
    # a 1 x 5 row, columns -1, 0, 5, 7 (offset -1, span 9)
    lay = layout([1, 5], clamp=mode, offset=[0, -1], span=[1, 9])
    idx, acc, clamped, undef = addr(lay, [0, 0, 0, 0], [0, 1, 6, 8], 9)
    assert idx.tolist() == [want] and not clamped.any() and not undef.any()


def test_constant_and_undefined_modes_outside():
    lay = layout([2, 2], clamp=T.CONSTANT, span=[3, 2])
    _, _, clamped, undef = addr(lay, [0, 2], [1, 1], 2)
    assert clamped.tolist() == [[False, True]] and not undef.any()
    lay = layout([2, 2], clamp=T.UNDEFINED, span=[3, 2])
    _, _, clamped, undef = addr(lay, [0, 2], [1, 1], 2)
    assert undef.tolist() == [[False, True]] and not clamped.any()
    # stores outside drop in every mode but Undefined
    lay = layout([2, 2], clamp=T.REPEAT, span=[3, 2])
    _, _, dropped, _ = addr(lay, [0, 2], [1, 1], 2, store=True)
    assert dropped.tolist() == [[False, True]]


def test_block_sizes_count_strides_in_blocks():
    # 4 x 64 elements in blocks of 1 x 32: 2 blocks a row; element (3, 40) is in block (3, 1)
    lay = layout([4, 64], block=[1, 32])
    idx, *_ = addr(lay, [3], [40], 64)
    assert idx.tolist() == [[3 * 2 + 1]]


def test_a_view_with_dimensions_permutes_and_strides():
    # a 4 x 6 matrix read through a 3-D view (2, 2, 6) permuted (1, 0, 2), strides (6, 12, 1), onto a
    # 1-D layout of 24: matrix index i*6 + j -> view coordinate with dims[1] outermost
    lay = layout([24])
    view = np.array([[1, 1, 0, 2, 2, 2, 6, 6, 12, 1] + list(T.NO_CLIP)], np.int64)
    rows, cols = np.indices((4, 6))
    idx, acc, *_ = T.element_index(lay, view, rows.reshape(1, -1), cols.reshape(1, -1), 6, False)
    want = []
    for i in range(4):
        for j in range(6):
            n = i * 6 + j
            c2, n = n % 6, n // 6           # dimension 2 (perm[2])
            c0, n = n % 2, n // 2           # dimension 0 (perm[1])
            c1 = n % 2                      # dimension 1 (perm[0])
            want.append(c0 * 6 + c1 * 12 + c2)
    assert idx.tolist() == [want] and acc.all()


def test_a_clip_skips_elements():
    lay = layout([4, 4])
    view = np.array([[0, 0, 1, 0, 0, 0, 0, 1, 2, 0, 3]], np.int64)   # rows 1..2, columns 0..2
    _, acc, *_ = addr(lay, [0, 1, 2, 3, 1], [0, 0, 2, 0, 3], 4, view=view)
    assert acc.tolist() == [[False, True, True, False, False]]


def test_a_layout_that_addresses_nothing_is_an_error():
    with pytest.raises(T.AddressingError, match="span"):
        addr(layout([4, 4], span=[0, 4]), [0], [0], 4)
    with pytest.raises(T.AddressingError, match="permutation"):
        addr(layout([4, 4]), [0], [0], 4, view=np.array([[0, 1, 1, 0, 0, 0, 0] + list(T.NO_CLIP)], np.int64))
