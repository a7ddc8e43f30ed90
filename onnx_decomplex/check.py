"""Shape inference, the ONNX checker, and the guarantee that nothing complex is left."""

from __future__ import annotations

import onnx
from onnx import AttributeProto, TensorProto

from .dtypes import TYPE_ATTRIBUTES, is_complex_onnx
from .errors import CheckError
from .graphs import labeled_graphs, node_graphs, node_label
from .load import external_tensors


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


def _graph_complex(graph: onnx.GraphProto, where: str) -> list[str]:
    """What is complex in `graph` itself: its declarations, initializers and nodes."""
    found = []
    for kind, values in (
        ("input", graph.input),
        ("output", graph.output),
        ("value_info", graph.value_info),
    ):
        found += [f"{where}{kind} '{v.name}'" for v in values if type_is_complex(v.type)]
    found += [
        f"{where}initializer '{t.name}'" for t in graph.initializer if is_complex_onnx(t.data_type)
    ]
    for node in graph.node:
        found += _node_complex(node, where)
    return found


def _node_complex(node: onnx.NodeProto, where: str) -> list[str]:
    """What is complex in `node`'s own attributes (its bodies are walked apart)."""
    found = []
    label = node_label(node, where)
    for attr in node.attribute:
        tensors = list(attr.tensors) + ([attr.t] if attr.type == AttributeProto.TENSOR else [])
        if any(is_complex_onnx(t.data_type) for t in tensors):
            found.append(f"{label} attribute '{attr.name}'")
        elif (
            attr.type == AttributeProto.INT
            and attr.name in TYPE_ATTRIBUTES
            and is_complex_onnx(attr.i)
        ):
            found.append(f"{label} attribute '{attr.name}' = {TensorProto.DataType.Name(attr.i)}")
    return found


def find_complex(model: onnx.ModelProto) -> list[str]:
    """Every place a complex type appears: graph inputs, outputs, value_info,
    initializers, Constant attributes, Cast targets, subgraphs and local functions."""
    found = []
    for g, where in labeled_graphs(model.graph):
        found += _graph_complex(g, where)
    for fn in model.functions:
        for node in fn.node:
            found += _node_complex(node, f"function '{fn.name}': ")
            for g, where in node_graphs(node, f"function '{fn.name}': "):
                found += _graph_complex(g, where)
    return found


def check(model: onnx.ModelProto) -> onnx.ModelProto:
    """Infers shapes, runs the full ONNX checker and refuses any complex leftover.

    The checker reads external data files relative to the working folder, so a
    model that still points at some is checked once written (`save_model` does).

    Returns:
        The model with value_info re-derived by shape inference.

    Raises:
        CheckError: A step failed. That is a bug in a rule, never a user mistake.
    """
    try:
        inferred = onnx.shape_inference.infer_shapes(
            model, check_type=True, strict_mode=True, data_prop=True
        )
    except Exception:  # onnx raises several unrelated types here
        # Data propagation reads some small 1-D values as shapes, and then refuses
        # broadcasts that are valid on values (Mul of [2] by [3, 1]): infer without it.
        try:
            inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        except Exception as e:
            raise CheckError(f"shape inference failed on the rewritten model: {e}") from e
    try:
        if not external_tensors(inferred):
            onnx.checker.check_model(inferred, full_check=True)
    except Exception as e:
        raise CheckError(f"the rewritten model fails the ONNX checker: {e}") from e
    left = find_complex(inferred)
    if left:
        raise CheckError(f"complex types remain after the rewrite: {', '.join(left)}")
    return inferred
