"""Which reading of an exported graph holds: the graph as written, or the exporters'.

A graph that reads consistently as written, as native complex or as plain real, is
left alone, unless an op that computes something else on a packed tensor than on
the complex value it holds (Exp, Abs, a product of two pairs, ...) reads a pair the
graph built. Otherwise the readings apply once the graph contradicts itself (shapes
that cannot agree, an axis past a complex value's rank, an output declared with
another shape than the one computed). Where they leave a contradiction, nothing is
guessed: the node is named. A reading that leaves a value untyped is refused, naming
the node where inference failed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from ..check import holds_complex
from ..errors import DecomplexError
from ..files.tensorflow import is_tensorflow_op
from ..graphs import graph_nodes, gs_holds_graphs, gs_sorted, opset_versions, topologically_sorted
from ..shapes import infer_shapes
from ..tidy import name_nodes
from .declared import packed_inputs, split_inputs
from .facts import COMPLEX_OF
from .nodes import DIFFERS
from .tensorflow_ops import is_tensorflow
from .walk import Walk

MAX_ROUNDS = 4
"""Walks at most: each may find more inputs declared packed that must be read complex."""


class NormalizeError(DecomplexError):
    """No consistent reading of the exported graph exists."""


@dataclass
class Normalized:
    """The outcome of `normalize`.

    Attributes:
        model: The native-complex model, or the input itself when it read
            consistently as written.
        readings: One line per node read other than as written, for `-v`.
        packed_io: Graph inputs and outputs declared packed (`S + [2]`).
        axis0: Nodes read as a complex pair stacked on axis 0.
        warnings: Places where the graph, read as it is, likely computes something
            other than its exporter's framework did; one line each.
    """

    model: onnx.ModelProto
    readings: list[str] = field(default_factory=list)
    packed_io: list[str] = field(default_factory=list)
    axis0: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.readings or self.packed_io)


def imported(model: onnx.ModelProto) -> gs.Graph:
    """`model` in onnx-graphsurgeon as the reading as written takes it: its nodes named
    (`name_nodes`), and sorted where they are not."""
    graph = gs.import_onnx(model)
    name_nodes(graph)
    return graph if gs_sorted(graph) else graph.toposort()


def normalize(
    model: onnx.ModelProto,
    graph: gs.Graph | None = None,
    tensors: dict[str, gs.Tensor] | None = None,
) -> Normalized:
    """The native-complex model that an exporter's mixed graph means.

    Args:
        model: A loaded model.
        graph: `imported(model)`, for the reading as written: that reading only reads
            a graph, and leaves it as it found it, for the next pass to take.
        tensors: `graph.tensors()`, where the caller has it.

    Returns:
        The normalized model and what was read, or `model` itself when it reads
        consistently as written.

    Raises:
        NormalizeError: The graph contradicts itself under every reading; the first
            node where it does is named.
    """
    if _plainly_real(model):
        return Normalized(model)
    opset = opset_versions(model)
    inferred = {}  # shared by every reading: each asks the same nodes
    if graph is None:
        graph = imported(model)
    as_written = _as_written(graph, opset, inferred, tensors)
    unchanged = Normalized(model, warnings=as_written.warnings)
    if not as_written.conflicts and not (as_written.splits and _may_read_packed(graph)):
        return unchanged
    read = _mixed(model, opset, inferred, as_written)
    if not _holds(as_written, read):
        return unchanged
    _refuse_untyped(read)
    return Normalized(read.export(model), read.readings, read.packed_io, read.axis0, read.warnings)


def _as_written(graph: gs.Graph, opset: dict, inferred: dict, tensors: dict | None) -> Walk:
    """The reading as written, which puts back every label it changed."""
    labels = []
    try:
        return Walk(graph, opset, False, {}, inferred=inferred, in_order=True,
                    labels=labels, tensors=tensors)  # fmt: skip
    finally:
        for t, dtype, shape in reversed(labels):  # the first kept is the one it had
            t.dtype, t.shape = dtype, shape


def _mixed(model: onnx.ModelProto, opset: dict, inferred: dict, as_written: Walk) -> Walk:
    """The exporters' reading, of a fresh import each time: with the inputs a Gather
    splits read complex, then those that meet a complex operand, round by round."""
    in_order = functools.cache(lambda: topologically_sorted(model.graph))

    def walk(inputs: set[str]) -> Walk:
        graph = gs.import_onnx(model)
        name_nodes(graph)  # so that every reading and refusal names its node
        declared = {t.name: t.dtype for t in graph.inputs}
        given = {name: COMPLEX_OF[np.dtype(declared[name])] for name in inputs}
        return Walk(graph, opset, True, given, inferred=inferred, in_order=in_order())

    inputs = split_inputs(as_written)
    for _ in range(MAX_ROUNDS):
        read = walk(inputs)
        if read.wants_complex <= inputs:
            break
        inputs |= read.wants_complex
    packed = packed_inputs(as_written)
    if read.conflicts and packed - inputs:
        # No operand gave them away; the contradictions may: try every input that
        # could be packed as complex.
        every = walk(packed)
        if not every.conflicts:
            read = every
    return read


def _holds(as_written: Walk, read: Walk) -> bool:
    """True when the exporters' reading `read` is what the graph means, False when the
    graph as written is.

    Raises:
        NormalizeError: Neither reads the graph consistently.
    """
    if not as_written.conflicts:
        # It runs as written; only an op that reads a packed pair as complex says
        # the exporter meant otherwise.
        if not (read.evidence or (read.weak and read.built)) or read.conflicts:
            return False
    else:
        if read.unread:
            node = read.unread[0]
            raise NormalizeError(
                "cannot read the exported graph: complex values enter its Scan body, which "
                "declares them packed; such bodies are not read",
                node=node.name, op_type=node.op,
            )  # fmt: skip
        before = {(c.node, c.tensor) for c in as_written.conflicts}
        if before <= {(c.node, c.tensor) for c in read.conflicts}:
            # The readings resolve nothing where the graph contradicts itself: whatever
            # is wrong is not an exporter's mixing, and the later stages say what it is.
            return False
        if read.conflicts:
            c = read.conflicts[0]
            raise NormalizeError(
                f"no consistent reading of the exported graph: {c.message}",
                node=c.node, op_type=c.op_type, tensor=c.tensor,
            )  # fmt: skip
    return read.changed


def _may_read_packed(graph: gs.Graph) -> bool:
    """False when no op that computes something else on a packed tensor than on the
    complex value it holds (`DIFFERS`, Mul, Div) can read one, under any reading: then
    no reading finds evidence (`nodes._evidence`), and a graph that runs as written
    stays as it is.

    What a reading may hold packed is the output of a two-input Concat (a pair), of a
    DFT, or a graph input declared `S + [2]`, and what Neg, Identity, Add and Sub make of
    one. True where bodies or TensorFlow's ops leave that open."""
    if any(is_tensorflow(n) or gs_holds_graphs(n) for n in graph.nodes):
        return True
    held = [t for t in graph.inputs if (t.shape or [])[-1:] == [2]]
    held += [out for n in graph.nodes
             if n.op == "DFT" or (n.op == "Concat" and len(n.inputs) == 2)
             for out in n.outputs]  # fmt: skip
    seen = {id(t) for t in held}
    while held:
        for node in held.pop().outputs:
            if node.op in DIFFERS or node.op in ("Mul", "Div"):
                return True
            if node.op in ("Neg", "Identity", "Add", "Sub"):
                for out in node.outputs:
                    if id(out) not in seen:
                        seen.add(id(out))
                        held.append(out)
    return False


