"""Elementwise functions of one complex value, on (re, im) pairs.

    Exp, Log, Sqrt, Sin, Cos, Tan, Sinh, Cosh, Tanh, Asin, Acos, Atan, Asinh,
    Acosh, Atanh, Sigmoid, Sign, Reciprocal  -> the formula helpers in `cmath`
    Round(z)        -> (Round(zr), Round(zi))            # numpy rounds each part
    Abs(z)          -> hypot(zr, zi), a real output      # scaled: no overflow of zr^2
    Abs(z)^2        -> zr^2 + zi^2, where |z| is only squared (Pow 2, or Mul by itself)
    IsNaN/IsInf(z)  -> test(zr) or test(zi), a real output

The branch cuts and principal values are numpy's, which the reference evaluator
uses. `Abs` gives a real output, as numpy does; the reference evaluator itself
rejects a complex Abs, since it expects the output type to be the input's.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from .. import cmath
from ..constants import gs_value
from .common import on_parts, widens_modulus
from .registry import real_outputs, rule


def _dtype_arg(fn):
    return lambda ops, a, dtype: fn(ops, a)


FUNCTIONS = {
    "Exp": _dtype_arg(cmath.exp),
    "Log": cmath.log,
    "Sqrt": cmath.sqrt,
    "Sin": _dtype_arg(cmath.sin),
    "Cos": _dtype_arg(cmath.cos),
    "Tan": _dtype_arg(cmath.tan),
    "Sinh": _dtype_arg(cmath.sinh),
    "Cosh": _dtype_arg(cmath.cosh),
    "Tanh": _dtype_arg(cmath.tanh),
    "Asin": cmath.asin,
    "Acos": cmath.acos,
    "Atan": cmath.atan,
    "Asinh": cmath.asinh,
    "Acosh": cmath.acosh,
    "Atanh": cmath.atanh,
    "Sigmoid": cmath.sigmoid,
    "Sign": cmath.sign,
    "Reciprocal": cmath.reciprocal,
}


@rule(*FUNCTIONS)
def function(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    dtype = ctx.real_dtype(y)
    ctx.set_pair(y, *FUNCTIONS[node.op](ctx, ctx.pair(x), dtype))
    ctx.explain(f"complex {node.op} on (re, im)")


@rule("Round")
def round_(ctx, node):
    on_parts(ctx, node, [0], "numpy rounds each part")


@rule("Abs", infer=real_outputs)
def abs_(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    squarings = _squarings(ctx, y)
    if squarings:
        _squared_modulus(ctx, x, squarings)
        return
    # Not ReduceL2 over the packed axis, whose squares overflow (and underflow) where
    # |z| does not; reductions over an axis of 2 are also slower than a Split. On
    # onnxruntime, a small float32 one's squares are summed in float64 instead of scaled.
    widen = widens_modulus(ctx, x)
    ctx.set_real(y, cmath.absolute(ctx, ctx.pair(x), ctx.real_dtype(x), widen=widen))
    ctx.explain("|z| = hypot(re, im), in float64 or scaled by the larger part")


def _squarings(ctx, y: gs.Tensor) -> list[gs.Node]:
    """The nodes that read |z| when every one squares it, `Pow(|z|, 2)` (a 2 that adds
    no axis) or `Mul(|z|, |z|)`, and nothing else reads it, in this graph or as its
    output; else none."""
    readers = ctx.readers(y)
    if not readers:
        return []
    rank = ctx.rank(y)
    for reader in readers:
        if reader.op == "Mul" and all(t is y for t in reader.inputs):
            continue
        if reader.op == "Pow" and reader.inputs[0] is y:
            two = gs_value(reader.inputs[1])
            adds_no_axis = two is not None and (two.ndim == 0 or (rank or 0) >= two.ndim)
            if adds_no_axis and two.size == 1 and float(two.flat[0]) == 2:
                continue
        return []
    return readers


def _squared_modulus(ctx, x: gs.Tensor, squarings: list[gs.Node]) -> None:
    """|z|^2 for the nodes that square |z|: re^2 + im^2, which overflows and underflows
    where the square of hypot(re, im) does (to within float rounding), so needs neither
    its scaling nor float64; inf where a part is infinite, the other NaN or not, as
    numpy's hypot squared. Each squaring node's output is that value."""
    dtype = ctx.real_dtype(x)
    value = cmath.absolute_squared(ctx, ctx.pair(x), dtype)
    first = None
    for reader in squarings:
        out = reader.outputs[0]
        reader.outputs.clear()
        ctx.set_real(out, value if first is None else first)
        if first is None:
            first = out
    ctx.explain(f"|z|^2 = re^2 + im^2, read by {len(squarings)} squaring node(s)")


@rule("IsNaN", "IsInf", infer=real_outputs)
def is_nan_inf(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    re, im = ctx.pair(x)
    tests = [ctx.emit(node.op, [p], node.attrs) for p in (re, im)]
    ctx.emit("Or", tests, outputs=[y])
    ctx.explain(f"{node.op}(re) or {node.op}(im)")
