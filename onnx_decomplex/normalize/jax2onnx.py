"""jax2onnx's readings: complex values it holds packed, and how its ops read them.

jax2onnx keeps some complex values typed complex and packs others itself as real
`[..., 2]` tensors, and one op may read a value in one form while the next reads it
in the other. Each consumer reads a complex value z as:

    Gather(z, 0|1, axis=rank z)                      -> Re z | Im z
    Concat(Unsqueeze(a, k), Unsqueeze(b, k), axis=k) -> a + i b     # k = rank a, or 0
    Cast(z, to=complex)                              -> z
    DFT(z)                                           -> DFT(view_as_real z), packed out
    Reshape(z, s), s twice z's element count         -> Reshape(view_as_real z, s)
    Reshape(z, s), s at run time, z stacked last     -> the same, unless s = Shape(w),
                                                        w as large as z
    ReduceL1(z)                                      -> the real sum of moduli

and any other op reads native z. DFT's packed output is a complex value too, which
each consumer reads in its own form. The pair on axis 0 (`[2, *S]`) is how the exporter
packs a complex value whose parts come from a scalar's; a real stack on axis 0 is read
as a pair only when its parts come from the parts of complex values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx_graphsurgeon as gs

from ..dtypes import is_complex_onnx, np_of, onnx_of, real_of
from ..rules.patterns import unsqueezed
from .facts import COMPLEX_OF, count
from .readings import reading

if TYPE_CHECKING:
    from .facts import Kinds
    from .protocol import ReadingContext

REAL_VALUED = frozenset({"ReduceL1"})
"""Ops whose complex result has no imaginary part (ReduceL1 sums moduli): the exporter
means the real value."""

AXIS_OPS = frozenset({"ArgMax", "ArgMin", "Softmax", "LogSoftmax", "Hardmax", "CumSum", "TopK"})
"""Ops besides the reductions that work along a named axis."""


@reading("Gather")
def channel(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """Gather(z, 0|1, axis=rank z): Re z or Im z."""
    if kinds[0] is None:
        return False
    z, idx = node.inputs
    value = walk.constant(idx)
    if value is None or value.ndim != 0 or int(value) not in (0, 1):
        return False
    axis = int(node.attrs.get("axis", 0))
    rank = walk.rank(z)
    on_pair = rank is not None and axis == rank
    on_pair0 = axis == 0 and walk.as_packed.get(z.name) == "first"
    if not (on_pair or on_pair0):
        return False
    part = walk.part(z, int(value))
    walk.become(node, "Identity", [part])
    out = node.outputs[0]
    walk.elem[out.name] = real_of(walk.kind[z.name])
    walk.shape[out.name] = walk.shape.get(z.name)
    walk.from_parts.add(out.name)
    walk.readings.append(
        f"{node.name} (Gather): {('Re', 'Im')[int(value)]} '{z.name}' (axis {axis} is its pair)"
    )
    return True


@reading("Concat")
def pair(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """Concat(Unsqueeze(a, k), Unsqueeze(b, k), axis=k): a + i b."""
    if len(node.inputs) != 2:
        return False
    found = [_unsqueezed(walk, t) for t in node.inputs]
    if None in found:
        return False
    (a, ka), (b, kb) = found
    rank = walk.rank(a)
    if (
        rank is None
        or rank != walk.rank(b)
        or ka != kb
        or not (walk.is_float(a) and walk.is_float(b))
    ):
        return False
    axis = int(node.attrs["axis"])
    axis = axis + rank + 1 if axis < 0 else axis
    complex_parts = a.name in walk.kind or b.name in walk.kind
    if a.name in walk.kind and b.name in walk.kind and not _zero_scaled(walk, b, a):
        return False  # two complex values stacked (TensorFlow's Pack), not a pair
    last = axis == ka == rank
    first = axis == ka == 0 and (complex_parts or {a.name, b.name} & walk.from_parts)
    if not (last or first) or _reduced_along(walk, node.outputs[0], axis):
        return False
    dtype = next(
        (walk.kind[t.name] for t in (a, b) if t.name in walk.kind),
        COMPLEX_OF.get(walk.elem.get(a.name), np.dtype(np.complex64)),
    )
    where = "the last axis" if last else "axis 0"
    if complex_parts:
        _sum_of_parts(walk, node, a, b, dtype, where)
    else:
        _stacked(walk, node, a, b, dtype, last, where)
    if not last and rank > 0:
        walk.axis0.append(node.name)
    return True


def _sum_of_parts(walk: ReadingContext, node: gs.Node, a, b, dtype: np.dtype, where: str) -> None:
    """a + i b, of a or b complex already: the value itself where b = a * 0."""
    out, shape = node.outputs[0], walk.shape.get(a.name)
    zero = _zero_scaled(walk, b, a)
    z = walk.native_of(a) if zero else walk.combine(a, b, dtype, shape, out.name)
    walk.become(node, "Identity", [z])
    walk.set_native(out, dtype, shape)
    how = f"'{a.name}' + i 0" if zero else f"'{a.name}' + i '{b.name}'"
    walk.readings.append(f"{node.name} (Concat): {how}, parts stacked on {where}")


def _stacked(
    walk: ReadingContext, node: gs.Node, a, b, dtype: np.dtype, last: bool, where: str
) -> None:
    """a + i b of real parts: the Concat's output holds it packed, as written."""
    out = node.outputs[0]
    walk.kind[out.name] = dtype
    walk.shape[out.name] = walk.shape.get(a.name)
    walk.parts[out.name] = (a, b)
    if last:
        walk.packed[out.name] = out
    walk.as_packed[out.name] = "last" if last else "first"
    walk.built.add(out.name)
    walk.readings.append(f"{node.name} (Concat): '{a.name}' + i '{b.name}', stacked on {where}")


