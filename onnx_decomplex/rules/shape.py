"""Ops that read or make shapes.

    Shape(z, start, end)      -> the logical shape: Shape of a part, or of p without its last dim
    Size(z)                   -> the logical size: Size of a part, or Size(p) / 2
    ConstantOfShape(s, v)     -> Expand(pack(v), s + [2])        # v complex
    EyeLike(x, dtype=complex) -> (EyeLike(Re x or x, dtype=real), 0)

Shape and Size have real outputs; ConstantOfShape with a complex value, and EyeLike with
a complex dtype, are sources. EyeLike reads only its input's shape.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from .. import cmath
from ..dtypes import is_complex_np, is_complex_onnx, np_of, onnx_of
from .common import append_dim
from .registry import real_outputs, rule


def _runtime_part(ctx, x):
    """A part of `x` that already exists as a tensor, or None."""
    if ctx.prefers_pair(x):
        return next((p for p in ctx.pair(x) if isinstance(p, gs.Tensor)), None)
    return None


@rule("Shape", infer=real_outputs)
def shape(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    value = ctx.constant(x)
    start, end = node.attrs.get("start", 0), node.attrs.get("end")
    if value is not None:
        ctx.emit("Identity", [np.array(value.shape[start:end], np.int64)], outputs=[y])
        ctx.explain("shape of a constant, known now")
        return
    part = _runtime_part(ctx, x)
    if part is not None:
        ctx.emit("Shape", [part], node.attrs, outputs=[y])
        ctx.explain("shape of the real part")
        return
    packed = ctx.packed(x)
    if ctx.opset < 15:
        full = ctx.emit("Shape", [packed])
        ctx.emit(
            "Slice",
            [full, np.array([0], np.int64), np.array([-1], np.int64)],
            outputs=[y],
        )
    else:
        # Negative bounds count from the end, which now has one more dim.
        attrs = {"start": start - 1 if start < 0 else start, "end": -1 if end is None else end}
        if end is not None and end < 0:
            attrs["end"] = end - 1
        ctx.emit("Shape", [packed], attrs, outputs=[y])
    ctx.explain("shape of the packed tensor without its last dim")


@rule("Size", infer=real_outputs)
def size(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    value = ctx.constant(x)
    if value is not None:
        ctx.emit("Identity", [np.array(value.size, np.int64)], outputs=[y])
        return
    part = _runtime_part(ctx, x)
    if part is not None:
        ctx.emit("Size", [part], outputs=[y])
        ctx.explain("size of the real part")
        return
    ctx.emit("Div", [ctx.emit("Size", [ctx.packed(x)]), np.array(2, np.int64)], outputs=[y])
    ctx.explain("size of the packed tensor over 2")


def _value(node) -> np.ndarray | None:
    value = node.attrs.get("value")
    return np.asarray(value.values) if isinstance(value, gs.Constant) else None


def _constant_of_shape_infer(node, kinds):
    value = _value(node)
    return [value.dtype if value is not None and is_complex_np(value.dtype) else None]


@rule("ConstantOfShape", infer=_constant_of_shape_infer)
def constant_of_shape(ctx, node):
    shape_t, y = node.inputs[0], node.outputs[0]
    value = _value(node).reshape(())
    dims = ctx.constant(shape_t)
    if dims is not None and int(np.prod(dims)) <= 64:
        ctx.set_constant(y, np.full(dims.astype(np.int64), value))
        ctx.explain("small complex constant made in numpy")
        return
    out = ctx.emit("Expand", [cmath.pack(value), append_dim(ctx, shape_t, 2)])
    ctx.set_packed(y, out)
    ctx.explain("packed value expanded to shape + [2]")


def _eye_like_infer(node, kinds):
    dtype = node.attrs.get("dtype")
    if dtype is None:  # the input's own type
        return [kinds[0]]
    return [np.dtype(np_of(dtype)) if is_complex_onnx(dtype) else None]


@rule("EyeLike", infer=_eye_like_infer)
def eye_like(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    if not ctx.is_complex(y):  # a real identity shaped like a complex value
        ctx.emit("EyeLike", [ctx.real_part(x)], node.attrs, outputs=[y])
        ctx.explain("shaped like the real part")
        return
    like = ctx.real_part(x) if ctx.is_complex(x) else x
    attrs = {**node.attrs, "dtype": onnx_of(ctx.real_dtype(y))}
    ctx.set_parts(y, ctx.emit("EyeLike", [like], attrs), None)
    ctx.explain("real identity, imaginary part zero")
