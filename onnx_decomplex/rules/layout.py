"""Layout ops: they move elements without mixing real and imaginary parts.

On the packed layout (shape S + [2]) the trailing axis rides along:

    Transpose(z, perm)        -> Transpose(p, perm + [rank])
    Reshape(z, shape)         -> Reshape(p, shape + [2])       # 0, -1, allowzero keep meaning
    Unsqueeze/Squeeze(z, ax)  -> same op on p, negative axes moved down by one
    Flatten(z, axis)          -> Reshape(Flatten(p, axis'), [0, -1, 2])

On a (re, im) pair the op is simply applied to each part. That form is used when
the value already exists only as a pair, or when the packed form would need
something unknown at rewrite time (a rank, or axes given at run time).
"""

from __future__ import annotations

import numpy as np

from .registry import rule


def _on_parts(ctx, node, x, why: str):
    """y = (op(re), op(im)) with the node's own other inputs and attributes."""
    re, im = ctx.pair(x)
    rest = list(node.inputs[1:])
    parts = [ctx.emit(node.op, [p, *rest], node.attrs) for p in (re, im)]
    ctx.set_pair(node.outputs[0], *parts)
    ctx.explain(f"applied to both parts ({why})")


def _shift_axes(axes) -> list[int]:
    """Logical axes -> packed axes: negative ones skip the trailing (re, im) axis."""
    return [int(a) if a >= 0 else int(a) - 1 for a in axes]


@rule("Transpose")
def transpose(ctx, node):
    x = node.inputs[0]
    perm = node.attrs.get("perm")
    if perm is None and ctx.rank(x) is not None:
        perm = list(reversed(range(ctx.rank(x))))
    if ctx.prefers_pair(x) or perm is None:
        _on_parts(ctx, node, x, "pair form" if perm is not None else "rank unknown")
        return
    perm = [int(p) for p in perm]
    out = ctx.emit("Transpose", [ctx.packed(x)], {"perm": [*perm, len(perm)]})
    ctx.set_packed(node.outputs[0], out)
    ctx.explain(f"perm {perm} -> {[*perm, len(perm)]} on the packed tensor")


@rule("Reshape")
def reshape(ctx, node):
    x, shape = node.inputs[0], node.inputs[1]
    if ctx.prefers_pair(x):
        _on_parts(ctx, node, x, "pair form")
        return
    value = ctx.constant(shape)
    if value is not None:
        packed_shape = np.append(value.astype(np.int64), np.int64(2))
    else:
        packed_shape = ctx.emit("Concat", [shape, np.array([2], np.int64)], {"axis": 0})
    out = ctx.emit("Reshape", [ctx.packed(x), packed_shape], node.attrs)
    ctx.set_packed(node.outputs[0], out)
    ctx.explain("shape + [2] on the packed tensor")


def _axes(ctx, node):
    """The axes of Unsqueeze/Squeeze: (known, values). Attribute before opset 13."""
    if "axes" in node.attrs:
        return True, list(node.attrs["axes"])
    if len(node.inputs) < 2 or not node.inputs[1].name:
        return True, None
    value = ctx.constant(node.inputs[1])
    return (value is not None), (None if value is None else value.reshape(-1).tolist())


@rule("Unsqueeze", "Squeeze")
def unsqueeze_squeeze(ctx, node):
    x = node.inputs[0]
    known, axes = _axes(ctx, node)
    if ctx.prefers_pair(x) or not known:
        _on_parts(ctx, node, x, "pair form" if known else "axes known only at run time")
        return
    if axes is None:
        # Squeeze with no axes drops every 1; the trailing axis is 2, so it stays.
        out = ctx.squeeze(ctx.packed(x), None)
    else:
        make = ctx.unsqueeze if node.op == "Unsqueeze" else ctx.squeeze
        out = make(ctx.packed(x), _shift_axes(axes))
    ctx.set_packed(node.outputs[0], out)
    ctx.explain(
        f"axes {axes} -> {None if axes is None else _shift_axes(axes)} on the packed tensor"
    )


@rule("Flatten")
def flatten(ctx, node):
    x = node.inputs[0]
    if ctx.prefers_pair(x):
        _on_parts(ctx, node, x, "pair form")
        return
    axis = int(node.attrs.get("axis", 1))
    flat = ctx.emit("Flatten", [ctx.packed(x)], {"axis": _shift_axes([axis])[0]})
    out = ctx.emit("Reshape", [flat, np.array([0, -1, 2], np.int64)])
    ctx.set_packed(node.outputs[0], out)
    ctx.explain(f"Flatten(axis={axis}) then [0, -1, 2] on the packed tensor")
