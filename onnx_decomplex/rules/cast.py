"""Casts into, out of and between complex types.

    Cast(x: real, to=complex)   -> (Cast(x, to=float), 0)    # 0 known, not made
    Cast(z, to=complex')        -> (Cast(Re z), Cast(Im z))   # complex64 <-> complex128
    Cast(z, to=bool)            -> Re z != 0 or Im z != 0
    Cast(z, to=real or int)     -> Cast(Re z)

Dropping the imaginary part on a cast to a real type is what numpy does, and so
what the reference evaluator does. Casting to bool follows numpy too: a complex
number is true when either part is non-zero.
"""

from __future__ import annotations

from onnx import TensorProto

from ..dtypes import is_complex_onnx, np_of, real_of
from .registry import rule


def _infer(node, kinds):
    to = node.attrs["to"]
    return [np_of(to) if is_complex_onnx(to) else None]


def _to_complex(ctx, node, x, y):
    """Real to complex: the imaginary part is zero, with x's shape."""
    dtype = real_of(ctx.dtype(y))
    value = ctx.constant(x)
    if value is not None:
        ctx.set_constant(y, value.astype(ctx.dtype(y)))
        ctx.explain("real constant cast to complex in numpy")
        return
    ctx.set_parts(y, ctx.real(x, dtype), None)
    ctx.explain("real input cast to complex: (x, 0), with the zero part left unmade")


def _between_complex(ctx, node, x, y):
    dtype = real_of(ctx.dtype(y))
    value = ctx.constant(x)
    if dtype == ctx.real_dtype(x):
        ctx.alias(y, x)
        ctx.explain("cast to the same complex type: no-op")
    elif value is not None:
        ctx.set_constant(y, value.astype(ctx.dtype(y)))
        ctx.explain("complex constant cast in numpy")
    elif ctx.prefers_pair(x):
        ctx.set_pair(y, *ctx.pair(x, dtype))
        ctx.explain(f"both parts cast to {dtype}")
    else:
        ctx.set_packed(y, ctx.packed(x, dtype))
        ctx.explain(f"packed tensor cast to {dtype}")


def _to_real(ctx, node, x, y):
    to = node.attrs["to"]
    if to == TensorProto.BOOL:
        re, im = ctx.pair(x)
    else:
        re = ctx.real_part(x)
    if to == TensorProto.BOOL:
        parts = [ctx.emit("Cast", [p], {"to": TensorProto.BOOL}) for p in (re, im)]
        ctx.emit("Or", parts, outputs=[y])
        ctx.explain("complex to bool: Re != 0 or Im != 0")
        return
    if np_of(to) == ctx.real_dtype(x):
        ctx.emit("Identity", [re], outputs=[y])
    else:
        attrs = {k: v for k, v in node.attrs.items() if k in ("to", "saturate")}
        ctx.emit("Cast", [re], attrs, outputs=[y])
    ctx.explain("complex to real keeps the real part, as numpy does")


def _refuse(node, kinds, opset):
    if kinds[0] is not None and node.attrs.get("to") == TensorProto.STRING:
        return "a complex value cannot be cast to a string"
    return None


@rule("Cast", infer=_infer, refuse=_refuse)
def cast(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    to = node.attrs["to"]
    if ctx.is_complex(x) and is_complex_onnx(to):
        _between_complex(ctx, node, x, y)
    elif is_complex_onnx(to):
        _to_complex(ctx, node, x, y)
    else:
        _to_real(ctx, node, x, y)
