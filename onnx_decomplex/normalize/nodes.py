"""How a walk takes each node: through the exporters' readings, or as written.

A node that no reading takes reads its complex values natively; a real operand of
an op with a complex one is promoted by that op (`PROMOTED`). In a graph that runs
as written, an op that computes something else on a packed pair than on the complex
value it holds (`DIFFERS`) is the evidence that the exporter meant the pair complex.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx_graphsurgeon as gs

from ..dtypes import is_complex_onnx
from ..graphs import is_default_domain
from ..rules import registry
from . import bodies, tf2onnx
from .readings import HALF_CONVERSIONS, READINGS
from .tensorflow_ops import is_tensorflow, read_tensorflow

if TYPE_CHECKING:
    from .facts import Kinds
    from .protocol import ReadingContext

PROMOTED = frozenset({"Add", "Sub", "Mul", "Div", "MatMul", "Equal"})
"""Ops whose operands share one type: a real operand meeting a complex one is cast to
complex, as the exporter's framework promoted it."""

DIFFERS = frozenset(
    {"Exp", "Log", "Sqrt", "Abs", "Sin", "Cos", "Tan", "Sinh", "Cosh", "Tanh", "Asin", "Acos",
     "Atan", "Asinh", "Acosh", "Atanh", "Sigmoid", "Reciprocal", "Sign", "Pow", "MatMul",
     "Gemm", "Einsum", "Conv", "ConvTranspose", "ReduceProd", "ReduceL1", "ReduceL2",
     "ReduceSumSquare", "ReduceLogSumExp", "Softmax", "LogSoftmax"}
)  # fmt: skip
"""Ops that compute something else on a packed tensor than on the complex value it
holds (so do Mul and Div of two complex values). One of them reading a pair the
graph built is evidence, even in a graph that runs as written."""

SOURCES = frozenset({"Cast", "Constant", "ConstantOfShape", "EyeLike"})
"""Ops that may make a complex value from no complex input: their rules' `infer` says
which outputs are complex, as it tells analysis."""


def visit(walk: ReadingContext, node: gs.Node) -> None:
    """Takes `node`: TensorFlow's op, a body or branch, a reading, or as written."""
    kinds = [walk.kind.get(t.name) if t.name else None for t in node.inputs]
    if is_tensorflow(node):
        if walk.mixed:
            read_tensorflow(walk, node)
        else:
            walk.conflict(node, f"{node.op} is TensorFlow's op, left as it is; no ONNX op")
        return
    if node.op == "If":
        bodies.branches(walk, node)
        return
    why = bodies.body_to_read(walk, node, kinds)
    if why is not None:
        if not walk.mixed:
            walk.conflict(node, why)
        elif node.op == "Loop":
            bodies.loop(walk, node, kinds)
            return
        else:
            walk.unread.append(node)
    if not walk.mixed and node.op == "Gather" and tf2onnx.magnitude_part(walk, node) is not None:
        walk.conflict(node, "tf2onnx's magnitude, which reads its pair on a leading axis")
    if walk.mixed and read(walk, node, kinds):
        return
    if not any(kinds):
        plain(walk, node)
        return
    native(walk, node, kinds)


