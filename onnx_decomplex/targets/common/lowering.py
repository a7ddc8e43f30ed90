"""Lowerings: ops replaced by other ops, one function per op type, registered with
`@lowering("Op")`. A target's forms call `lower` with the op types they lower
(`targets.common.transforms`, `targets.common.einsum`, `targets.tensorrt.parser`).

Where a lowering is a choice (a faster or more accurate form), a node it cannot take
stays as it is, with a note saying why. Where it is a need (what TensorRT's parser
lacks), the refusal is an error, in the words the caller gives (`refuse_as`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from ...constants import gs_value
from ...emit import Emitter
from ...errors import DecomplexError
from ...graphs import graphs_in, is_default_domain
from ...shapes import declared_dims, infer_shapes
from ...tidy import keep_model_fields
from ...trt import registrar

LOWERINGS: dict[str, Callable] = {}
lowering = registrar(LOWERINGS, "lowering")
"""`@lowering("Op")`: registers fn(emitter, node, lowered), which replaces the node's
output with nodes from the emitter and notes what it did in `lowered`, or returns False
where the node needs no lowering."""


@dataclass
class Lowered:
    """What the lowering changed.

    Attributes:
        ops: Nodes lowered, by op type.
        matrix_bytes: Bytes of the DFT matrices it added.
        notes: One line per lowered node.
        max_length: Transforms longer than this are not lowered (None: any length).
        native: The transform lengths the runtime's own DFT computes as accurately as the
            MatMul forms, and faster: each such DFT becomes one DFT node in the form
            every runtime reads alike (`transforms.native`). None: no length.
    """

    ops: Counter = field(default_factory=Counter)
    matrix_bytes: int = 0
    notes: list[str] = field(default_factory=list)
    max_length: int | None = None
    native: Callable[[int], bool] | None = None


def refuse(node: gs.Node, message: str, tensor: gs.Tensor | None = None) -> DecomplexError:
    """Why `node` cannot be lowered, naming it and the tensor at fault."""
    return DecomplexError(
        message,
        node=node.name,
        op_type=node.op,
        tensor=tensor.name if tensor is not None else None,
    )


def op(e: Emitter, op_type: str, inputs: list, attrs: dict | None = None, out=None):
    """One node of the running lowering; its output, `out` when given."""
    if out is not None:
        return e.emit(op_type, inputs, attrs, outputs=[out])[0]
    return e.emit(op_type, inputs, attrs)


def static(dim) -> int | None:
    """A dim's size where it is static, else None."""
    return dim if isinstance(dim, int) and dim >= 0 else None


def scalar(e: Emitter, t: gs.Tensor, what: str) -> int:
    """The one value of constant `t`, or a refusal naming `what` it is."""
    value = gs_value(t)
    if value is None or value.size != 1:
        raise refuse(
            e.node, f"{what} is computed at run time; the MatMul form needs it as a constant", t
        )
    return int(value.reshape(()))


def _lower_graph(e: Emitter, lowered: Lowered, declared: dict, ops, refuse_as: str | None) -> None:
    graph, replaced = e.graph, []
    for node in list(graph.nodes):
        for sub in node.subgraphs():
            _lower_graph(e.child(sub), lowered, {}, ops, refuse_as)
        fn = LOWERINGS.get(node.op) if node.op in ops and is_default_domain(node.domain) else None
        if fn is None:
            continue
        outputs = list(node.outputs)
        e.node = node
        try:
            if fn(e, node, lowered) is False:
                continue  # nothing to lower, nothing emitted
        except DecomplexError as error:
            if refuse_as is not None:
                raise replace(error, message=f"{refuse_as}: {error.message}") from None
            # What was emitted before the refusal is unused, and cleaned up below.
            lowered.notes.append(f"{node.name}: {node.op} kept as it is: {error.message}")
            continue
        replaced += outputs
        lowered.ops[node.op] += 1
        node.inputs.clear()
    # Inferred shapes of the old ops may disagree with the emitted ones (ONNX infers
    # STFT as two-sided by default, while the op is one-sided): only what the model
    # itself declared is kept, and the rest is inferred again. Later lowerings read
    # them first, so this waits until all are done.
    for t in replaced:
        t.shape = declared.get(t.name)
    graph.cleanup(remove_unused_graph_inputs=False).toposort()


