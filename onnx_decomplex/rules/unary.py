"""Elementwise functions of one complex value, on (re, im) pairs.

    Exp, Log, Sqrt, Sin, Cos, Tan, Sinh, Cosh, Tanh, Asin, Acos, Atan, Asinh,
    Acosh, Atanh, Sigmoid, Sign, Reciprocal  -> the formula helpers in `cmath`
    Round(z)        -> (Round(zr), Round(zi))            # numpy rounds each part
    Abs(z)          -> hypot(zr, zi), a real output      # scaled: no overflow of zr^2
    IsNaN/IsInf(z)  -> test(zr) or test(zi), a real output

The branch cuts and principal values are numpy's, which the reference evaluator
uses. `Abs` gives a real output, as numpy does; the reference evaluator itself
rejects a complex Abs, since it expects the output type to be the input's.
"""

from __future__ import annotations

from .. import cmath
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
    # Not ReduceL2 over the packed axis, whose squares overflow (and underflow) where
    # |z| does not; reductions over an axis of 2 are also slower than a Split. On
    # onnxruntime, a small float32 one's squares are summed in float64 instead of scaled.
    widen = widens_modulus(ctx, x)
    ctx.set_real(y, cmath.absolute(ctx, ctx.pair(x), ctx.real_dtype(x), widen=widen))
    ctx.explain("|z| = hypot(re, im), in float64 or scaled by the larger part")


@rule("IsNaN", "IsInf", infer=real_outputs)
def is_nan_inf(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    re, im = ctx.pair(x)
    tests = [ctx.emit(node.op, [p], node.attrs) for p in (re, im)]
    ctx.emit("Or", tests, outputs=[y])
    ctx.explain(f"{node.op}(re) or {node.op}(im)")
