"""Gather and scatter: indices select whole complex elements.

    Gather(z, idx, axis)            -> Gather(p, idx, axis')      # axis moved
    GatherND(z, idx)                -> GatherND(p, idx)            # idx never reaches the last axis
    ScatterND(z, idx, u)            -> ScatterND(p, idx, pu)       # updates packed too
    GatherElements / ScatterElements -> the op on each part      # idx has the data's rank

Exporters that pack complex values themselves (jax2onnx) read the parts of a value
they left native with `Gather(z, 0 or 1, axis=rank)`: an axis one past the last,
the packed axis. That is packed access, and gets the packed tensor:

    Gather(z, i, axis=rank(z))      -> Gather(p, i, axis=rank(z))  # a real output

Scatter reductions: "add" acts on each part alike. "mul" would need a complex
product per element, and "min"/"max" have no meaning: complex numbers are not
ordered. Those are refused.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from ..dtypes import is_complex_np
from .common import on_parts, parts_if_paired, shift_axis
from .registry import complex_like_inputs, rule


def logical_rank(t: gs.Tensor) -> int | None:
    """The rank of complex value `t` from its label, or None.

    A complex label gives the rank itself. A real label on a value that is complex
    is an exporter's packed-layout label: one axis more than the logical rank.
    """
    if isinstance(t, gs.Constant):
        return t.values.ndim
    if t.shape is None or t.dtype is None:
        return None
    return len(t.shape) - (0 if is_complex_np(t.dtype) else 1)


def packed_access(node) -> bool:
    """True for Gather(z, i, axis=rank(z)): reading the parts of z by index."""
    axis = node.attrs.get("axis", 0)
    return axis > 0 and axis == logical_rank(node.inputs[0])


def _gather_infer(node, kinds):
    if kinds[0] is not None and packed_access(node):
        return [None]
    return complex_like_inputs(node, kinds)


def _index_inputs_are_real(node, kinds, opset):
    if kinds[1] is not None:
        return "indices cannot be complex"
    return None


def _scatter_refusal(node, kinds, opset):
    reason = _index_inputs_are_real(node, kinds, opset)
    if reason:
        return reason
    reduction = node.attrs.get("reduction", "none")
    if reduction not in ("none", "add"):
        return f"reduction '{reduction}' has no part-wise meaning on complex values"
    return None


@rule("Gather", infer=_gather_infer, refuse=_index_inputs_are_real)
def gather(ctx, node):
    x, idx = node.inputs
    if not ctx.is_complex(node.outputs[0]):
        # Analysis found packed access (its labels may have changed since).
        ctx.emit("Gather", [ctx.packed(x), idx], node.attrs, outputs=[node.outputs[0]])
        ctx.explain("packed access: the index picks real or imaginary parts")
        return
    if parts_if_paired(ctx, node, [0]):
        return
    axis = shift_axis(node.attrs.get("axis", 0))
    ctx.set_packed(node.outputs[0], ctx.emit("Gather", [ctx.packed(x), idx], {"axis": axis}))
    ctx.explain(f"axis {node.attrs.get('axis', 0)} -> {axis} on the packed tensor")


@rule("GatherND", refuse=_index_inputs_are_real)
def gather_nd(ctx, node):
    x, idx = node.inputs
    if parts_if_paired(ctx, node, [0]):
        return
    ctx.set_packed(node.outputs[0], ctx.emit("GatherND", [ctx.packed(x), idx], node.attrs))
    ctx.explain("on the packed tensor: each index tuple selects whole complex elements")


@rule("ScatterND", infer=complex_like_inputs, refuse=_scatter_refusal)
def scatter_nd(ctx, node):
    data, idx, updates = node.inputs
    if parts_if_paired(ctx, node, [0, 2]):
        return
    dtype = ctx.real_dtype(node.outputs[0])
    ins = [ctx.as_packed(data, dtype), idx, ctx.as_packed(updates, dtype)]
    ctx.set_packed(node.outputs[0], ctx.emit("ScatterND", ins, node.attrs))
    ctx.explain("on the packed tensors")


@rule("GatherElements", refuse=_index_inputs_are_real)
def gather_elements(ctx, node):
    on_parts(ctx, node, [0], "indices have the data's rank")


@rule("ScatterElements", refuse=_scatter_refusal)
def scatter_elements(ctx, node):
    on_parts(ctx, node, [0, 2], "indices have the data's rank")
