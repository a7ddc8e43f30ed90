"""tf2onnx's half-conversions: complex ops it converts as if their values were real.

Its magnitude of a complex z reads z's pair on a leading axis, tf2onnx's own packed
layout:

    Sqrt(Squeeze(Pow(Gather(z, [0]), 2+0j) + Pow(Gather(z, [1]), 2+0j), 0))
        -> |z|, each Gather Unsqueeze(Re z | Im z, 0), each exponent real 2

Without the Squeeze and the root, the squares are complex squares. A complex value
cast to real, moved (`MOVES`) and cast back to complex is converted as written, with
a warning: the imaginary part is gone (tf2onnx's complex Pad; its PadV2 pads with the
real part of its complex value, which is all that real data can take). So is an Equal of
complex values cast to real: it compares their real parts (tf2onnx's complex Equal,
which casts to int32).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx_graphsurgeon as gs

from ..dtypes import is_complex_onnx, real_of
from ..rules.common import node_axes
from .readings import half_conversion

if TYPE_CHECKING:
    from .facts import Kinds
    from .protocol import ReadingContext

MOVES = frozenset(
    {"Identity", "Pad", "Reshape", "Transpose", "Slice", "Squeeze", "Unsqueeze", "Expand", "Tile",
     "Flatten", "Gather", "Split"}
)  # fmt: skip
"""Ops that only move values: a real part they carry is still the one a Cast kept."""


@half_conversion("Gather")
def magnitude(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """Gather(z, [i], axis=0) in tf2onnx's magnitude: Re z or Im z on a leading axis of 1."""
    index = magnitude_part(walk, node)
    if index is None:
        return False
    z = node.inputs[0]
    part = walk.part(z, index)
    walk.become(node, "Unsqueeze", [part, walk.scalar([0], np.int64, f"{node.name}_axes")])
    out = node.outputs[0]
    shape = walk.shape.get(z.name)
    walk.elem[out.name] = real_of(walk.kind[z.name])
    walk.shape[out.name] = None if shape is None else [1, *shape]
    walk.readings.append(
        f"{node.name} (Gather): {('Re', 'Im')[index]} '{z.name}', tf2onnx's pair on axis 0"
    )
    return True


def magnitude_part(walk: ReadingContext, node: gs.Node) -> int | None:
    """i, when `node` is Gather(z, [i], axis=0) of a complex z in tf2onnx's magnitude.

    tf2onnx writes it for a raw FFT's output, and for any complex value whose leading
    dim is 2; a native reading of it may type-check, but means another thing."""
    if node.name in walk.magnitude:
        return walk.magnitude[node.name]
    z, idx = node.inputs
    index = walk.constant(idx)
    if (
        z.name not in walk.kind
        or int(node.attrs.get("axis", 0)) != 0
        or index is None
        or index.shape != (1,)
        or int(index[0]) not in (0, 1)
    ):
        return None
    i = int(index[0])
    squares = [_squared(walk, t) for t in _summed_with(walk, node.outputs[0])]
    other = [g for g in squares if g is not None and g is not node and g.inputs[0] is z]
    other_index = walk.constant(other[0].inputs[1]) if other else None
    if other_index is None or other_index.size != 1 or int(other_index.ravel()[0]) != 1 - i:
        return None
    walk.magnitude[other[0].name] = 1 - i
    return i


def _summed_with(walk: ReadingContext, part: gs.Tensor) -> list[gs.Tensor]:
    """The two operands of Sqrt(Squeeze(Add(Pow(part, 2), y), 0)), when that is
    `part`'s one use. Without the root and the Squeeze, a sum of squares of the
    rows is the complex value it says: no magnitude."""
    if len(part.outputs) != 1:
        return []
    square = part.outputs[0].outputs[0]
    if _squared(walk, square) is None or [n.op for n in square.outputs] != ["Add"]:
        return []
    total = square.outputs[0].outputs[0]
    squeeze = total.outputs[0] if [n.op for n in total.outputs] == ["Squeeze"] else None
    if squeeze is None or node_axes(walk, squeeze) != ("list", [0]):
        return []
    if [n.op for n in squeeze.outputs[0].outputs] != ["Sqrt"]:
        return []
    return list(square.outputs[0].inputs)


