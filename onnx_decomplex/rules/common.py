"""Helpers shared by rules: running an op on each part, moving axes, and a modulus's form.

Logical axes (those of the complex value) map to packed axes (those of the S + [2]
tensor) unchanged when non-negative, and moved down by one when negative, so that
they skip the trailing (re, im) axis.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..shapes import static


def shift_axis(axis: int) -> int:
    """Logical axis -> packed axis."""
    return int(axis) if axis >= 0 else int(axis) - 1


def shift_axes(axes: Iterable[int]) -> list[int]:
    """Logical axes -> packed axes."""
    return [shift_axis(a) for a in axes]


def shift_axes_input(ctx, t):
    """Axes given as a tensor -> packed axes: in numpy when constant, else
    Where(axes < 0, axes - 1, axes)."""
    value = ctx.constant(t)
    if value is not None:
        return np.where(value < 0, value - 1, value).astype(value.dtype)
    one = np.array(1, np.int64)
    return ctx.where(ctx.less(t, np.array(0, np.int64)), ctx.sub(t, one), t)


def node_axes(ctx, node):
    """The axes a node names, in either spelling: ("list", axes) when known now
    (an attribute, or a constant input), ("tensor", t) when given at run time, or
    ("none", None) when the node names none."""
    if "axes" in node.attrs:
        return "list", [int(a) for a in node.attrs["axes"]]
    if len(node.inputs) > 1 and node.inputs[1].name:
        value = ctx.constant(node.inputs[1])
        if value is None:
            return "tensor", node.inputs[1]
        return "list", [int(a) for a in value.reshape(-1)]
    return "none", None


def optional_input(node, i: int):
    """Input `i` of `node`, or None when it is omitted."""
    return node.inputs[i] if len(node.inputs) > i and node.inputs[i].name else None


def append_dim(ctx, shape_t, dim: int):
    """A shape (or repeats) tensor with `dim` appended: in numpy when constant."""
    value = ctx.constant(shape_t)
    if value is not None:
        return np.append(value.astype(np.int64), np.int64(dim))
    return ctx.emit("Concat", [shape_t, np.array([dim], np.int64)], {"axis": 0})


def set_outputs_packed(ctx, node, outs) -> None:
    """Records the packed results of an op with one or more outputs."""
    outs = outs if isinstance(outs, list) else [outs]
    for y, out in zip(node.outputs, outs, strict=True):
        ctx.set_packed(y, out)


def on_parts(ctx, node, data: Iterable[int], why: str, attrs: dict | None = None) -> None:
    """y = (op(re...), op(im...)): the op runs once on the real parts and once on the
    imaginary parts of its data inputs (positions `data`; a real one counts as (r, 0)).
    Every other input and attribute is passed as it is. Only ops that act on each
    part alike (they move, select or linearly combine elements) may use this.
    """
    data = set(data)
    dtype = ctx.real_dtype(node.outputs[0])
    pairs = {
        i: ctx.as_pair(t, dtype, full=True)
        for i, t in enumerate(node.inputs)
        if i in data and t.name
    }
    attrs = node.attrs if attrs is None else attrs
    results = []
    for part in (0, 1):
        ins = [
            pairs[i][part] if i in pairs else (t if t.name else None)
            for i, t in enumerate(node.inputs)
        ]
        outs = ctx.emit(node.op, ins, attrs, outputs=len(node.outputs))
        results.append(outs if isinstance(outs, list) else [outs])
    for y, re, im in zip(node.outputs, *results, strict=True):
        ctx.set_pair(y, re, im)
    ctx.explain(f"applied to both parts ({why})")


def parts_if_paired(ctx, node, data: list[int]) -> bool:
    """Runs the op on each part when a data input exists only as a pair, which saves
    a pack and an unpack. Returns whether it did."""
    if not ctx.prefers_pair(*[node.inputs[i] for i in data if i < len(node.inputs)]):
        return False
    on_parts(ctx, node, data, "pair form")
    return True


WIDE_MODULUS_UP_TO = 4096
"""The most values whose float32 moduli the onnxruntime target sums in float64
(`cmath.absolute`'s `widen`): 7 nodes where the scaled form takes 11, which pays where
dispatch outweighs arithmetic, and float64's half-width vectors do not. One thread, one
`Abs`, against the scaled form: 0.89 of its time at 64 values, 0.99 at 4096, 1.15 at 16384
and 1.24 at 1M."""


def widens_modulus(ctx, z) -> bool:
    """Whether |z| sums its squares in float64: on the onnxruntime target (whose float64
    is IEEE double, unlike OpenVINO's CPU's), for a complex64 z of at most
    `WIDE_MODULUS_UP_TO` values, a static count."""
    shape = ctx.shape(z)
    if not ctx.contrib or not static(shape):
        return False
    return ctx.real_dtype(z) == np.float32 and int(np.prod(shape)) <= WIDE_MODULUS_UP_TO
