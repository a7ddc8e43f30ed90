"""Reductions of complex values.

    ReduceSum/ReduceMean(z)  -> the op on the packed tensor, axes moved   # a mean over a dim that may be 0: ReduceSum / count
    ReduceSumSquare(z)       -> ReduceSum(z^2)                 # z^2 complex, (zr - zi)(zr + zi) + i 2 zr zi
    ReduceL1(z)              -> (ReduceSum(|z|), 0)
    ReduceL2(z)              -> sqrt(ReduceSum(z^2))           # the reference's own formula
    ReduceLogSum(z)          -> log(ReduceSum(z))
    ReduceLogSumExp(z)       -> log(ReduceSum(exp(z - m))) + m, m the lexicographic max
    ReduceProd(z)            -> (1 + 0i) z_0 z_1 ... in numpy's order   # a Loop past 8 elements
    Softmax(z)               -> e^(z - m) / ReduceSum(e^(z - m)),  m = ReduceMax(Re z)
    LogSoftmax(z)            -> (Re (z - m) - log|S|, wrap(Im (z - m) - arg S)),  S = ReduceSum(e^(z - m)),
                                m the lexicographic max

ReduceProd is a true complex product, taken as numpy takes it: from 1 + 0i, times each
element in turn, so that its overflows and its NaNs (0 times inf) are numpy's. Taking
it channel-wise on the packed tensor would multiply real parts with real parts.

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
import onnx
import onnx_graphsurgeon as gs

from .. import cmath
from ..dtypes import onnx_of
from ..shapes import static
from .common import node_axes, shift_axes, shift_axes_input, widens_modulus
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


def _mean_count(ctx, node, dtype):
    """What a ReduceMean divides a ReduceSum by where a dim it reduces may be 0 (numpy's
    mean of nothing is NaN, 0 / 0, where onnxruntime's ReduceMean gives 0): 0 where one
    is known to be 0, the count at run time where one is known only then; None where
    every reduced dim is known and not 0, or the axes are given at run time."""
    shape = ctx.shape(node.inputs[0])
    kind, axes = node_axes(ctx, node)
    if node.op != "ReduceMean" or shape is None or kind == "tensor":
        return None
    if not axes and int(node.attrs.get("noop_with_empty_axes", 0)):
        return None
    axes = sorted(a % len(shape) for a in axes) if axes else list(range(len(shape)))
    dims = [shape[a] for a in axes]
    if 0 in dims:
        return np.array(0, dtype)
    if static(dims):
        return None
    x = node.inputs[0]
    held = ctx.pair(x)[0] if ctx.prefers_pair(x) else ctx.packed(x)  # its first dims are x's
    reduced = ctx.emit("Gather", [ctx.emit("Shape", [held]), np.array(axes, np.int64)])
    count = ctx.emit("ReduceProd", [reduced], {"keepdims": 0})
    return ctx.emit("Cast", [count], {"to": onnx_of(dtype)})


@rule("ReduceSum", "ReduceMean")
def sum_mean(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    kind, axes = node_axes(ctx, node)
    all_axes = kind == "none" or (kind == "list" and not axes)
    op, count = node.op, _mean_count(ctx, node, ctx.real_dtype(y))
    if count is not None:  # the sum over the count: a mean of nothing is 0 / 0, NaN
        op = "ReduceSum"
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
    z = node.inputs[0]
    modulus = cmath.absolute(ctx, ctx.pair(z), widen=widens_modulus(ctx, z))
    re = _reduce(ctx, node, "ReduceSum", modulus)
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


UNROLLED_UP_TO = 8
"""A ReduceProd over at most this many elements (static) is written out, one complex
product an element; over more, or a count known only at run time, it is a Loop."""


def _reduced_axes(ctx, node) -> list[int] | None:
    """The axes `node` reduces, each in [0, rank); None where they or the rank are known
    only at run time."""
    kind, axes = node_axes(ctx, node)
    rank = ctx.rank(node.inputs[0])
    if kind == "tensor" or rank is None:
        return None
    if kind == "none" or not axes:
        return [] if int(node.attrs.get("noop_with_empty_axes", 0)) else list(range(rank))
    return sorted({int(a) % rank for a in axes})


def _zeros(ctx, rows, dtype):
    """Zeros of the shape of one row of the [L, R] `rows`."""
    shape = ctx.emit("Shape", [rows])
    width = ctx.emit("Slice", [shape, np.array([1], np.int64), np.array([2], np.int64)])
    zero = onnx.helper.make_tensor("value", onnx_of(dtype), [1], [0])
    return ctx.emit("ConstantOfShape", [width], {"value": zero})


def _fold(ctx, rows, count, dtype):
    """(1 + 0i) z_0 z_1 ... z_{count-1}, each product numpy's four-product formula in
    turn, where z_k is row k of the [L, R] parts `rows`: written out for a static
    `count` up to UNROLLED_UP_TO, else a Loop over the rows."""
    re, im = rows
    if isinstance(count, int) and count <= UNROLLED_UP_TO:
        acc = None
        for k in range(count):
            at = np.array(k, np.int64)
            z = tuple(ctx.emit("Gather", [p, at], {"axis": 0}) for p in (re, im))
            acc = cmath.one_times(ctx, z, dtype) if acc is None else cmath.mul(ctx, acc, z)
        if acc is None:  # a product of nothing
            zeros = _zeros(ctx, re, dtype)
            return ctx.emit("Add", [zeros, np.ones((), dtype)]), zeros
        return acc
    return _fold_loop(ctx, rows, dtype)


def _fold_loop(ctx, rows, dtype):
    """The fold as a Loop: its body takes row `i` of each part (read from the enclosing
    graph) and multiplies it into the running product, from (1, 0)."""
    re, im = rows
    zeros = _zeros(ctx, re, dtype)
    start = (ctx.emit("Add", [zeros, np.ones((), dtype)]), zeros)
    count = ctx.emit("Gather", [ctx.emit("Shape", [re]), np.array(0, np.int64)])
    body = gs.Graph(name=ctx.unique(f"{ctx.node.name}_rows"))
    i = gs.Variable(ctx.unique("i"), np.int64, [])
    go = gs.Variable(ctx.unique("go"), np.bool_, [])
    acc = [gs.Variable(ctx.unique(f"acc_{r}"), dtype, None) for r in "ri"]
    body.inputs = [i, go, *acc]
    ops = ctx.body_ops(body)
    z = tuple(ops.emit("Gather", [p, i], {"axis": 0}) for p in (re, im))
    out = cmath.mul(ops, tuple(acc), z)
    kept = ops.emit("Identity", [go])
    body.outputs = [kept, *(ops.emit("Identity", [p]) for p in out)]
    for t in body.outputs:
        t.dtype = np.bool_ if t is kept else dtype
    return ctx.emit("Loop", [count, np.array(True), *start], {"body": body}, outputs=2)


@rule("ReduceProd")
def prod(ctx, node):
    """numpy's product, (1 + 0i) times each element in turn (the reduced axes in C
    order), each product by the four-product formula: where a product overflows, or
    0 meets inf, the rewrite gives numpy's inf, NaN or finite value, which a product of
    moduli times e^(i sum of angles) does not (|z1 z2| may overflow where both parts of
    z1 z2 do not). Axes given at run time keep that polar form."""
    x, y = node.inputs[0], node.outputs[0]
    dtype = ctx.real_dtype(y)
    pair = ctx.pair(x)
    axes = _reduced_axes(ctx, node)
    if axes is None:
        modulus = _reduce(ctx, node, "ReduceProd", cmath.absolute(ctx, pair))
        theta = _reduce(ctx, node, "ReduceSum", cmath.angle(ctx, pair, dtype))
        ctx.set_pair(y, *cmath.mul_real(ctx, (ctx.cos(theta), ctx.sin(theta)), modulus))
        ctx.explain("axes given at run time: product of moduli times e^(i sum of angles)")
        return
    if not axes:  # the value itself, or a rank-0 value's product: (1 + 0i) z
        noop = int(node.attrs.get("noop_with_empty_axes", 0))
        ctx.set_pair(y, *(pair if noop else cmath.one_times(ctx, pair, dtype)))
        ctx.explain("no axis to reduce")
        return
    rank, shape = ctx.rank(x), ctx.shape(x)
    kept = [a for a in range(rank) if a not in axes]
    keepdims = int(node.attrs.get("keepdims", 1))
    if 0 in [shape[a] for a in kept]:  # an empty result, of static shape
        dims = [1 if a in axes else shape[a] for a in range(rank)] if keepdims else None
        dims = dims or [shape[a] for a in kept]
        if static(dims):
            empty = np.zeros(dims, dtype)
            ctx.set_pair(y, empty, empty)
            ctx.explain("an empty result")
            return
    perm = axes + kept
    rows = []
    for p in pair:
        if perm != list(range(rank)):
            p = ctx.emit("Transpose", [p], {"perm": perm})
        rows.append(ctx.emit("Flatten", [p], {"axis": len(axes)}))
    dims = [shape[a] for a in axes]
    count = int(np.prod(dims)) if static(dims) else None
    out = _fold(ctx, rows, count, dtype)
    rest = [shape[a] for a in kept]
    if static(rest):
        target = np.array(rest, np.int64)
    else:
        target = ctx.emit("Gather", [ctx.emit("Shape", [pair[0]]), np.array(kept, np.int64)])
    out = [ctx.emit("Reshape", [p, target]) for p in out]
    if keepdims:
        out = [ctx.unsqueeze(p, axes) for p in out]
    ctx.set_pair(y, *out)
    how = "written out" if count is not None and count <= UNROLLED_UP_TO else "a Loop"
    ctx.explain(f"numpy's product from 1 + 0i, one element at a time ({how})")


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
