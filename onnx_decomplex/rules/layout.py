"""Layout ops: they move or select elements without mixing real and imaginary parts.

On the packed layout (shape S + [2]) the trailing axis rides along:

    Transpose(z, perm)        -> Transpose(p, perm + [rank])
    Reshape(z, shape)         -> Reshape(p, shape + [2])       # 0, -1, allowzero keep meaning
    Unsqueeze/Squeeze(z, ax)  -> same op on p, negative axes moved down by one
    Flatten(z, axis)          -> Reshape(Flatten(p, axis'), [0, -1, 2])
    Concat/Split/Compress/CumSum(z, axis) -> same op on p, axis moved
    Slice(z, starts, ends, axes, steps)   -> same op on p, axes moved
    Expand(z, shape)          -> Expand(p, shape + [2])
    Tile(z, repeats)          -> Tile(p, repeats + [1])
    Where(c, z, w)            -> Where(c[..., None], p, q)
    ReverseSequence(z)        -> same op on p; axes past 1 (tf2onnx writes them, and
                                 onnx.reference runs them) moved to 0 and 1 and back

On a (re, im) pair the op is simply applied to each part. That form is used when
the value already exists only as a pair, or when the packed form would need
something unknown at rewrite time (a rank), and always for ops whose axes are fixed
at the end (Trilu, DepthToSpace, SpaceToDepth) and for Pad, whose complex pad
value is one number per part.
"""

from __future__ import annotations

import numpy as np

from .common import (
    append_dim,
    node_axes,
    on_parts,
    parts_if_paired,
    set_outputs_packed,
    shift_axes,
    shift_axes_input,
    shift_axis,
)
from .registry import rule


@rule("Transpose")
def transpose(ctx, node):
    x = node.inputs[0]
    perm = node.attrs.get("perm")
    if perm is None and ctx.rank(x) is not None:
        perm = list(reversed(range(ctx.rank(x))))
    if ctx.prefers_pair(x) or perm is None:
        on_parts(ctx, node, [0], "pair form" if perm is not None else "rank unknown")
        return
    perm = [int(p) for p in perm]
    out = ctx.emit("Transpose", [ctx.packed(x)], {"perm": [*perm, len(perm)]})
    ctx.set_packed(node.outputs[0], out)
    ctx.explain(f"perm {perm} -> {[*perm, len(perm)]} on the packed tensor")


@rule("Reshape")
def reshape(ctx, node):
    x, shape = node.inputs[0], node.inputs[1]
    if parts_if_paired(ctx, node, [0]):
        return
    out = ctx.emit("Reshape", [ctx.packed(x), append_dim(ctx, shape, 2)], node.attrs)
    ctx.set_packed(node.outputs[0], out)
    ctx.explain("shape + [2] on the packed tensor")


@rule("Unsqueeze", "Squeeze")
def unsqueeze_squeeze(ctx, node):
    x = node.inputs[0]
    kind, axes = node_axes(ctx, node)
    known = kind != "tensor"
    if ctx.prefers_pair(x) or not known:
        on_parts(ctx, node, [0], "pair form" if known else "axes known only at run time")
        return
    if axes is None:
        # Squeeze with no axes drops every 1; the trailing axis is 2, so it stays.
        out = ctx.squeeze(ctx.packed(x), None)
    else:
        make = ctx.unsqueeze if node.op == "Unsqueeze" else ctx.squeeze
        out = make(ctx.packed(x), shift_axes(axes))
    ctx.set_packed(node.outputs[0], out)
    ctx.explain(f"axes {axes} -> {None if axes is None else shift_axes(axes)} on the packed tensor")


@rule("Flatten")
def flatten(ctx, node):
    x = node.inputs[0]
    if parts_if_paired(ctx, node, [0]):
        return
    axis = int(node.attrs.get("axis", 1))
    flat = ctx.emit("Flatten", [ctx.packed(x)], {"axis": shift_axis(axis)})
    out = ctx.emit("Reshape", [flat, np.array([0, -1, 2], np.int64)])
    ctx.set_packed(node.outputs[0], out)
    ctx.explain(f"Flatten(axis={axis}) then [0, -1, 2] on the packed tensor")


@rule("Concat")
def concat(ctx, node):
    if parts_if_paired(ctx, node, list(range(len(node.inputs)))):
        return
    dtype = ctx.real_dtype(node.outputs[0])
    ins = [ctx.as_packed(t, dtype) for t in node.inputs]
    axis = shift_axis(node.attrs["axis"])
    ctx.set_packed(node.outputs[0], ctx.emit("Concat", ins, {"axis": axis}))
    ctx.explain(f"axis {node.attrs['axis']} -> {axis} on the packed tensors")


def _axis_attr_rule(ctx, node, default_axis: int | None):
    """The op on the packed tensor with its `axis` attribute moved; other inputs kept."""
    attrs = dict(node.attrs)
    axis = attrs.get("axis", default_axis)
    if axis is not None:
        attrs["axis"] = shift_axis(axis)
    ins = [ctx.packed(node.inputs[0]), *[t if t.name else None for t in node.inputs[1:]]]
    set_outputs_packed(ctx, node, ctx.emit(node.op, ins, attrs, outputs=len(node.outputs)))
    ctx.explain(f"axis {axis} -> {attrs.get('axis')} on the packed tensor")


