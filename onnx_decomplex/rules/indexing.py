"""Gather and scatter: indices select whole complex elements.

    Gather(z, idx, axis)            -> Gather(p, idx, axis')      # axis moved
    GatherND(z, idx)                -> GatherND(p, idx)            # idx never reaches the last axis
    ScatterND(z, idx, u)            -> ScatterND(p, idx, pu)       # updates packed too
    GatherElements / ScatterElements -> the op on each part      # idx has the data's rank

Scatter reductions: "add" acts on each part alike. "mul" would need a complex
product per element, and "min"/"max" have no meaning: complex numbers are not
ordered. Those are refused.
"""

from __future__ import annotations

from .common import on_parts, shift_axis
from .registry import complex_like_inputs, rule


def _index_inputs_are_real(node, kinds):
    if kinds[1] is not None:
        return "indices cannot be complex"
    return None


def _scatter_refusal(node, kinds):
    reason = _index_inputs_are_real(node, kinds)
    if reason:
        return reason
    reduction = node.attrs.get("reduction", "none")
    if reduction not in ("none", "add"):
        return f"reduction '{reduction}' has no part-wise meaning on complex values"
    return None


@rule("Gather", refuse=_index_inputs_are_real)
def gather(ctx, node):
    x, idx = node.inputs
    if ctx.prefers_pair(x):
        on_parts(ctx, node, [0], "pair form")
        return
    axis = shift_axis(node.attrs.get("axis", 0))
    ctx.set_packed(node.outputs[0], ctx.emit("Gather", [ctx.packed(x), idx], {"axis": axis}))
    ctx.explain(f"axis {node.attrs.get('axis', 0)} -> {axis} on the packed tensor")


@rule("GatherND", refuse=_index_inputs_are_real)
def gather_nd(ctx, node):
    x, idx = node.inputs
    if ctx.prefers_pair(x):
        on_parts(ctx, node, [0], "pair form")
        return
    ctx.set_packed(node.outputs[0], ctx.emit("GatherND", [ctx.packed(x), idx], node.attrs))
    ctx.explain("on the packed tensor: each index tuple selects whole complex elements")


@rule("ScatterND", infer=complex_like_inputs, refuse=_scatter_refusal)
def scatter_nd(ctx, node):
    data, idx, updates = node.inputs
    if ctx.prefers_pair(data, updates):
        on_parts(ctx, node, [0, 2], "pair form")
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
