"""Conjugation, a value built exactly from its parts, and view_as_real, as models
spell them.

Conjugation: ONNX has no Conj op, so a model writes one of:

    Sub(2 Re z, z)        = conj z
    Sub(Re z, i Im z)     = conj z
    Add(Re z, -i Im z)    = conj z

with, as ONNX can say them on complex values,

    Re z  = Cast(Cast(z, to=real), to=complex)   # a cast to real keeps the real part
    Im z  = Re(-i z) = Re(Mul(z, -1j))
    2 w   = Mul(w, 2) or Add(w, w)
    c w   = Mul(w, c) for a constant c

Each op in these spellings has its own rule, and rewriting them one at a time gives
the right numbers through a dozen real nodes. Seen whole, conj z is one node: the
imaginary part negated. The rules of the inner ops still run; what they emitted is
left unused and removed.

view_as_real: a model that reads a complex value back as interleaved real pairs
stacks its parts on a new last axis,

    Concat(Unsqueeze(Re z, -1), Unsqueeze(Im z, -1), axis=-1)

which is z's packed form. Those nodes are real, so no rule sees them; after the
rules, such a Concat is replaced by the packed tensor when z has one already.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from ..dtypes import is_complex_onnx, np_of


def _producer(t: gs.Tensor, op: str) -> gs.Node | None:
    # Original nodes stay attached until every rule has run, and come first: a rule
    # that makes a real output under its own name adds its node after them.
    if isinstance(t, gs.Variable) and t.inputs and t.inputs[0].op == op:
        return t.inputs[0]
    return None


def _equals(ctx, t: gs.Tensor, value: complex) -> bool:
    """True when `t` is a constant whose every element is `value`."""
    c = ctx.constant(t)
    return c is not None and c.size > 0 and bool(np.all(c == value))


def _scaled(ctx, t: gs.Tensor, value: complex) -> gs.Tensor | None:
    """w when `t` is `value` times w (Mul by a constant, or Add(w, w) for 2)."""
    node = _producer(t, "Mul")
    if node is not None:
        for w, c in (node.inputs, node.inputs[::-1]):
            if ctx.is_complex(w) and _equals(ctx, c, value):
                return w
    node = _producer(t, "Add")
    if value == 2 and node is not None and node.inputs[0] is node.inputs[1]:
        return node.inputs[0]
    return None


def _real_part_of(ctx, t: gs.Tensor) -> gs.Tensor | None:
    """z when `t` is Cast(Cast(z, to=real), to=complex), at z's own precision."""
    back = _producer(t, "Cast")
    if back is None or not is_complex_onnx(back.attrs["to"]):
        return None
    there = _producer(back.inputs[0], "Cast")
    if there is None or not ctx.is_complex(z := there.inputs[0]):
        return None
    same = np_of(there.attrs["to"]) == ctx.real_dtype(z) and ctx.dtype(t) == ctx.dtype(z)
    return z if same else None


def _imag_part_of(ctx, t: gs.Tensor) -> gs.Tensor | None:
    """z when `t` is Re(-i z)."""
    u = _real_part_of(ctx, t)
    return None if u is None else _scaled(ctx, u, -1j)


def conjugated(ctx, node: gs.Node) -> gs.Tensor | None:
    """z when the Add or Sub `node` computes conj z in one of the spellings above."""
    a, b = node.inputs
    if not (ctx.is_complex(a) and ctx.is_complex(b)):
        return None
    if node.op == "Sub":
        w = _scaled(ctx, a, 2)
        if w is not None and _real_part_of(ctx, w) is b:
            return b
        z, i_im = _real_part_of(ctx, a), _scaled(ctx, b, 1j)
        if z is not None and i_im is not None and _imag_part_of(ctx, i_im) is z:
            return z
        return None
    for re, rest in ((a, b), (b, a)):
        z, neg_i_im = _real_part_of(ctx, re), _scaled(ctx, rest, -1j)
        if z is not None and neg_i_im is not None and _imag_part_of(ctx, neg_i_im) is z:
            return z
    return None


