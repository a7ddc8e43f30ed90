"""An Einsum of two operands as one MatMul, and the Transposes and Reshapes that put its
letters in place (`plan`).

With x one operand and w the other, the letters fall in four groups:

    G  the letters both hold that the output keeps, and some of x's (w broadcasts)
    X  x's other letters that the output keeps: one axis
    W  w's letters that the output keeps and x lacks: one axis
    C  the letters summed, in x's order: one axis

and the Einsum is MatMul(x as [G, X, C], w as [G, C, W]) -> [G, X, W], or with w on the
left, MatMul(w as [G, W, C], x as [G, C, X]) -> [G, W, X]; then a Reshape to one axis a
letter, and a Transpose into the output's order where the groups are not in it. Of the
ways to choose G, the plan with the fewest Transposes of runtime values is taken, then
the fewest Reshapes, then the fewest batch axes: `bsd,kd->bsk` is one MatMul by w
transposed at rewrite time, `bix,io->box` one MatMul with w on the left, `bixy,io->boxy`
the same between two Reshapes. Where a letter repeats in a term (a diagonal), a term is a scalar, or a letter
of one operand is summed alone, there is no plan.

`einsum`, the lowering, puts the plan in the node's place; a constant operand is
arranged at rewrite time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from ...constants import evaluable, evaluate, gs_value
from ...emit import Emitter
from .lowering import Lowered, lowering, op, static


@dataclass(frozen=True)
class Plan:
    """Each operand is transposed by its perm, then reshaped to its shape; the product is
    reshaped to y_shape, then transposed by y_perm. None: nothing to do there. A shape
    holds 0 to copy the dim at its index, and at most one -1."""

    x_perm: tuple[int, ...] | None
    x_shape: tuple[int, ...] | None
    w_perm: tuple[int, ...] | None
    w_shape: tuple[int, ...] | None
    x_left: bool
    y_shape: tuple[int, ...] | None
    y_perm: tuple[int, ...] | None


class _NoPlan(Exception):
    pass


def _perm(src: str, order: str) -> tuple[int, ...] | None:
    return None if order == src else tuple(src.index(letter) for letter in order)


def _reshape(src: list[str], dst: list[str], dims: dict) -> tuple[int, ...] | None:
    """Reshape values taking axes `src` to axes `dst`, each axis a group of letters (of
    their sizes multiplied; an empty group is an axis of 1): 0 where an axis of `dst` is
    the one of `src` at its index, else its size, or -1 for one that is not static. None
    where `src` is `dst`."""
    if src == dst:
        return None
    values, copied = [], []
    for i, group in enumerate(dst):
        sizes = [dims[letter] for letter in group]
        if i < len(src) and src[i] == group:
            values.append(0)
            copied += sizes
        elif all(isinstance(size, int) for size in sizes):
            values.append(int(np.prod(sizes, dtype=np.int64)))
            if values[-1] == 0:
                raise _NoPlan  # it would read as a copy
        else:
            values.append(-1)
    # -1 is inferred once, and not beside a dim that may be 0 at run time.
    if values.count(-1) > 1 or (
        -1 in values and not all(isinstance(d, int) and d > 0 for d in copied)
    ):
        raise _NoPlan
    return tuple(values)


def _parse(equation: str) -> tuple[str, str, str] | None:
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if not arrow or len(terms) != 2 or "." in equation or not all(terms):
        return None
    a, b = terms
    if any(len(set(t)) < len(t) for t in (a, b, out)) or not set(out) <= set(a) | set(b):
        return None
    if (set(a) ^ set(b)) - set(out):
        return None  # a letter of one operand summed alone
    return a, b, out


def plan(
    equation: str,
    x_index: int,
    x_dims: Sequence,
    w_dims: Sequence,
    w_runtime: bool = False,
) -> Plan | None:
    """The MatMul form of `equation` with operand `x_index` as x; None where there is
    none. Dims are ints where static. With `w_runtime`, w's Transposes count with x's."""
    parsed = _parse(equation)
    if parsed is None:
        return None
    a, b, out = parsed
    tx, tw = (a, b) if x_index == 0 else (b, a)
    if len(x_dims) != len(tx) or len(w_dims) != len(tw):
        return None
    dims = {}
    for letter, d in [*zip(tx, x_dims, strict=True), *zip(tw, w_dims, strict=True)]:
        known = dims.get(letter)
        if isinstance(known, int) and isinstance(d, int) and d != known:
            return None  # sizes that differ: Einsum does not broadcast them
        if not isinstance(known, int):
            dims[letter] = d if isinstance(d, int) and d >= 0 else None
    c = "".join(letter for letter in tx if letter in tw and letter not in out)
    best = None
    for g in range(len(out) + 1):
        groups = _groups(out, g, tx, tw)
        if not groups[1] and any(letter not in tw for letter in groups[0]):
            continue  # x's rows made batches of one: a matrix-vector product each
        for x_left in (True, False):
            try:
                found = _plan(groups, c, x_left, tx, tw, out, dims)
            except _NoPlan:
                continue
            transposes = sum(
                p is not None for p in (found.x_perm, found.y_perm, w_runtime and found.w_perm)
            )
            reshapes = sum(s is not None for s in (found.x_shape, found.y_shape))
            # then the fewest batch axes (the larger products), x on the left
            cost = (transposes, reshapes, len(groups[0]), not x_left)
            if best is None or cost < best[0]:
                best = (cost, found)
    return None if best is None else best[1]


def _groups(out: str, g: int, tx: str, tw: str) -> tuple[str, str, str]:
    """G, X and W, in the output's order, with G the letters both operands hold and
    those of x among the output's first `g`."""
    head = out[:g]
    batch = "".join(letter for letter in out if letter in tx and (letter in tw or letter in head))
    return (
        batch,
        "".join(letter for letter in out if letter in tx and letter not in batch),
        "".join(letter for letter in out if letter not in tx),
    )


