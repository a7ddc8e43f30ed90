"""Elementwise arithmetic on complex values.

    Mul(z, w)  -> (zr wr - zi wi, zr wi + zi wr)
    Mul(z, z)  -> ((zr - zi)(zr + zi), 2 zr zi)   # no inf - inf past overflow
    Mul(z, r)  -> (zr r, zi r)             # r real: scales both parts
    Mul(z, w)  -> z (wr, wr) + swap(z) (-wi, wi)   # z packed, w a constant
    Mul(z, w)  -> Concat(zr wr - zi wi, zr wi + zi wr)   # z packed, w a table; [..., 1] halves
    Mul(z, w)  -> RotaryEmbedding           # opset 23+, see rotary.py
    Add(z, w)  -> (zr + wr, zi + wi)       # also Add on the packed layout
    Add(z, r)  -> (zr + r, zi)             # r real: touches the real part only
    Sub        -> likewise, with r - z = (r - zr, -zi)
    Sub(2 Re z, z), Sub(Re z, i Im z), ... -> conj z = (zr, -zi)   # see patterns.py
    Neg(z)     -> (-zr, -zi)               # also Neg on the packed layout
    Div(z, w)  -> z conj(c) / |c|^2 / s, c = w / s, s = max(|wr|, |wi|)   # w constant, not 0: z times 1/w, made in numpy
    Div(z, r)  -> (zr / r, zi / r)
    Sum, Mean  -> the op on the packed tensors, or on each part; a -0 Sum is +0, as the reference's
    Pow(z, n)  -> repeated squaring         # n a constant integer
    Pow(z, p)  -> |z|^p (cos p arg z, sin p arg z)
    Pow(z, w)  -> exp(w log z)             # w complex
    Equal(z, w) -> zr == wr and zi == wi    # a real output
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
from ..dtypes import ort_lacks_float64
from . import patterns, rotary
from .registry import real_outputs, rule


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


def _times_constant(ctx, y, z, c: np.ndarray, dtype) -> bool:
    """y = z * c for a constant c with one part all zero: half the multiplies."""
    if not np.any(c.imag):
        _scale(ctx, y, z, c.real.astype(dtype), dtype)
        return True
    if not np.any(c.real):
        ctx.set_pair(y, *cmath.mul_imag(ctx, ctx.pair(z, dtype), c.imag.astype(dtype)))
        ctx.explain("complex times imaginary constant: (-zi s, zr s)")
        return True
    return False


def _product(ctx, y, a, b, dtype):
    """y = a * b for two complex values."""
    if a is b and not ctx.has_known_zero(a) and ctx.constant(a) is None:
        ctx.set_pair(y, *cmath.square(ctx, ctx.pair(a, dtype)))
        ctx.explain("complex square: (zr - zi)(zr + zi) + i 2 zr zi")
        return
    for r, z in ((a, b), (b, a)):
        parts = ctx.known_zero_parts(r, dtype) if ctx.has_known_zero(r) else None
        runtime = not ctx.has_known_zero(z) and ctx.constant(z) is None
        if parts is not None and parts[1] is None and runtime:
            _scale(ctx, y, z, parts[0], dtype)  # a real value: z keeps its form
            return
    if ctx.has_known_zero(a) or ctx.has_known_zero(b):
        pa, pb = (ctx.known_zero_parts(t, dtype) or ctx.pair(t, dtype) for t in (a, b))
        ctx.set_parts(y, *cmath.mul_sparse(ctx, pa, pb))
        ctx.explain("complex times complex, skipping parts known to be zero")
        return
    for z, c in ((a, b), (b, a)):
        value = ctx.constant(c)
        if value is not None and _times_constant(ctx, y, z, value, dtype):
            return
    for z, w in ((a, b), (b, a)):
        if rotary.rotate(ctx, y, z, w, dtype) or _packed_product(ctx, y, z, w, dtype):
            return
    gauss = ctx.gauss("Mul") and ctx.constant(a) is None and ctx.constant(b) is None
    ctx.set_pair(y, *cmath.mul(ctx, ctx.pair(a, dtype), ctx.pair(b, dtype), gauss))
    ctx.explain(f"complex times complex: {'three' if gauss else 'four'} multiplies on pairs")


def _broadcast_over(ctx, w, z) -> bool:
    """True when w is known to be broadcast along some axis of z: a smaller table."""
    ws, zs = ctx.shape(w), ctx.shape(z)
    if ws is None or zs is None:
        return False
    if len(ws) < len(zs):
        return True
    return any(dw == 1 and dz != 1 for dw, dz in zip(ws[::-1], zs[::-1], strict=False))


def _packed_product(ctx, y, z, w, dtype) -> bool:
    """y = z w kept packed, when z is packed and w is a constant or a smaller packed
    value (a table broadcast over z).

    A constant w: `cmath.mul_packed`, two products on the packed tensor and one swap
    of its halves, with (wr, wr) and (-wi, wi) made in numpy. A runtime table: the
    four products on the halves of a Split, each [..., 1], and one Concat back; its
    (wr, wr) and (-wi, wi) would cost more to make at run time than they save.
    Either way z is not unpacked, nor the result packed, by separate nodes.
    """
    if not ctx.has_packed(z) or ctx.prefers_pair(z):
        return False
    value = ctx.constant(w)
    if value is not None:
        c = value.astype(ctx.dtype(y))
        w_re2 = np.stack([c.real, c.real], -1).astype(dtype)
        w_im2 = np.stack([-c.imag, c.imag], -1).astype(dtype)
        ctx.set_packed(y, cmath.mul_packed(ctx, ctx.packed(z, dtype), w_re2, w_im2))
        ctx.explain("complex times constant on the packed layout: z (wr, wr) + swap(z) (-wi, wi)")
        return True
    if not (ctx.has_packed(w) and _broadcast_over(ctx, w, z)):
        return False
    halves = [ctx.split_halves(ctx.packed(t, dtype), -1) for t in (z, w)]
    ctx.set_packed(y, ctx.concat(list(cmath.mul(ctx, *halves)), -1))
    ctx.explain("complex times table on the halves of the packed tensors, concatenated back")
    return True


@rule("Mul")
def mul(ctx, node):
    a, b = node.inputs
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    if ctx.is_complex(a) and ctx.is_complex(b):
        _product(ctx, y, a, b, dtype)
        return
    z, r, _ = _complex_and_real(ctx, a, b)
    _scale(ctx, y, z, ctx.real(r, dtype), dtype)


def _times_reciprocal(ctx, y, z, value: np.ndarray, dtype) -> bool:
    """y = z / value for a constant with no zero, as z times 1 / value, made in numpy.

    Where both parts of 1 / value are non-zero and one exceeds 1, two products of a
    large z could overflow with opposite signs (inf - inf) where the quotient is
    finite or a signed inf. The reciprocal is then scaled to parts no larger than 1,
    and the product scaled back: z (w / s) s, with s = max(|wr|, |wi|, 1).
    False when the reciprocal overflows `dtype`; the division is kept.
    """
    inverse = np.asarray(1 / value.astype(np.result_type(value, np.complex128)))
    if not np.all(np.isfinite(inverse.astype(ctx.dtype(y)))):
        return False
    if not np.iscomplexobj(value):
        _scale(ctx, y, z, inverse.real.astype(dtype), dtype)
        return True
    inverse = inverse.astype(ctx.dtype(y))
    s = np.asarray(np.maximum(np.maximum(np.abs(inverse.real), np.abs(inverse.imag)), 1))
    both = (inverse.real != 0) & (inverse.imag != 0)
    if not np.any(both & (s > 1)):
        if not _times_constant(ctx, y, z, inverse, dtype):
            ctx.set_pair(y, *cmath.mul(ctx, ctx.pair(z, dtype), cmath.split(inverse)))
        return True
    product = cmath.mul(ctx, ctx.pair(z, dtype), cmath.split(np.asarray(inverse / s)))
    ctx.set_pair(y, *cmath.mul_real(ctx, product, s.astype(dtype)))
    return True


@rule("Div")
def div(ctx, node):
    a, b = node.inputs
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    value = ctx.constant(b)
    # Dividing by a constant is multiplying by its reciprocal, made in numpy. A zero
    # divisor keeps the division, whose infinities and NaNs are numpy's.
    constant = value is not None and np.all(value != 0) and ctx.is_complex(a)
    if constant and _times_reciprocal(ctx, y, a, value, dtype):
        ctx.explain("divided by a constant: times its reciprocal")
        return
    if ctx.is_complex(a) and ctx.is_complex(b):
        ctx.set_pair(y, *cmath.div(ctx, ctx.pair(a, dtype), ctx.pair(b, dtype), dtype))
        ctx.explain("z / w on pairs, w scaled by its larger part (Smith's, numpy's)")
    elif ctx.is_complex(a):
        ctx.set_pair(y, *cmath.div_real(ctx, ctx.pair(a, dtype), ctx.real(b, dtype)))
        ctx.explain("complex over real: both parts divided")
    else:
        ctx.set_pair(y, *cmath.rdiv_real(ctx, ctx.real(a, dtype), ctx.pair(b, dtype), dtype))
        ctx.explain("real over complex: (r + 0i) / w, w scaled by its larger part")


def _sum_or_mean(ctx, op: str, ins, dtype):
    """The op on real operands. The reference's Sum is Python's sum, which starts from
    0: a -0 total is +0 there (-0 + -0 + 0), so the rewrite's is too, where a log's cut
    would turn the sign into +-pi."""
    if ort_lacks_float64(op, ctx.work_dtype):
        return ctx.div(ctx.emit("Sum", ins), np.array(len(ins), np.float64))
    out = ctx.emit(op, ins)
    return cmath.plus_zero(ctx, out, dtype) if op == "Sum" else out


@rule("Sum", "Mean")
def sum_mean(ctx, node):
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    runtime_real = [t for t in node.inputs if not ctx.is_complex(t) and ctx.constant(t) is None]
    if ctx.prefers_pair(*node.inputs) or runtime_real:
        pairs = [ctx.as_pair(t, dtype, full=True) for t in node.inputs]
        re, im = (_sum_or_mean(ctx, node.op, [p[k] for p in pairs], dtype) for k in (0, 1))
        ctx.set_pair(y, re, im)
        ctx.explain(f"{node.op} of each part")
        return
    # Both ops broadcast, and act on each part alike.
    out = _sum_or_mean(ctx, node.op, [ctx.as_packed(t, dtype) for t in node.inputs], dtype)
    ctx.set_packed(y, out)
    ctx.explain(f"{node.op} of the packed tensors")


def _small_integer(value) -> int | None:
    """The exponent as an int, when it is one scalar integer no larger than 64."""
    if value is None or value.size != 1:
        return None
    x = float(value.reshape(()))
    return int(x) if x.is_integer() and abs(x) <= 64 else None


def _pow_refusal(node, kinds, opset):
    if kinds[0] is None:
        # Pow's output has its base's type: a real base gives a real result, which
        # only the reference's cast of a complex power defines.
        return "a complex exponent of a real base is not supported"
    return None


@rule("Pow", refuse=_pow_refusal)
def pow_(ctx, node):
    z, p = node.inputs
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    value = ctx.constant(p)
    if ctx.is_complex(p):
        if value is None or np.any(value.imag):
            w = ctx.pair(p, dtype)
            ctx.set_pair(y, *cmath.pow_complex(ctx, ctx.pair(z, dtype), w, dtype))
            ctx.explain("z^w = exp(w log z), principal branch")
            return
        value = value.real
    n = _small_integer(value)
    if n is not None:
        ctx.set_pair(y, *cmath.pow_int(ctx, ctx.pair(z, dtype), n, dtype))
        ctx.explain(f"z^{n} by repeated squaring, as numpy does for integer powers")
        return
    exponent = value.astype(dtype) if value is not None else ctx.real(p, dtype)
    ctx.set_pair(y, *cmath.pow_real(ctx, ctx.pair(z, dtype), exponent, dtype))
    ctx.explain("z^p = |z|^p (cos p arg z, sin p arg z)")


@rule("Equal", infer=real_outputs)
def equal(ctx, node):
    a, b = node.inputs
    dtype = ctx.real_dtype(a if ctx.is_complex(a) else b)
    (ar, ai), (br, bi) = ctx.as_pair(a, dtype), ctx.as_pair(b, dtype)
    ctx.emit("And", [ctx.equal(ar, br), ctx.equal(ai, bi)], outputs=[node.outputs[0]])
    ctx.explain("equal real parts and equal imaginary parts")


def _add_complex(ctx, node, a, b, y, dtype):
    known = ctx.has_known_zero(a) or ctx.has_known_zero(b)
    shape = ctx.shape(a)
    if known and shape is not None and shape == ctx.shape(b) and None not in shape:
        # Same shapes, so a part taken from one operand alone has the result's shape.
        pa, pb = (ctx.known_zero_parts(t, dtype) or ctx.pair(t, dtype) for t in (a, b))
        ctx.set_parts(y, *cmath.add_sparse(ctx, pa, pb, subtract=node.op == "Sub"))
        ctx.explain(f"complex {node.op}, skipping parts known to be zero")
    elif ctx.prefers_pair(a, b):
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


def _conjugate(ctx, y, z, dtype):
    """y = conj z: the imaginary part negated, on whichever form z has."""
    if ctx.prefers_pair(z):
        ctx.set_pair(y, *cmath.conj(ctx, ctx.pair(z, dtype)))
    else:
        # One Mul by (1, -1), broadcast over the trailing axis, keeps z packed.
        ctx.set_packed(y, ctx.emit("Mul", [ctx.packed(z, dtype), np.array([1, -1], dtype)]))
    ctx.explain(f"recognised conj({z.name}): imaginary part negated")


@rule("Add", "Sub")
def add_sub(ctx, node):
    a, b = node.inputs
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    z = patterns.conjugated(ctx, node)
    parts = patterns.from_parts(ctx, node)
    if z is not None:
        _conjugate(ctx, y, z, dtype)
    elif parts is not None:
        ctx.set_pair(y, *parts)
        ctx.explain("recognised re + i im of its parts: the pair itself")
    elif ctx.is_complex(a) and ctx.is_complex(b):
        _add_complex(ctx, node, a, b, y, dtype)
    else:
        _add_real(ctx, node, a, b, y, dtype)


@rule("Neg")
def neg(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    if ctx.has_known_zero(x):
        ctx.set_parts(y, *(None if p is None else ctx.neg(p) for p in ctx.known_zero_parts(x)))
        ctx.explain("negated the part that is not known to be zero")
    elif ctx.prefers_pair(x):
        ctx.set_pair(y, *cmath.neg(ctx, ctx.pair(x)))
        ctx.explain("negated both parts")
    else:
        ctx.set_packed(y, ctx.emit("Neg", [ctx.packed(x)]))
        ctx.explain("negated the packed tensor")


@rule("Identity")
def identity(ctx, node):
    ctx.alias(node.outputs[0], node.inputs[0])
    ctx.explain("same value, no node")
