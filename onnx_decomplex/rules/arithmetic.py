"""Elementwise arithmetic on complex values.

    Mul(z, w)  -> (zr wr - zi wi, zr wi + zi wr)
    Mul(z, r)  -> (zr r, zi r)             # r real: scales both parts
    Add(z, w)  -> (zr + wr, zi + wi)       # also Add on the packed layout
    Add(z, r)  -> (zr + r, zi)             # r real: touches the real part only
    Sub        -> likewise, with r - z = (r - zr, -zi)
    Neg(z)     -> (-zr, -zi)               # also Neg on the packed layout
    Identity   -> the same value

Add, Sub and Neg of two complex values are elementwise-safe on the packed layout,
since each acts on real and imaginary parts alike. Mul is not, and neither is
adding a real value: a packed `z + r` would add r to the imaginary part too. A
real operand that is a constant is packed as (r, 0) in numpy instead, which makes
that addition safe again.

Operands of different precision are promoted as numpy does (complex64 with
complex128 gives complex128).
"""

from __future__ import annotations

import numpy as np

from .. import cmath
from .registry import rule


def _complex_and_real(ctx, a, b):
    """Orders two operands as (complex, real, real_first)."""
    return (a, b, False) if ctx.is_complex(a) else (b, a, True)


def _scale(ctx, y, z, r, dtype):
    """y = z * r for a real r (a tensor or a numpy array)."""
    if ctx.prefers_pair(z):
        ctx.set_pair(y, *cmath.mul_real(ctx, ctx.pair(z, dtype), r))
        ctx.explain("complex times real: both parts scaled")
        return
    r_last = np.expand_dims(r, -1) if isinstance(r, np.ndarray) else ctx.unsqueeze(r, [-1])
    ctx.set_packed(y, ctx.emit("Mul", [ctx.packed(z, dtype), r_last]))
    ctx.explain("complex times real: packed tensor scaled by r[..., None]")


def _constant_kind(ctx, t) -> str | None:
    """'real' or 'imag' when constant t has only that part non-zero."""
    value = ctx.constant(t)
    if value is None:
        return None
    if not np.any(value.imag):
        return "real"
    if not np.any(value.real):
        return "imag"
    return None


@rule("Mul")
def mul(ctx, node):
    a, b = node.inputs
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    if ctx.is_complex(a) and ctx.is_complex(b):
        # A constant with one part all zero needs half the multiplies.
        for z, c in ((a, b), (b, a)):
            kind = _constant_kind(ctx, c)
            if kind == "real":
                _scale(ctx, y, z, ctx.constant(c).real.astype(dtype), dtype)
                return
            if kind == "imag":
                ctx.set_pair(
                    y, *cmath.mul_imag(ctx, ctx.pair(z, dtype), ctx.constant(c).imag.astype(dtype))
                )
                ctx.explain("complex times imaginary constant: (-zi s, zr s)")
                return
        ctx.set_pair(y, *cmath.mul(ctx, ctx.pair(a, dtype), ctx.pair(b, dtype)))
        ctx.explain("complex times complex: four multiplies on (re, im) pairs")
        return
    z, r, _ = _complex_and_real(ctx, a, b)
    _scale(ctx, y, z, ctx.real(r, dtype), dtype)


def _add_complex(ctx, node, a, b, y, dtype):
    if ctx.prefers_pair(a, b):
        fn = cmath.add if node.op == "Add" else cmath.sub
        ctx.set_pair(y, *fn(ctx, ctx.pair(a, dtype), ctx.pair(b, dtype)))
        ctx.explain(f"complex {node.op} on (re, im) pairs")
    else:
        ctx.set_packed(y, ctx.emit(node.op, [ctx.packed(a, dtype), ctx.packed(b, dtype)]))
        ctx.explain(f"complex {node.op} on the packed layout")


def _add_real(ctx, node, a, b, y, dtype):
    z, r_tensor, real_first = _complex_and_real(ctx, a, b)
    value = ctx.constant(r_tensor)
    if value is not None and not ctx.prefers_pair(z):
        # (r, 0) packed in numpy makes the packed addition touch the real part only.
        r_packed = cmath.pack(value.astype(dtype))
        ins = [r_packed, ctx.packed(z, dtype)] if real_first else [ctx.packed(z, dtype), r_packed]
        ctx.set_packed(y, ctx.emit(node.op, ins))
        ctx.explain(f"complex {node.op} real constant: packed with (r, 0)")
        return
    r = ctx.real(r_tensor, dtype)
    pair = ctx.pair(z, dtype)
    if node.op == "Add":
        re, im = cmath.add_real(ctx, pair, r)
    elif real_first:
        re, im = cmath.rsub_real(ctx, r, pair)
    else:
        re, im = cmath.sub_real(ctx, pair, r)
    if not ctx.broadcasts_into(r_tensor, z):
        # r may widen the result; the imaginary part must take the same shape.
        im = ctx.emit("Expand", [im, ctx.emit("Shape", [re])])
    ctx.set_pair(y, re, im)
    ctx.explain(f"complex {node.op} real: real part only")


@rule("Add", "Sub")
def add_sub(ctx, node):
    a, b = node.inputs
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    if ctx.is_complex(a) and ctx.is_complex(b):
        _add_complex(ctx, node, a, b, y, dtype)
    else:
        _add_real(ctx, node, a, b, y, dtype)


@rule("Neg")
def neg(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    if ctx.prefers_pair(x):
        ctx.set_pair(y, *cmath.neg(ctx, ctx.pair(x)))
        ctx.explain("negated both parts")
    else:
        ctx.set_packed(y, ctx.emit("Neg", [ctx.packed(x)]))
        ctx.explain("negated the packed tensor")


@rule("Identity")
def identity(ctx, node):
    ctx.alias(node.outputs[0], node.inputs[0])
    ctx.explain("same value, no node")