def _squared(walk: ReadingContext, t: gs.Tensor) -> gs.Node | None:
    """The Gather node g when `t` = Pow(g's output, 2) with a 2 or 2+0j exponent."""
    if not isinstance(t, gs.Variable) or len(t.inputs) != 1 or t.inputs[0].op != "Pow":
        return None
    base, w = t.inputs[0].inputs
    value = walk.constant(w)
    if value is None or value.size != 1 or value.reshape(-1)[0] != 2:
        return None
    if len(base.inputs) != 1 or base.inputs[0].op != "Gather":
        return None
    return base.inputs[0]


@half_conversion("Pow")
def real_exponent(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """Pow(x, w) of a real x, w a complex constant with no imaginary part (tf2onnx's
    2+0j of a magnitude): the real power."""
    if kinds[0] is not None or kinds[1] is None:
        return False
    base, w = node.inputs
    value = walk.constant(w)
    if value is None or np.any(value.imag):
        return False
    real = value.real.astype(walk.elem.get(base.name, np.float32))
    node.inputs[1] = gs.Constant(walk.unique(f"{w.name}_real"), real)
    walk.record(node.inputs[1], real.dtype, list(real.shape))
    walk.readings.append(f"{node.name} (Pow): exponent '{w.name}' is real")
    walk.plain(node)
    return True


@half_conversion("Pad")
def real_pad_value(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """Pad(x, pads, c) of a real x, c a complex constant (tf2onnx's complex PadV2, which
    pads the real part a Cast kept): c's real part, as the Cast would have kept it."""
    if kinds[0] is not None or len(node.inputs) < 3 or kinds[2] is None:
        return False
    value = walk.constant(node.inputs[2])
    if value is None:
        return False
    c = node.inputs[2]
    real = value.real.astype(walk.elem.get(node.inputs[0].name, np.float32))
    node.inputs[2] = gs.Constant(walk.unique(f"{c.name}_real"), real)
    walk.record(node.inputs[2], real.dtype, list(real.shape))
    walk.readings.append(f"{node.name} (Pad): pad value '{c.name}' taken at its real part")
    walk.plain(node)
    return True


def casts_to_real(walk: ReadingContext, node: gs.Node) -> None:
    """Notes a Cast of a complex value to real: the real part it keeps."""
    walk.cast_real[node.outputs[0].name] = (node, False)


def casts_back(walk: ReadingContext, node: gs.Node) -> None:
    """Warns of a complex value cast to real, moved (padded, sliced, ...) but not
    computed on, and cast back to complex, or compared by Equal: the imaginary part
    is lost. tf2onnx wraps its real-only converters so (a complex Pad, Equal). Cast to real and straight back, with
    nothing between, is Re z as a complex value: an idiom, and no warning."""
    kept = next((walk.cast_real[t.name] for t in node.inputs if t.name in walk.cast_real), None)
    if kept is None:
        return
    cast, moved = kept
    if node.op == "Cast" and is_complex_onnx(node.attrs["to"]) and moved:
        walk.warnings.append(
            f"'{cast.name}' casts complex '{cast.inputs[0].name}' to real, '{node.name}' "
            "casts it back to complex: its imaginary part is dropped (converted as written)"
        )
    elif node.op == "Equal":
        walk.warnings.append(
            f"'{node.name}' compares what '{cast.name}' kept of complex "
            f"'{cast.inputs[0].name}', its real part cast to a real type: the imaginary "
            "parts are not compared (converted as written)"
        )
    elif node.op in MOVES:
        walk.cast_real.update((t.name, (cast, True)) for t in node.outputs)
