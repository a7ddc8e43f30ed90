"""Complex arithmetic on (re, im) pairs.

Each helper takes `ops`, anything with elementwise `add`, `sub`, `mul` and `neg`:
the rewrite context (which emits nodes, folding numpy constants) or `NUMPY` (which
computes directly, and lets the tests check every formula against numpy's complex
arithmetic). Helpers hold the math only, no graph plumbing.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .dtypes import real_of

NUMPY = SimpleNamespace(add=np.add, sub=np.subtract, mul=np.multiply, neg=np.negative)


def mul(ops, a, b):
    """(ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)"""
    (ar, ai), (br, bi) = a, b
    return ops.sub(ops.mul(ar, br), ops.mul(ai, bi)), ops.add(ops.mul(ar, bi), ops.mul(ai, br))


def mul_real(ops, a, r):
    """(ar + i ai) r = ar r + i ai r"""
    ar, ai = a
    return ops.mul(ar, r), ops.mul(ai, r)


def mul_imag(ops, a, s):
    """(ar + i ai)(i s) = -ai s + i ar s"""
    ar, ai = a
    return ops.mul(ai, ops.neg(s)), ops.mul(ar, s)


def add(ops, a, b):
    """(ar + i ai) + (br + i bi) = (ar + br) + i (ai + bi)"""
    (ar, ai), (br, bi) = a, b
    return ops.add(ar, br), ops.add(ai, bi)


def sub(ops, a, b):
    """(ar + i ai) - (br + i bi) = (ar - br) + i (ai - bi)"""
    (ar, ai), (br, bi) = a, b
    return ops.sub(ar, br), ops.sub(ai, bi)


def add_real(ops, a, r):
    """(ar + i ai) + r = (ar + r) + i ai"""
    ar, ai = a
    return ops.add(ar, r), ai


def sub_real(ops, a, r):
    """(ar + i ai) - r = (ar - r) + i ai"""
    ar, ai = a
    return ops.sub(ar, r), ai


def rsub_real(ops, r, a):
    """r - (ar + i ai) = (r - ar) - i ai"""
    ar, ai = a
    return ops.sub(r, ar), ops.neg(ai)


def neg(ops, a):
    """-(ar + i ai) = -ar - i ai"""
    ar, ai = a
    return ops.neg(ar), ops.neg(ai)


def split(value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z -> (Re z, Im z), as contiguous real arrays."""
    # not ascontiguousarray, which turns a 0-d array into a 1-d one
    return np.array(value.real, order="C"), np.array(value.imag, order="C")


def pack(value: np.ndarray) -> np.ndarray:
    """z of shape S -> real array of shape S + [2] holding (Re z, Im z).

    A view of `value`'s memory when it is a C-contiguous complex array, else of a
    C-ordered complex copy (a real array packs as (r, 0)). The unit axis goes on
    first so that 0-d arrays can take the view too.
    """
    value = np.asarray(value, dtype=np.result_type(value, np.complex64), order="C")
    return value.reshape(*value.shape, 1).view(real_of(value.dtype))


def unpack(packed: np.ndarray) -> np.ndarray:
    """Real array of shape S + [2] -> z of shape S, z = [..., 0] + i [..., 1]."""
    dtype = np.result_type(packed.dtype, np.complex64)
    return (packed[..., 0] + 1j * packed[..., 1]).astype(dtype)
