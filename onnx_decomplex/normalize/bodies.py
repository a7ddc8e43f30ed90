"""Bodies and branches, read as their enclosing graph is.

An If's branches are read with the values they capture; an output is complex where
the branches' are. A Loop body that declares packed the complex state it is given is
read the same way, with that state; a Scan body like it is not read (`normalize`
refuses it, naming the node). A body that holds TensorFlow's ops is read too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import onnx_graphsurgeon as gs

from ..dtypes import is_complex_np
from .facts import Kinds, merged
from .inference import body_results
from .tensorflow_ops import holds_tensorflow

if TYPE_CHECKING:
    from .protocol import ReadingContext


def loop(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> None:
    """A Loop whose body mixes the forms too: its body read the same way, with the
    state the node gives it, and the state and scan outputs it gives back."""
    body = node.attrs["body"]
    given = {b.name: k for b, k in zip(body.inputs[2:], kinds[2:], strict=False) if k}
    inner = walk.child(body, True, given)
    adopt(walk, inner, f"{node.name} body")
    for i, (t, kind) in enumerate(zip(node.inputs, kinds, strict=True)):
        if kind is not None:
            node.inputs[i] = walk.native_of(t)
    states = len(node.inputs) - 2
    results = body_results(node, inner)
    for j, (out, result) in enumerate(zip(node.outputs, body.outputs[1:], strict=False)):
        kind = inner.kind.get(result.name)
        if j < states and (kind is None) != (kinds[2 + j] is None):
            walk.conflict(node, "loop state is complex on one side of the body only", out.name)
        dtype, shape = results[j] or (kind, None)
        if kind is not None:
            walk.set_native(out, kind, shape)
        elif dtype is not None:
            walk.record(out, dtype, shape)


def branches(walk: ReadingContext, node: gs.Node) -> None:
    """An If: each branch read the same way, with the values it captures. An output
    is complex where the branches' are."""
    walks = []
    for key in ("then_branch", "else_branch"):
        inner = walk.child(node.attrs[key], walk.mixed, {})
        adopt(walk, inner, f"{node.name} {key}")
        walks.append(inner)
    then, other = walks
    for out, a, b in zip(node.outputs, then.output_names, other.output_names, strict=False):
        kinds = then.kind.get(a), other.kind.get(b)
        reals = then.elem.get(a), other.elem.get(b)
        known = [k is not None or r is not None for k, r in zip(kinds, reals, strict=True)]
        if all(known) and (kinds[0] is None) != (kinds[1] is None):
            walk.conflict(node, "complex in one branch only", out.name)
        shape = merged(then.shape.get(a), other.shape.get(b))
        if kinds[0] or kinds[1]:
            walk.set_native(out, kinds[0] or kinds[1], shape)
        elif reals[0] is not None:
            walk.record(out, reals[0], shape)


def adopt(walk: ReadingContext, inner: ReadingContext, where: str) -> None:
    """What the walk of a body or a branch found, as `walk`'s."""
    walk.bodies += [inner, *inner.bodies]
    walk.failures.update(inner.failures)
    walk.conflicts += inner.conflicts
    walk.readings += [f"{where}: {line}" for line in inner.readings]
    walk.readings += [f"{where}: {io} declared packed" for io in inner.packed_io]
    walk.unread += inner.unread
    walk.axis0 += inner.axis0
    walk.warnings += [f"{where}: {line}" for line in inner.warnings]
    walk.evidence += inner.evidence
    walk.weak += inner.weak
    walk.splits |= inner.splits


def body_to_read(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> str | None:
    """Why the body of a Loop or Scan must be read too, not taken as written: it
    holds TensorFlow's ops, or declares packed the complex values it is given."""
    if node.op not in ("Loop", "Scan"):
        return None
    if holds_tensorflow(node):
        return "its body holds TensorFlow's ops, left as they are"
    if _mixed_body(node, kinds):
        return "its body declares packed the complex values it is given"
    return None


def _mixed_body(node: gs.Node, kinds: Kinds) -> bool:
    """True when the body declares real an input the node gives it complex: the
    exporter's packed declaration, inside a body."""
    body = node.attrs["body"]
    given = kinds[2:] if node.op == "Loop" else kinds
    skip = 2 if node.op == "Loop" else 0
    for t, kind in zip(body.inputs[skip:], given, strict=False):
        if kind is not None and t.dtype is not None and not is_complex_np(t.dtype):
            return True
    return False
