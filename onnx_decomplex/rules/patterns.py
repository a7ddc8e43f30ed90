"""Conjugation, as models spell it. ONNX has no Conj op, so a model writes one of:

    Sub(2 Re z, z)        = conj z
    Sub(Re z, i Im z)     = conj z
    Add(Re z, -i Im z)    = conj z

with, as ONNX can say them on complex values,

    Re z  = Cast(Cast(z, to=real), to=complex)   # a cast to real keeps the real part
    Im z  = Re(-i z) = Re(Mul(z, -1j))
    2 w   = Mul(w, 2) or Add(w, w)
    c w   = Mul(w, c) for a constant c

Each op in these spellings has its own rule, and rewriting them one at a time gives
the right numbers through a dozen real nodes. Seen whole, conj z is one node: the
imaginary part negated. The rules of the inner ops still run; what they emitted is
left unused and removed.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from ..dtypes import is_complex_onnx, np_of


def _producer(t: gs.Tensor, op: str) -> gs.Node | None:
    # Original nodes stay attached until every rule has run, and come first: a rule
    # that makes a real output under its own name adds its node after them.
    if isinstance(t, gs.Variable) and t.inputs and t.inputs[0].op == op:
        return t.inputs[0]
    return None


def _equals(ctx, t: gs.Tensor, value: complex) -> bool:
    """True when `t` is a constant whose every element is `value`."""
    c = ctx.constant(t)
    return c is not None and c.size > 0 and bool(np.all(c == value))


def _scaled(ctx, t: gs.Tensor, value: complex) -> gs.Tensor | None:
    """w when `t` is `value` times w (Mul by a constant, or Add(w, w) for 2)."""
    node = _producer(t, "Mul")
    if node is not None:
        for w, c in (node.inputs, node.inputs[::-1]):
            if ctx.is_complex(w) and _equals(ctx, c, value):
                return w
    node = _producer(t, "Add")
    if value == 2 and node is not None and node.inputs[0] is node.inputs[1]:
        return node.inputs[0]
    return None


def _real_part_of(ctx, t: gs.Tensor) -> gs.Tensor | None:
    """z when `t` is Cast(Cast(z, to=real), to=complex), at z's own precision."""
    back = _producer(t, "Cast")
    if back is None or not is_complex_onnx(back.attrs["to"]):
        return None
    there = _producer(back.inputs[0], "Cast")
    if there is None or not ctx.is_complex(z := there.inputs[0]):
        return None
    same = np_of(there.attrs["to"]) == ctx.real_dtype(z) and ctx.dtype(t) == ctx.dtype(z)
    return z if same else None


def _imag_part_of(ctx, t: gs.Tensor) -> gs.Tensor | None:
    """z when `t` is Re(-i z)."""
    u = _real_part_of(ctx, t)
    return None if u is None else _scaled(ctx, u, -1j)


def conjugated(ctx, node: gs.Node) -> gs.Tensor | None:
    """z when the Add or Sub `node` computes conj z in one of the spellings above."""
    a, b = node.inputs
    if not (ctx.is_complex(a) and ctx.is_complex(b)):
        return None
    if node.op == "Sub":
        w = _scaled(ctx, a, 2)
        if w is not None and _real_part_of(ctx, w) is b:
            return b
        z, i_im = _real_part_of(ctx, a), _scaled(ctx, b, 1j)
        if z is not None and i_im is not None and _imag_part_of(ctx, i_im) is z:
            return z
        return None
    for re, rest in ((a, b), (b, a)):
        z, neg_i_im = _real_part_of(ctx, re), _scaled(ctx, rest, -1j)
        if z is not None and neg_i_im is not None and _imag_part_of(ctx, neg_i_im) is z:
            return z
    return None