def _negated(t: gs.Tensor | None) -> gs.Tensor | None:
    """x when `t` = Neg(x); None for no `t`."""
    node = None if t is None else _producer(t, "Neg")
    return None if node is None else node.inputs[0]


def _cast_to_complex(ctx, t: gs.Tensor | None) -> gs.Tensor | None:
    """x when `t` = Cast(x, to=complex) of a real x; None for no `t`."""
    cast = None if t is None else _producer(t, "Cast")
    if cast is None or not is_complex_onnx(cast.attrs["to"]) or ctx.is_complex(cast.inputs[0]):
        return None
    return cast.inputs[0]


def from_parts(ctx, node: gs.Node) -> tuple[gs.Tensor, gs.Tensor] | None:
    """(re, im) when the Add `node` builds re + i im exactly from real parts of one shape
    (how TensorFlow's Complex is read, signed zeros kept):

        (re, -0) + (-0, im),  (re, -0) = -Cast(-re),  (-0, im) = -((-Cast(im)) i)

    which is the pair itself."""
    if node.op != "Add":
        return None
    a, b = node.inputs
    re = _negated(_cast_to_complex(ctx, _negated(a)))
    rotated = _negated(b)
    minus_im = None if rotated is None else _scaled(ctx, rotated, 1j)
    im = _cast_to_complex(ctx, _negated(minus_im))
    if re is None or im is None or re.shape is None or re.shape != im.shape:
        return None
    return re, im


def _part_of(ctx, t: gs.Tensor) -> tuple[gs.Tensor, int] | None:
    """(z, 0) when `t` = Cast(z, to=real) at z's precision; (z, 1) when z is -i times
    the cast value, which makes `t` Im z."""
    cast = _producer(t, "Cast")
    if cast is None or is_complex_onnx(cast.attrs["to"]):
        return None
    w = cast.inputs[0]
    if not ctx.is_complex(w) or np_of(cast.attrs["to"]) != ctx.real_dtype(w):
        return None
    z = _scaled(ctx, w, -1j)
    return (z, 1) if z is not None else (w, 0)


def unsqueezed(ctx, t: gs.Tensor) -> tuple[gs.Tensor, int] | None:
    """(x, axis) when `t` = Unsqueeze(x) on one new axis; `ctx` reads constants."""
    node = _producer(t, "Unsqueeze")
    if node is None:
        return None
    axes = node.attrs.get("axes")
    if axes is None and len(node.inputs) > 1:
        axes = ctx.constant(node.inputs[1])
    if axes is None or np.asarray(axes).size != 1:
        return None
    return node.inputs[0], int(np.asarray(axes).reshape(()))


def view_as_real(ctx, node: gs.Node) -> gs.Tensor | None:
    """z when the real Concat `node` stacks Re z and Im z on a new last axis."""
    if node.op != "Concat" or len(node.inputs) != 2:
        return None
    stacked = [unsqueezed(ctx, t) for t in node.inputs]
    if None in stacked:
        return None
    parts = [_part_of(ctx, x) for x, _ in stacked]
    if None in parts or parts[0][0] is not parts[1][0] or [k for _, k in parts] != [0, 1]:
        return None
    z = parts[0][0]
    last = (-1, ctx.rank(z))
    if ctx.rank(z) is None or node.attrs.get("axis") not in last:
        return None
    return z if all(axis in last for _, axis in stacked) else None


def fold_view_as_real(ctx, nodes: list[gs.Node]) -> None:
    """Makes each real view_as_real Concat among `nodes` the packed form it stacks,
    where that form exists already. Run after every rule of the graph."""
    for node in nodes:
        z = view_as_real(ctx, node)
        if z is None or not ctx.has_packed(z):
            continue
        out = node.outputs[0]
        node.outputs.clear()
        ctx.node = node
        ctx.set_real(out, ctx.packed(z))
        ctx.set_packed(z, out)
        ctx.explain(f"recognised view_as_real({z.name}): the packed tensor itself")
