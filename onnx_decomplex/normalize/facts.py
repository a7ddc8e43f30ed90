"""What every part of a reading shares about a value: its type of parts, its declaration,
and how two shapes compare."""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

Shape = list | None

Kinds = list["np.dtype | None"]
"""For each input of a node, its complex dtype, or None when it is real."""

COMPLEX_OF = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}
"""The complex type whose parts have this float type."""

MAX_READ_ELEMENTS = 1 << 12
"""Constants this small are read (indices, shapes, scalars); larger ones never are."""


def declared(v: gs.Tensor) -> tuple[np.dtype | None, Shape]:
    """The dtype and shape `v` is declared with, None where it declares none."""
    dtype = None if v.dtype is None else np.dtype(v.dtype)
    return dtype, None if v.shape is None else list(v.shape)


def dims_equal(a: Shape, b: Shape) -> bool:
    """False only when both are known and provably differ."""
    if a is None or b is None:
        return True
    if len(a) != len(b):
        return False
    return all(
        not (isinstance(x, int) and isinstance(y, int)) or x == y for x, y in zip(a, b, strict=True)
    )


def merged(a: Shape, b: Shape) -> Shape:
    """The shape of a value that is `a` or `b` (an If's branches): a dim where both
    agree, unknown where they differ; None where the ranks differ."""
    if a is None or b is None or len(a) != len(b):
        return None
    return [x if x == y else None for x, y in zip(a, b, strict=True)]


def count(shape: Shape) -> int | None:
    """The number of elements of `shape`, None unless every dim is known."""
    if shape is None or not all(isinstance(d, int) and d >= 0 for d in shape):
        return None
    return int(np.prod(shape, dtype=np.int64))
