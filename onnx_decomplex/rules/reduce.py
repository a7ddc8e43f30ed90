"""Reductions of complex values.

    ReduceSum/ReduceMean(z)  -> the op on the packed tensor, axes moved   # a mean of nothing: ReduceSum / 0
    ReduceSumSquare(z)       -> ReduceSum(z^2)                 # z^2 complex, (zr - zi)(zr + zi) + i 2 zr zi
    ReduceL1(z)              -> (ReduceSum(|z|), 0)
    ReduceL2(z)              -> sqrt(ReduceSum(z^2))           # the reference's own formula
    ReduceLogSum(z)          -> log(ReduceSum(z))
    ReduceLogSumExp(z)       -> log(ReduceSum(exp(z - m))) + m, m the lexicographic max
    ReduceProd(z)            -> ReduceProd(|z|) e^(i ReduceSum(arg z))
    Softmax(z)               -> e^(z - m) / ReduceSum(e^(z - m)),  m = ReduceMax(Re z)
    LogSoftmax(z)            -> (Re (z - m) - log|S|, wrap(Im (z - m) - arg S)),  S = ReduceSum(e^(z - m)),
                                m the lexicographic max

ReduceProd is a true complex product: moduli multiply and angles add. Taking it
channel-wise on the packed tensor would multiply real parts with real parts.

ReduceL2 follows the reference evaluator (and the ONNX formula sqrt(sum(x^2))),
which on complex input is not the norm sqrt(sum |z|^2); see docs/rewrite.md (Meaning).
ReduceMax and ReduceMin are refused: complex numbers are not ordered.

Softmax is e^z / sum(e^z), unchanged by any shift m. The reference evaluator shifts
by the lexicographic maximum; the largest real part does as well, and it is what
keeps e^(z - m) from overflowing. LogSoftmax shifts as the reference does: the
element at m becomes exactly 1, so that the LogSoftmax of one element is exactly 0 on
both sides (a real shift alone leaves log|e^(i Im z)|, a unit's roundoff, which a
Reciprocal after it turns into 1e7). LogSoftmax is the principal log of Softmax, as
the reference takes it, but formed without Softmax's tiny values, whose squared
moduli would underflow: the angle is wrapped into (-pi, pi] instead.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import cmath
from .common import node_axes, shift_axes, shift_axes_input
from .registry import rule


def _reduce(ctx, node, op, x, shift: bool = False, keepdims: int | None = None):
    """Reduces `x` the way `node` reduces its input, with `op`; on packed x with `shift`;
    keeping the reduced dims when `keepdims` says so, else as `node` says."""
    kind, axes = node_axes(ctx, node)
    if keepdims is None:
        keepdims = int(node.attrs.get("keepdims", 1))
    noop = int(node.attrs.get("noop_with_empty_axes", 0))
    if kind == "none" or (kind == "list" and not axes):
        if noop:
            return x
        if shift:
            # Every logical axis, which leaves the trailing (re, im) axis alone. A
            # rank-0 value has none: an empty list would reduce the packed axis too.
            rank = ctx.rank(node.inputs[0])
            return ctx.reduce(op, x, list(range(rank)), keepdims) if rank else x
        return ctx.reduce(op, x, None, keepdims)
    if kind == "list":
        return ctx.reduce(op, x, shift_axes(axes) if shift else axes, keepdims)
    attrs = {"keepdims": keepdims, "noop_with_empty_axes": noop}
    return ctx.emit(op, [x, shift_axes_input(ctx, axes) if shift else axes], attrs)


def _reduce_parts(ctx, node, op, pair):
    return tuple(_reduce(ctx, node, op, p) for p in pair)


def _empty_mean(ctx, node) -> bool:
    """True for a ReduceMean over a dim known to be 0: numpy's mean of nothing is NaN,
    where onnxruntime's ReduceMean gives 0."""
    shape = ctx.shape(node.inputs[0])
    kind, axes = node_axes(ctx, node)
    if node.op != "ReduceMean" or shape is None or kind == "tensor":
        return False
    if not axes and int(node.attrs.get("noop_with_empty_axes", 0)):
        return False
    return any(shape[a] == 0 for a in (axes or range(len(shape))))