def _unsqueezed(walk: ReadingContext, t: gs.Tensor) -> tuple[gs.Tensor, int] | None:
    """(x, axis) when `t` = Unsqueeze(x) on one new axis, the axis counted from 0."""
    found = unsqueezed(walk, t)
    rank = None if found is None else walk.rank(found[0])
    if rank is None:
        return None
    x, axis = found
    return x, axis + rank + 1 if axis < 0 else axis


def _reduced_along(walk: ReadingContext, t: gs.Tensor, axis: int) -> bool:
    """True when a consumer reduces `t` along `axis` by name (ReduceSum(axes=[-1]),
    Softmax, ...): a real stack, whose two halves are summed or compared, not a
    complex pair. The exporter never reduces over the axis it packs a pair on."""
    rank = len(walk.shape.get(t.name) or []) + 1
    for node in t.outputs:
        if not (node.op.startswith("Reduce") or node.op in AXIS_OPS):
            continue
        axes = node.attrs.get("axes", node.attrs.get("axis"))
        if axes is None and len(node.inputs) > 1 and node.inputs[1].name:
            axes = walk.constant(node.inputs[1])
        if axes is not None and {int(a) % rank for a in np.ravel(axes)} & {axis % rank}:
            return True
    return False


def _zero_scaled(walk: ReadingContext, b: gs.Tensor, a: gs.Tensor) -> bool:
    """True when b = a * 0: the exporter's imaginary part of a value already complex."""
    if not (isinstance(b, gs.Variable) and len(b.inputs) == 1 and b.inputs[0].op == "Mul"):
        return False
    x, y = b.inputs[0].inputs
    for w, c in ((x, y), (y, x)):
        value = walk.constant(c)
        if w is a and value is not None and value.size and not np.any(value):
            return True
    return False