def _plainly_real(model: onnx.ModelProto) -> bool:
    """True for a model with no complex type that strict shape inference accepts, with
    no DFT, no Gather on a last axis of 2 and no TensorFlow op: nothing there for an
    exporter to have mixed. A quick pass for real models, which need no walk node by node."""
    if holds_complex(model) or any(is_tensorflow_op(n) for n in graph_nodes(model.graph)):
        return False
    try:
        inferred = infer_shapes(model, strict_mode=True)
    except Exception:
        return False
    g = inferred.graph
    dims = {t.name: list(t.dims) for t in g.initializer}
    for v in [*g.input, *g.value_info, *g.output]:
        if v.type.tensor_type.HasField("shape"):
            dims[v.name] = [d.dim_value or None for d in v.type.tensor_type.shape.dim]
    for node in g.node:
        if node.op_type == "DFT":
            return False
        if node.op_type == "Gather" and dims.get(node.input[0], [])[-1:] == [2]:
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            if axis in (-1, len(dims[node.input[0]]) - 1):
                return False
    return True


def _refuse_untyped(walk: Walk) -> None:
    """Refuses the reading `walk` made when it left a value without a type, or without
    a rank where inference failed on it: every later reading, pass and the reference
    run would meet it unknown, and fail further on, at another node. Names the first
    node whose inference failed. (A rank the inputs leave open, a reduction's over axes
    known at run time, is no failure.) A graph read as written is left to the passes
    after this one, which know every op's rule."""
    found = []
    for w in (walk, *walk.bodies):
        found += [(n, t) for n, t in w.untyped(rank=False)]
        found += [(n, t) for n, t in w.untyped() if n.name in walk.failures]
    if not found:
        return
    node, t = found[0]
    why = walk.failures.get(node.name, "its inputs do not determine it")
    raise NormalizeError(f"cannot tell the type and rank of '{t.name}': {why}",
                         node=node.name, op_type=node.op, tensor=t.name)  # fmt: skip


def unknown_values(model: onnx.ModelProto) -> list[str]:
    """'node: tensor' for each value of `model` (a native-complex model, as `normalize`
    writes one) whose type or rank a reading of it leaves unknown, where inference
    failed first. Empty for a model every later pass can type."""
    walk = Walk(imported(model), opset_versions(model), False, {}, in_order=True)
    return [f"{n.name}: {t.name}" for w in (walk, *walk.bodies) for n, t in w.untyped()]