@rule("ReduceSum", "ReduceMean")
def sum_mean(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    kind, axes = node_axes(ctx, node)
    all_axes = kind == "none" or (kind == "list" and not axes)
    op, count = node.op, None
    if _empty_mean(ctx, node):
        # The sum of nothing over a count of 0: 0 / 0, NaN as numpy's mean.
        op, count = "ReduceSum", np.array(0, ctx.real_dtype(y))
    if ctx.prefers_pair(x) or (all_axes and ctx.rank(x) is None):
        parts = _reduce_parts(ctx, node, op, ctx.pair(x))
        ctx.set_pair(y, *(parts if count is None else (ctx.div(p, count) for p in parts)))
        ctx.explain("reduced each part")
        return
    out = _reduce(ctx, node, op, ctx.packed(x), shift=True)
    ctx.set_packed(y, out if count is None else ctx.div(out, count))
    ctx.explain("reduced the packed tensor, axes moved")


def _square_sum(ctx, node, pair):
    return _reduce_parts(ctx, node, "ReduceSum", cmath.square(ctx, pair))


@rule("ReduceSumSquare")
def sum_square(ctx, node):
    ctx.set_pair(node.outputs[0], *_square_sum(ctx, node, ctx.pair(node.inputs[0])))
    ctx.explain("sum of complex squares")


@rule("ReduceL2")
def l2(ctx, node):
    y = node.outputs[0]
    s = _square_sum(ctx, node, ctx.pair(node.inputs[0]))
    ctx.set_pair(y, *cmath.sqrt(ctx, s, ctx.real_dtype(y)))
    ctx.explain("sqrt of the sum of complex squares, as the reference computes it")


@rule("ReduceL1")
def l1(ctx, node):
    y = node.outputs[0]
    re = _reduce(ctx, node, "ReduceSum", cmath.absolute(ctx, ctx.pair(node.inputs[0])))
    ctx.set_pair(y, re, ctx.zeros_like(re, ctx.real_dtype(y)))
    ctx.explain("sum of moduli, with a zero imaginary part")


@rule("ReduceLogSum")
def log_sum(ctx, node):
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    pair = ctx.pair(node.inputs[0])
    ctx.set_pair(y, *cmath.log(ctx, _reduce_parts(ctx, node, "ReduceSum", pair), dtype))
    ctx.explain("log of the complex sum")


def _lexicographic_max(ctx, pair, reduce, dtype):
    """m, the lexicographic maximum as the reference takes it (largest real part, then
    largest imaginary part among those), each part reduced by `reduce(op, part)` with
    the reduced dims kept; and the imaginary parts the second reduction ran over."""
    re, im = pair
    m_re = reduce("ReduceMax", re)
    # Im where Re is largest, else the lowest float (arithmetic, not a Where on a
    # mask that changes from element to element, which is slow).
    flag = ctx.cast(ctx.equal(re, m_re), dtype)
    lowest = np.array(np.finfo(dtype).min, dtype)
    on_max = ctx.add(ctx.mul(flag, im), ctx.mul(ctx.sub(np.array(1, dtype), flag), lowest))
    return (m_re, reduce("ReduceMax", on_max)), on_max


@rule("ReduceLogSumExp")
def log_sum_exp(ctx, node):
    """log(sum(e^(z - m))) + m, with m the lexicographic maximum, as the reference
    shifts: no overflow, and the imaginary part is arg(sum) + Im m, not wrapped into
    (-pi, pi]."""
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    re, im = ctx.pair(node.inputs[0])
    kept = functools.partial(_reduce, ctx, node, keepdims=1)
    (m_re, m_im), on_max = _lexicographic_max(ctx, (re, im), kept, dtype)
    e = cmath.exp(ctx, (ctx.sub(re, m_re), ctx.sub(im, m_im)))
    log_re, log_im = cmath.log(ctx, _reduce_parts(ctx, node, "ReduceSum", e), dtype)
    if not int(node.attrs.get("keepdims", 1)):
        m_re, m_im = (_reduce(ctx, node, "ReduceMax", p) for p in (re, on_max))
    ctx.set_pair(y, ctx.add(log_re, m_re), ctx.add(log_im, m_im))
    ctx.explain("log-sum-exp shifted by the lexicographic maximum, as the reference")


@rule("ReduceProd")
def prod(ctx, node):
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    pair = ctx.pair(node.inputs[0])
    modulus = _reduce(ctx, node, "ReduceProd", cmath.absolute(ctx, pair))
    theta = _reduce(ctx, node, "ReduceSum", cmath.angle(ctx, pair, dtype))
    ctx.set_pair(y, *cmath.mul_real(ctx, (ctx.cos(theta), ctx.sin(theta)), modulus))
    ctx.explain("product of moduli times e^(i sum of angles)")


def _softmax_axis(node, opset: int) -> int:
    if opset >= 13:
        return int(node.attrs.get("axis", -1))
    return int(node.attrs.get("axis", 1))


def _softmax_refusal(node, kinds, opset):
    # Before opset 13 the op flattens every axis from `axis` on, which the
    # reference evaluator does not do; they agree when `axis` is the last one.
    if opset >= 13:
        return None
    shape = node.inputs[0].shape
    rank = None if shape is None else len(shape)
    if not rank or _softmax_axis(node, opset) % rank != rank - 1:
        return f"{node.op} before opset 13 on a complex value is supported over the last axis only"
    return None


@rule("Softmax", "LogSoftmax", refuse=_softmax_refusal)
def softmax(ctx, node):
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    axis = [_softmax_axis(node, ctx.opset)]
    re, im = pair = ctx.pair(node.inputs[0])
    if node.op == "Softmax":
        shifted = (ctx.sub(re, ctx.reduce("ReduceMax", re, axis, keepdims=1)), im)
    else:
        kept = functools.partial(ctx.reduce, axes=axis, keepdims=1)
        shifted = cmath.sub(ctx, pair, _lexicographic_max(ctx, pair, kept, dtype)[0])
    e = cmath.exp(ctx, shifted)
    total = tuple(ctx.reduce("ReduceSum", p, axis, keepdims=1) for p in e)
    if node.op == "Softmax":
        ctx.set_pair(y, *cmath.div_bounded(ctx, e, total))
    else:
        log_re, log_im = cmath.log(ctx, total, dtype)
        out_im = cmath.wrap_angle(ctx, ctx.sub(shifted[1], log_im), dtype)
        ctx.set_pair(y, ctx.sub(shifted[0], log_re), out_im)
    shift = "largest real part" if node.op == "Softmax" else "lexicographic maximum"
    ctx.explain(f"{node.op} shifted by the {shift} along axis {axis[0]}")