def _plan(groups, c: str, x_left: bool, tx: str, tw: str, out: str, dims: dict) -> Plan:
    batch, xs, ws = groups
    x_order = batch + (xs + c if x_left else c + xs)
    # w: its batch letters in G's order, an axis of 1 for each it lacks (leading ones
    # dropped: MatMul broadcasts them); then C and W.
    w_order = "".join(letter for letter in batch if letter in tw) + (c + ws if x_left else ws + c)
    w_batch = [letter if letter in tw else "" for letter in batch]
    while w_batch and not w_batch[0]:
        w_batch.pop(0)
    product = [*batch, *((xs, ws) if x_left else (ws, xs))]
    letters = batch + (xs + ws if x_left else ws + xs)
    return Plan(
        x_perm=_perm(tx, x_order),
        x_shape=_reshape(list(x_order), [*batch, *((xs, c) if x_left else (c, xs))], dims),
        w_perm=_perm(tw, w_order),
        w_shape=_reshape(list(w_order), [*w_batch, *((c, ws) if x_left else (ws, c))], dims),
        x_left=x_left,
        y_shape=_reshape(product, list(letters), dims),
        y_perm=_perm(letters, out),
    )


def _dims(t: gs.Tensor, rank: int) -> list:
    shape = t.shape if t.shape is not None and len(t.shape) == rank else [None] * rank
    return [static(d) for d in shape]


def _arranged(e: Emitter, t, perm, shape):
    """`t` transposed by `perm`, then reshaped to `shape` (0 copies a dim), each where
    given: in numpy for a constant, else by nodes."""
    if perm is None and shape is None:
        return t
    value = gs_value(t)
    if value is not None:
        value = value if perm is None else np.transpose(value, perm)
        if shape is not None:
            value = value.reshape([value.shape[i] if v == 0 else v for i, v in enumerate(shape)])
        return np.ascontiguousarray(value)
    if perm is not None:
        t = op(e, "Transpose", [t], {"perm": list(perm)})
    if shape is not None:
        t = op(e, "Reshape", [t, np.array(shape, np.int64)])
    return t


FOLDED_UP_TO = 1 << 22
"""The most values of the one constant that an Einsum's constant operands are contracted
into (`_folded`)."""


COMPUTED_UP_TO = 16
"""The most nodes `_computed` evaluates for one operand."""


def _computed(t: gs.Tensor, opset: int, budget: list[int]) -> np.ndarray | None:
    """t's value where it is a constant, or computed from constants alone by at most
    `budget[0]` nodes in all (run by `onnx.reference`); else None (a node with a graph
    or tensor attribute among them, too)."""
    value = gs_value(t)
    if value is not None or len(t.inputs) != 1 or budget[0] <= 0:
        return value
    node = t.inputs[0]
    budget[0] -= 1
    if not evaluable(node.op, node.domain):
        return None
    feeds = {}
    for i in node.inputs:
        if i.name:
            feeds[i.name] = _computed(i, opset, budget)
            if feeds[i.name] is None:
                return None
    try:
        proto = onnx.helper.make_node(
            node.op, [i.name for i in node.inputs], [o.name for o in node.outputs], **node.attrs
        )
    except (TypeError, ValueError):  # a gs tensor or graph as an attribute
        return None
    values = evaluate(proto, feeds, opset)
    return None if values is None else values[node.outputs.index(t)]


