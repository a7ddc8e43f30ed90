"""Shape inference, the ONNX checker, and the guarantee that nothing complex is left."""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from onnx import AttributeProto, TensorProto

from .dtypes import TYPE_ATTRIBUTES, is_complex_onnx
from .errors import CheckError
from .files.external import holds_external
from .graphs import labeled_graphs, node_graphs, node_label
from .shapes import infer_shapes


def type_is_complex(tp: onnx.TypeProto) -> bool:
    """True for a complex tensor type, or a sequence, optional or map holding one."""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return is_complex_onnx(tp.tensor_type.elem_type)
    if kind == "sparse_tensor_type":
        return is_complex_onnx(tp.sparse_tensor_type.elem_type)
    if kind == "sequence_type":
        return type_is_complex(tp.sequence_type.elem_type)
    if kind == "optional_type":
        return type_is_complex(tp.optional_type.elem_type)
    if kind == "map_type":
        return type_is_complex(tp.map_type.value_type)
    return False


_MAY_BE_COMPLEX = frozenset({AttributeProto.TENSOR, AttributeProto.TENSORS, AttributeProto.INT})
"""The kinds of attribute that may hold or name a complex type."""


def _graph_complex(graph: onnx.GraphProto, where: str) -> Iterator[str]:
    """What is complex in `graph` itself: its declarations, initializers and nodes."""
    for kind, values in (
        ("input", graph.input),
        ("output", graph.output),
        ("value_info", graph.value_info),
    ):
        for v in values:
            if type_is_complex(v.type):
                yield f"{where}{kind} '{v.name}'"
    for t in graph.initializer:
        if is_complex_onnx(t.data_type):
            yield f"{where}initializer '{t.name}'"
    for node in graph.node:
        for attr in node.attribute:  # `_node_complex` only for a node it would look at
            if attr.type in _MAY_BE_COMPLEX:
                yield from _node_complex(node, where)
                break


def _node_complex(node: onnx.NodeProto, where: str) -> Iterator[str]:
    """What is complex in `node`'s own attributes (its bodies are walked apart)."""
    for attr in node.attribute:
        kind = attr.type
        if kind == AttributeProto.TENSOR:
            tensors = [attr.t]
        elif kind == AttributeProto.TENSORS:
            tensors = attr.tensors
        else:
            tensors = ()
        if any(is_complex_onnx(t.data_type) for t in tensors):
            yield f"{node_label(node, where)} attribute '{attr.name}'"
        elif (
            kind == AttributeProto.INT and attr.name in TYPE_ATTRIBUTES and is_complex_onnx(attr.i)
        ):
            name = TensorProto.DataType.Name(attr.i)
            yield f"{node_label(node, where)} attribute '{attr.name}' = {name}"


def _function_complex(model: onnx.ModelProto) -> Iterator[str]:
    for fn in model.functions:
        for node in fn.node:
            yield from _node_complex(node, f"function '{fn.name}': ")
            for g, where in node_graphs(node, f"function '{fn.name}': "):
                yield from _graph_complex(g, where)


def find_complex(model: onnx.ModelProto) -> list[str]:
    """Every place a complex type appears: graph inputs, outputs, value_info,
    initializers, Constant attributes, Cast targets, subgraphs and local functions."""
    found = [p for g, where in labeled_graphs(model.graph) for p in _graph_complex(g, where)]
    return found + list(_function_complex(model))


def holds_complex(model: onnx.ModelProto) -> bool:
    """Whether a complex type appears anywhere `find_complex` looks (it stops at the first)."""
    places = (p for g, where in labeled_graphs(model.graph) for p in _graph_complex(g, where))
    return next(places, None) is not None or next(_function_complex(model), None) is not None


def complex_in_functions(model: onnx.ModelProto) -> list[str]:
    """The places in model-local functions where a complex type appears."""
    return list(_function_complex(model))


def check(model: onnx.ModelProto, external: bool | None = None) -> onnx.ModelProto:
    """Infers shapes, runs the full ONNX checker and refuses any complex leftover.

    The checker reads external data files relative to the working folder, so a
    model that still points at some is checked once written (`save_model` does).
    `external` says whether `model` points at some, where the caller knows.

    Returns:
        The model with value_info re-derived by shape inference.

    Raises:
        CheckError: A step failed. That is a bug in a rule, never a user mistake.
    """
    try:
        inferred = infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except Exception:  # onnx raises several unrelated types here
        # Data propagation reads some small 1-D values as shapes, and then refuses
        # broadcasts that are valid on values (Mul of [2] by [3, 1]): infer without it.
        try:
            inferred = infer_shapes(model, check_type=True, strict_mode=True)
        except Exception as e:
            raise CheckError(f"shape inference failed on the rewritten model: {e}") from e
    try:
        if not (holds_external(inferred) if external is None else external):
            # The full check is this check and the strict, typed inference above.
            onnx.checker.check_model(inferred)
    except Exception as e:
        raise CheckError(f"the rewritten model fails the ONNX checker: {e}") from e
    left = find_complex(inferred)
    if left:
        raise CheckError(f"complex types remain after the rewrite: {', '.join(left)}")
    return inferred