@rule("Split")
def split(ctx, node):
    if parts_if_paired(ctx, node, [0]):
        return
    _axis_attr_rule(ctx, node, 0)


@rule("Compress")
def compress(ctx, node):
    if "axis" not in node.attrs or ctx.prefers_pair(node.inputs[0]):
        # Without an axis Compress flattens first, which would interleave the parts.
        on_parts(ctx, node, [0], "pair form" if "axis" in node.attrs else "flattening")
        return
    _axis_attr_rule(ctx, node, None)


def _sequence_axes(node) -> tuple[int, int]:
    return int(node.attrs.get("batch_axis", 1)), int(node.attrs.get("time_axis", 0))


def _refuse_sequence_axes(node, kinds, opset) -> str | None:
    if set(_sequence_axes(node)) != {0, 1} and node.inputs[0].shape is None:
        return "its axes are past 0 and 1, and its input's rank is unknown"
    return None


@rule("ReverseSequence", refuse=_refuse_sequence_axes)
def reverse_sequence(ctx, node):
    batch, time = _sequence_axes(node)
    standard = {batch, time} == {0, 1}
    if standard and parts_if_paired(ctx, node, [0]):
        return
    x = ctx.packed(node.inputs[0])
    if standard:
        # The trailing axis is never one of them.
        out = ctx.emit(node.op, [x, node.inputs[1]], node.attrs)
        ctx.set_packed(node.outputs[0], out)
        ctx.explain("on the packed tensor")
        return
    # onnxruntime takes only axes 0 and 1: the two are moved there, and back.
    rank = len(node.inputs[0].shape)
    batch, time = batch % rank, time % rank
    perm = [batch, time, *(d for d in range(rank + 1) if d not in (batch, time))]
    moved = ctx.emit("Transpose", [x], {"perm": perm})
    out = ctx.emit(node.op, [moved, node.inputs[1]], {"batch_axis": 0, "time_axis": 1})
    back = ctx.emit("Transpose", [out], {"perm": [int(p) for p in np.argsort(perm)]})
    ctx.set_packed(node.outputs[0], back)
    ctx.explain(f"on the packed tensor, axes {batch} and {time} moved to 0 and 1")


@rule("Slice")
def slice_(ctx, node):
    x = node.inputs[0]
    if parts_if_paired(ctx, node, [0]):
        return
    ins = [ctx.packed(x), node.inputs[1], node.inputs[2]]
    rest = [t if t.name else None for t in node.inputs[3:]]
    if rest and rest[0] is not None:
        # Omitted axes default to 0, 1, ...: non-negative, so they need no move.
        rest[0] = shift_axes_input(ctx, rest[0])
    ctx.set_packed(node.outputs[0], ctx.emit("Slice", ins + rest))
    ctx.explain("axes moved on the packed tensor")


@rule("CumSum")
def cumsum(ctx, node):
    x, axis = node.inputs
    if parts_if_paired(ctx, node, [0]):
        return
    out = ctx.emit("CumSum", [ctx.packed(x), shift_axes_input(ctx, axis)], node.attrs)
    ctx.set_packed(node.outputs[0], out)
    ctx.explain("axis moved on the packed tensor")


@rule("Expand", "Tile")
def expand_tile(ctx, node):
    x, shape = node.inputs
    if parts_if_paired(ctx, node, [0]):
        return
    # Expand broadcasts S + [2] against shape + [2]; Tile repeats the last axis once.
    extra = 2 if node.op == "Expand" else 1
    out = ctx.emit(node.op, [ctx.packed(x), append_dim(ctx, shape, extra)])
    ctx.set_packed(node.outputs[0], out)
    ctx.explain(f"{'shape + [2]' if extra == 2 else 'repeats + [1]'} on the packed tensor")


@rule("Where")
def where(ctx, node):
    cond, a, b = node.inputs
    # onnxruntime's Where turns a -0 of its second input +0 (`Ops.where_signed`): on
    # the packed tensors, one Min keeps both parts' signs.
    if not ctx.where_drops_negative_zero and parts_if_paired(ctx, node, [1, 2]):
        return
    dtype = ctx.real_dtype(node.outputs[0])
    value = ctx.constant(cond)
    c = np.expand_dims(value, -1) if value is not None else ctx.unsqueeze(cond, [-1])
    out = ctx.where_signed(c, ctx.as_packed(a, dtype), ctx.as_packed(b, dtype), dtype)
    ctx.set_packed(node.outputs[0], out)
    ctx.explain("condition unsqueezed onto the packed tensors")


@rule("Pad")
def pad(ctx, node):
    on_parts(ctx, node, [0, 2], "the pad value is one number per part")


@rule("Trilu", "DepthToSpace", "SpaceToDepth")
def last_axes_ops(ctx, node):
    on_parts(ctx, node, [0], "the op addresses the trailing axes")