def _folded(
    equation: str, inputs: list[gs.Tensor], opset: int, name: str
) -> tuple[str, list[gs.Tensor]] | None:
    """An Einsum of three or more operands, all constants but one, x, as the Einsum of x
    and K, the constants contracted in numpy (in float64, then rounded once), the letters
    that x and the output lack summed there:

        amb,mnc,and,bcde->ae   (x: mnc)  ->  mnc,mncae->ae,  K = einsum(amb,and,bcde->mncae)

    The beamformers' quadratic form a^H R a, with the sign tensor of a complex product,
    is one. An operand computed from constants alone counts as one; K is named `name`.
    None where the operands are not so, or K would exceed `FOLDED_UP_TO`."""
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if not arrow or "." in equation or len(terms) < 3 or len(terms) != len(inputs):
        return None
    values = [_computed(t, opset, [COMPUTED_UP_TO]) for t in inputs]
    runtime = [k for k, v in enumerate(values) if v is None]
    if len(runtime) != 1:
        return None
    x = runtime[0]
    given = [
        (t, np.asarray(v)) for k, (t, v) in enumerate(zip(terms, values, strict=True)) if k != x
    ]
    kept = "".join(dict.fromkeys(c for t, _ in given for c in t if c in terms[x] or c in out))
    dims = {c: d for t, v in given for c, d in zip(t, v.shape, strict=False)}
    if any(v.ndim != len(t) for t, v in given) or np.prod([dims[c] for c in kept]) > FOLDED_UP_TO:
        return None
    dtype = np.result_type(*(v for _, v in given))
    folded = np.einsum(
        f"{','.join(t for t, _ in given)}->{kept}",
        *(v.astype(np.float64) for _, v in given),
        optimize=True,  # pairwise, in the cheapest order: a chain of products stays cheap
    )
    return f"{terms[x]},{kept}->{out}", [inputs[x], gs.Constant(name, folded.astype(dtype))]


@lowering("Einsum")
def einsum(e: Emitter, node: gs.Node, lowered: Lowered) -> bool | None:
    """An Einsum of two operands as one MatMul, between the Transposes and Reshapes that
    put its letters in place (`einsum.plan`); a constant operand is arranged at rewrite
    time, and the constant operands of one with more are contracted into one first
    (`_folded`). jax2onnx writes every dot_general as an Einsum; this form takes 0.18 to
    0.95 of the time of onnxruntime's Einsum, measured on FNO's and Llama's equations."""
    equation = str(node.attrs.get("equation", ""))
    inputs = list(node.inputs)
    folded = _folded(equation, inputs, e.opset, e.unique(f"{node.name}_folded"))
    if folded is not None:
        equation, inputs = folded
    terms = equation.replace(" ", "").partition("->")[0].split(",")
    if len(inputs) != 2 or len(terms) != 2:
        return False
    constant = [gs_value(t) is not None for t in inputs]
    x_index = 1 if constant[0] and not constant[1] else 0
    x, w = inputs[x_index], inputs[1 - x_index]
    found = plan(
        equation,
        x_index,
        _dims(x, len(terms[x_index])),
        _dims(w, len(terms[1 - x_index])),
        w_runtime=not constant[1 - x_index],
    )
    if found is None:
        return False
    xs = _arranged(e, x, found.x_perm, found.x_shape)
    ws = _arranged(e, w, found.w_perm, found.w_shape)
    y = op(e, "MatMul", [xs, ws] if found.x_left else [ws, xs])
    if found.y_shape is not None:
        y = op(e, "Reshape", [y, np.array(found.y_shape, np.int64)])
    if found.y_perm is not None:
        y = op(e, "Transpose", [y], {"perm": list(found.y_perm)})
    e.bind(node.outputs[0], y)
    node.outputs.clear()
    written = str(node.attrs.get("equation", ""))
    how = f" (its constants contracted: '{equation}')" if folded is not None else ""
    lowered.notes.append(f"{node.name}: Einsum '{written}' -> MatMul{how}")