def lower(
    model: onnx.ModelProto,
    opset: int,
    ops: set[str] | frozenset[str],
    refuse_as: str | None = None,
    max_length: int | None = None,
    native: Callable[[int], bool] | None = None,
) -> tuple[onnx.ModelProto, Lowered]:
    """Replaces the nodes of `ops` (of LOWERINGS) by their lowerings.

    Args:
        model: A real model.
        opset: Its default-domain opset.
        ops: The op types to lower.
        refuse_as: Where given, a node that cannot be lowered is an error, its message
            led by these words ("cannot lower for TensorRT"). Where None, the lowering is
            a choice: such a node (a transform of dynamic length, or one longer than
            `max_length`) is kept as it is, with a note saying why.
        max_length: Transforms longer than this are kept (None: any length).
        native: The DFT lengths kept as the runtime's own DFT (`Lowered.native`).

    Returns:
        The lowered model (the same object when nothing was lowered) and what changed.
        Its value_info is dropped, to be inferred again.
    """
    if not holds(model, ops):
        return model, Lowered()
    lowered = Lowered(max_length=max_length, native=native)
    graph = _shaped(model)
    if any(n.op == "DFT" and not _all_static(n.inputs[0].shape) for n in graph.nodes):
        # A transform's length may be static yet computed (tf2onnx's roll: Shape, Slice,
        # Mod): folded, its shape is known.
        try:
            _bounded_shapes_sliced(Emitter(graph, opset))
            graph.fold_constants(fold_shapes=True).cleanup(remove_unused_graph_inputs=False)
            graph = _shaped(gs.export_onnx(graph, do_type_check=False))
        except Exception:  # nothing folds: the lowerings that need a shape say so
            graph = _shaped(model)
    declared = {o.name: declared_dims(o) for o in model.graph.output}
    _lower_graph(Emitter(graph, opset), lowered, declared, ops, refuse_as)
    if not lowered.ops:
        return model, lowered
    out = gs.export_onnx(graph, do_type_check=False)
    keep_model_fields(model, out)
    return out, lowered


def _bounded_shapes_sliced(emit: Emitter) -> None:
    """Each Shape node with a `start` or an `end` as a Slice of its input's whole shape:
    onnx-graphsurgeon (0.6.1) folds a Shape node, and a Gather or Slice of one, from its
    input's whole shape, reading neither (a complex value's shape, the packed tensor's
    less its last dim, came out [2] for a scalar)."""
    graph = emit.graph
    for node in [n for n in graph.nodes if n.op == "Shape" and n.attrs.keys() & {"start", "end"}]:
        start, end = node.attrs.pop("start", 0), node.attrs.pop("end", None)
        if start == 0 and end is None:
            continue
        bounded = node.outputs[0]
        node.outputs = [gs.Variable(emit.unique(f"{bounded.name}_whole"), np.int64)]
        ends = np.array([np.iinfo(np.int64).max if end is None else end], np.int64)
        emit.emit("Slice", [node.outputs[0], np.array([start], np.int64), ends],
                  name=f"{bounded.name}_bounds", outputs=[bounded])  # fmt: skip
    graph.toposort()


def _shaped(model: onnx.ModelProto) -> gs.Graph:
    """`model` in onnx-graphsurgeon, its shapes inferred where inference runs."""
    try:
        return gs.import_onnx(infer_shapes(model, data_prop=True))
    except Exception:  # the lowerings that need a shape say so themselves
        return gs.import_onnx(model)


def _all_static(shape) -> bool:
    return shape is not None and all(static(d) is not None for d in shape)


def holds(model: onnx.ModelProto, ops: set[str] | frozenset[str]) -> bool:
    """Whether a node of `ops` is in the model, its subgraphs included."""
    return any(n.op_type in ops for g in graphs_in(model.graph) for n in g.node)