@reading("DFT")
def dft(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """DFT reads its signal packed and gives a packed complex value."""
    x = node.inputs[0]
    if not walk.is_float(x):
        return False  # a half-precision signal: no complex type to read it as
    if kinds[0] is not None:
        node.inputs[0] = walk.packed_of(x)
    walk.infer(node)
    out = node.outputs[0]
    walk.readings.append(f"{node.name} (DFT): reads '{x.name}' packed, gives '{out.name}' packed")
    shape = walk.shape.get(out.name)
    dtype = walk.elem.pop(out.name, None) or real_of(kinds[0] or np.complex64)
    walk.kind[out.name] = COMPLEX_OF[np.dtype(dtype)]
    walk.shape[out.name] = None if shape is None else shape[:-1]
    walk.packed[out.name] = out
    walk.as_packed[out.name] = "last"
    return True


@reading("Reshape")
def reshape_packed(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """Reshape(z, s) with s twice z's element count: reads z packed. So does a
    Reshape of a pair the graph stacked on its last axis to a shape computed at run
    time (or with a -1 where z's size is not static), unless that is the shape of a
    value as large as z: the graph ran so."""
    if kinds[0] is None or node.attrs.get("allowzero"):
        return False
    z, target = node.inputs[0], node.inputs[1]
    value, n = walk.constant(target), count(walk.shape.get(z.name))
    if value is None or n is None and np.all(value >= -1) and np.sum(value == -1) == 1:
        if not _packed_at_run_time(walk, z, target):
            return False
    elif n is None or np.any(value <= 0) or int(np.prod(value)) != 2 * n:
        return False
    node.inputs[0] = walk.packed_of(z)
    walk.readings.append(f"{node.name} (Reshape): reads '{z.name}' packed")
    walk.infer(node)
    return True


def _packed_at_run_time(walk: ReadingContext, z: gs.Tensor, target: gs.Tensor) -> bool:
    """True when Reshape(z, target), target computed at run time, reshapes z packed:
    target is the shape of a value twice z's size, or z a pair the graph stacked on
    its last axis and target the shape of no value of z's size."""
    size, of = _symbolic_size(walk.shape.get(z.name)), _shape_source(walk, target)
    source = None if of is None else _symbolic_size(walk.shape.get(of.name))
    if size is not None and source is not None:
        return source == (2 * size[0], size[1])
    return z.name in walk.built and walk.as_packed.get(z.name) == "last"


def _shape_source(walk: ReadingContext, t: gs.Tensor) -> gs.Tensor | None:
    """x where `t` is Shape(x), through Casts and Identities; else None."""
    while isinstance(t, gs.Variable) and len(t.inputs) == 1:
        node = t.inputs[0]
        if node.op == "Shape" and not {"start", "end"} & set(node.attrs):
            return node.inputs[0]
        if node.op not in ("Cast", "Identity"):
            return None
        t = node.inputs[0]
    return None


def _symbolic_size(shape) -> tuple[int, tuple[str, ...]] | None:
    """A shape's element count as (the product of its static dims, its named dims
    sorted), None where a dim is unknown."""
    if shape is None or not all(isinstance(d, int | str) for d in shape):
        return None
    static = [d for d in shape if isinstance(d, int)]
    return int(np.prod(static, dtype=np.int64)), tuple(
        sorted(d for d in shape if isinstance(d, str))
    )


@reading(*REAL_VALUED)
def real_valued(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """ReduceL1(z) and the like: the real value, which ONNX types complex."""
    if kinds[0] is None:
        return False
    z, out = node.inputs[0], node.outputs[0]
    kind = walk.kind[z.name]
    node.inputs[0] = walk.native_of(z)
    value = gs.Variable(walk.unique(f"{out.name}_complex"), dtype=kind)
    node.outputs[0] = value
    walk.set_native(value, kind, None)
    walk.infer(node)
    real = real_of(kind)
    cast = gs.Node("Cast", name=walk.unique(f"{out.name}_real"), attrs={"to": onnx_of(real)})
    cast.inputs, cast.outputs = [value], [out]
    walk.graph.nodes.append(cast)
    walk.elem[out.name], walk.shape[out.name] = real, walk.shape.get(value.name)
    walk.readings.append(f"{node.name} ({node.op}): a real value, typed complex by ONNX")
    return True


@reading("Cast")
def complex_already(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """Cast(z, to=complex) of a z of that type already: z."""
    if kinds[0] is None or not is_complex_onnx(node.attrs["to"]):
        return False
    z = node.inputs[0]
    if np_of(node.attrs["to"]) != walk.kind[z.name]:
        return False
    walk.become(node, "Identity", [walk.native_of(z)])
    walk.set_native(node.outputs[0], walk.kind[z.name], walk.shape.get(z.name))
    walk.readings.append(f"{node.name} (Cast): '{z.name}' is complex already")
    return True
