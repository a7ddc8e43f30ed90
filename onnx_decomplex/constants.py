"""Reading the value of a constant, as protobuf and as onnx-graphsurgeon hold it.

A constant is an initializer, the output of a `Constant` node, or the output of an
`Identity` of a constant. A `Constant` node holds its value in one attribute, of the
type ONNX gives it:

    value           -> the tensor itself
    value_float(s)  -> float32, a scalar (a 1-D tensor)
    value_int(s)    -> int64, a scalar (a 1-D tensor)
    value_string(s) -> a string scalar (a 1-D tensor), as a numpy object array
    sparse_value    -> the dense tensor (onnx-graphsurgeon drops it: no value there)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import AttributeProto, TensorProto, numpy_helper

from .graphs import is_default_domain

VALUE_ATTRIBUTES = (
    "value", "value_float", "value_floats", "value_int", "value_ints",
    "value_string", "value_strings", "sparse_value",
)  # fmt: skip
"""The attributes a Constant node holds its value in, one of them at a time."""

_TYPES = {
    "value_float": np.float32,
    "value_floats": np.float32,
    "value_int": np.int64,
    "value_ints": np.int64,
    "value_string": object,
    "value_strings": object,
}


def _typed(name: str, value) -> np.ndarray:
    """A Constant attribute's plain value (a number, a list, a string) as ONNX types it."""
    if name in ("value_string", "value_strings"):
        decode = lambda s: s.decode() if isinstance(s, bytes) else s  # noqa: E731
        value = decode(value) if name == "value_string" else [decode(s) for s in value]
    return np.asarray(value, dtype=_TYPES[name])


def dense(sparse: onnx.SparseTensorProto) -> np.ndarray:
    """The dense value of a sparse tensor: its values at its indices, zeros elsewhere.
    Indices are [NNZ] positions in the flattened tensor, or [NNZ, rank] coordinates."""
    values = numpy_helper.to_array(sparse.values)
    indices = numpy_helper.to_array(sparse.indices).astype(np.int64)
    shape = tuple(sparse.dims)
    out = np.zeros(shape, values.dtype)
    if indices.ndim == 2:
        indices = np.ravel_multi_index(tuple(indices.T), shape) if indices.size else indices[:, 0]
    out.reshape(-1)[indices] = values
    return out


# ---- protobuf ----------------------------------------------------------------------------


def attribute_value(attr: AttributeProto) -> np.ndarray:
    """The value a Constant node's attribute holds (see the module's table)."""
    if attr.name == "value":
        return numpy_helper.to_array(attr.t)
    if attr.name == "sparse_value":
        return dense(attr.sparse_tensor)
    return _typed(attr.name, onnx.helper.get_attribute_value(attr))


def node_tensor(node: onnx.NodeProto) -> TensorProto | None:
    """A Constant node's value as a tensor, whichever attribute holds it; None for any
    other node. A `value` tensor is returned as it is, its data not read (it may be
    on disk)."""
    if node.op_type != "Constant":
        return None
    for attr in node.attribute:
        if attr.name == "value":
            return attr.t
        if attr.name in VALUE_ATTRIBUTES:
            name = node.output[0] if node.output else ""
            return numpy_helper.from_array(attribute_value(attr), name)
    return None


def node_value(node: onnx.NodeProto) -> np.ndarray | None:
    """A Constant node's value, whichever attribute holds it; None for any other node."""
    tensor = node_tensor(node)
    return None if tensor is None else numpy_helper.to_array(tensor)


def graph_tensors(
    graph: onnx.GraphProto, outer: Mapping[str, TensorProto] | None = None
) -> dict[str, TensorProto]:
    """The constants visible in `graph`, by name: `outer`'s (those of the graphs
    around it), its initializers, its Constant nodes' values, and the outputs of
    Identities of those. Tensors that keep their data on disk are returned as they are."""
    found = dict(outer or {})
    found.update({t.name: t for t in graph.initializer})
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            tensor = node_tensor(node)
            if tensor is not None:
                found[node.output[0]] = tensor
        elif node.op_type == "Identity" and node.input and node.input[0] in found:
            found[node.output[0]] = found[node.input[0]]
    return found


# ---- onnx-graphsurgeon --------------------------------------------------------------------


def gs_node_value(node: gs.Node) -> np.ndarray | None:
    """A Constant node's value, whichever attribute holds it; None for any other node,
    and for a sparse value (which onnx-graphsurgeon does not import)."""
    if node.op != "Constant":
        return None
    for name, value in node.attrs.items():
        if name == "value" and isinstance(value, gs.Constant):
            return np.asarray(value.values)
        if name in _TYPES:
            return _typed(name, value)
    return None


def gs_value(t: gs.Tensor | None, max_elements: int | None = None) -> np.ndarray | None:
    """The value of `t` when it is a constant: an initializer, a Constant node's output
    or an Identity's of a constant. None for a runtime value, and for an initializer of
    more than `max_elements` elements (which is then not read: it may be on disk)."""
    while t is not None and t.name:
        if isinstance(t, gs.Constant):
            size = math.prod(t.shape) if t.shape is not None else None
            if max_elements is not None and (size is None or size > max_elements):
                return None
            return np.asarray(t.values)
        if len(t.inputs) != 1:
            return None
        producer = t.inputs[0]
        if producer.op == "Constant":
            return gs_node_value(producer)
        if producer.op != "Identity" or not producer.inputs:
            return None
        t = producer.inputs[0]
    return None


RANDOM = frozenset({"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
                    "Multinomial", "Bernoulli"})  # fmt: skip
"""Ops whose outputs are not a function of their inputs: never evaluated at rewrite time."""


def evaluable(op: str, domain: str | None) -> bool:
    """Whether `evaluate` may compute a node of `op` in `domain`: a default-domain op
    whose outputs are a function of its inputs."""
    return is_default_domain(domain) and op not in RANDOM


def evaluate(node: onnx.NodeProto, values: Mapping[str, np.ndarray], opset: int):
    """The outputs of one node on the known values of its inputs, by name, as the
    reference evaluator computes them (`reference.MEANINGS`: an `Expand` broadcasts,
    where the stock op's product by ones turns a -0 part into +0); None where it cannot
    (a malformed node is the checker's to report)."""
    from onnx.reference import ReferenceEvaluator  # on first use: few models need it

    from .reference import MEANINGS

    try:
        evaluator = ReferenceEvaluator(node, opsets={"": opset}, new_ops=list(MEANINGS))
        return evaluator.run(None, dict(values))
    except Exception:
        return None