def read(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> bool:
    """Applies the exporters' readings of `node`'s op: tf2onnx's half-conversion, then
    jax2onnx's reading. False when none applies."""
    for registered in (HALF_CONVERSIONS, READINGS):
        found = registered.get(node.op)
        if found is not None and found.fn(walk, node, kinds):
            return True
    return False


def plain(walk: ReadingContext, node: gs.Node) -> None:
    """A node that reads no complex value: as written."""
    if node.op == "DFT" or node.op == "Gather" and _splits_last_axis(walk, node):
        walk.splits = True
    if any(t.name in walk.from_parts for t in node.inputs):
        walk.from_parts.update(t.name for t in node.outputs)
    tf2onnx.casts_back(walk, node)
    source = registry.get(node.op) if node.op in SOURCES else None
    if source is not None and is_default_domain(node.domain):  # (none: analysis refuses)
        kinds = source.infer(node, [None] * len(node.inputs))
        for out, kind in zip(node.outputs, kinds, strict=True):
            if kind is not None:
                walk.kind[out.name] = np.dtype(kind)
                walk.native[out.name] = out
    walk.infer(node)


def _splits_last_axis(walk: ReadingContext, node: gs.Node) -> bool:
    """Gather(x, 0|1, axis=-1) on a real x whose last axis is 2."""
    x, idx = node.inputs
    shape, index = walk.shape.get(x.name), walk.constant(idx)
    if not shape or shape[-1] != 2 or index is None or index.ndim or int(index) not in (0, 1):
        return False
    return int(node.attrs.get("axis", 0)) in (-1, len(shape) - 1)


def native(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> None:
    """Any op on native complex values, a real operand promoted by the op."""
    if walk.mixed:
        for t in node.inputs:
            _wants_complex(walk, node, t, kinds)
        _evidence(walk, node, kinds)
    to = np.result_type(*[k for k in kinds if k is not None])
    promoted = {}  # the walk as written reads a promoted operand, and casts none
    for i, (t, kind) in enumerate(zip(node.inputs, kinds, strict=True)):
        if kind is not None and walk.mixed:
            node.inputs[i] = walk.native_of(t)
        elif kind is None and node.op in PROMOTED and t.name and walk.is_float(t):
            if walk.mixed:
                node.inputs[i] = walk.native_of(t, to)
            else:
                promoted[t.name] = np.dtype(to)
    if node.op == "Cast" and not is_complex_onnx(node.attrs["to"]):
        tf2onnx.casts_to_real(walk, node)
    r = registry.get(node.op, node.domain or "")
    outs = r.infer(node, kinds) if r is not None else registry.complex_like_inputs(node, kinds)
    for out, kind in zip(node.outputs, outs, strict=True):
        if kind is not None:
            walk.kind[out.name] = np.dtype(kind)
            walk.native[out.name] = out
    walk.infer(node, promoted)


def _evidence(walk: ReadingContext, node: gs.Node, kinds: Kinds) -> None:
    """Notes an op that reads a pair the graph stacked itself, where the packed
    tensor and the complex value it holds give different results. Ops that give the
    same on both (a sum, a real scale) keep their result packed as written.

    A stacked pair is evidence. A real input split by a Gather, or a DFT's output,
    read whole is weaker: a real graph may do that too, so it counts only in a
    graph that stacks pairs itself."""
    packed = [t for t, k in zip(node.inputs, kinds, strict=True)
              if k is not None and t.name in walk.as_packed]  # fmt: skip
    if not packed:
        return
    several = sum(k is not None for k in kinds) > 1
    scales = node.op in ("Mul", "Div") and not several and kinds[-1] is None
    layouts = {walk.as_packed.get(t.name) for t, k in zip(node.inputs, kinds, strict=True) if k}
    built = [t for t in packed if t.name in walk.built]
    if node.op in ("Neg", "Identity", "Add", "Sub") or scales:
        if len(layouts) == 1 and None not in layouts:
            walk.as_packed.update((t.name, layouts.pop()) for t in node.outputs)
            walk.built.update(t.name for t in node.outputs if built)
    elif node.op in DIFFERS or node.op in ("Mul", "Div"):
        (walk.evidence if built else walk.weak).append(node.name)
        name = (built or packed)[0].name
        walk.readings.append(f"{node.name} ({node.op}): reads '{name}' as complex")


def _wants_complex(walk: ReadingContext, node: gs.Node, t: gs.Tensor, kinds: Kinds) -> None:
    """Notes a graph input declared real S + [2] that meets a complex operand."""
    if t.name in walk.kind or t not in walk.graph.inputs or not any(kinds):
        return
    shape = walk.shape.get(t.name)
    if shape and shape[-1] == 2 and walk.is_float(t) and node.op in registry.supported_ops():
        walk.wants_complex.add(t.name)
