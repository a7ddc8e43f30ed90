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


def _axes(attrs: Mapping, values: list, index: int) -> list[int] | None:
    """An op's axes, from its attribute (early opsets) or its input at `index`."""
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]
    if len(values) > index and values[index] is not None:
        return [int(a) for a in np.ravel(values[index])]
    return None


def _slice(x: np.ndarray, attrs: Mapping, values: list) -> np.ndarray:
    if "starts" in attrs:  # opset 1 to 9: bounds are attributes
        starts, ends = attrs["starts"], attrs["ends"]
        axes, steps = attrs.get("axes", range(len(starts))), [1] * len(starts)
    else:
        starts, ends = np.ravel(values[1]), np.ravel(values[2])
        axes = np.ravel(values[3]) if len(values) > 3 and values[3] is not None else None
        steps = np.ravel(values[4]) if len(values) > 4 and values[4] is not None else None
        axes = range(len(starts)) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for a, b, e, s in zip(axes, starts, ends, steps, strict=True):
        index[int(a)] = slice(int(b), int(e), int(s))
    return x[tuple(index)]


def _expand(x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    return x * np.ones([int(d) for d in np.ravel(shape)], x.dtype)


_FOLDS = {
    "Identity": lambda a, v: v[0],
    "Cast": lambda a, v: v[0],
    "Neg": lambda a, v: -v[0],
    "Add": lambda a, v: v[0] + v[1],
    "Sub": lambda a, v: v[0] - v[1],
    "Mul": lambda a, v: v[0] * v[1],
    "Div": lambda a, v: np.trunc(v[0] / v[1]),
    "Concat": lambda a, v: np.concatenate([np.atleast_1d(x) for x in v], int(a["axis"])),
    "Gather": lambda a, v: np.take(v[0], v[1], axis=int(a.get("axis", 0))),
    "Unsqueeze": lambda a, v: np.expand_dims(v[0], _sorted_axes(a, v, v[0].ndim + 1)),
    "Squeeze": lambda a, v: np.squeeze(v[0], _squeezed_axes(a, v)),
    "Reshape": lambda a, v: v[0].reshape([int(d) for d in np.ravel(v[1])]),
    "Slice": lambda a, v: _slice(v[0], a, v),
    "Range": lambda a, v: np.arange(v[0], v[1], v[2]),
    "Expand": lambda a, v: _expand(v[0], v[1]),
    "ConstantOfShape": lambda a, v: np.full(
        [int(d) for d in np.ravel(v[0])],
        np.asarray(a["value"].values).reshape(()) if "value" in a else 0,
    ),
}


def _sorted_axes(attrs: Mapping, values: list, rank: int) -> tuple[int, ...]:
    return tuple(sorted(a % rank for a in _axes(attrs, values, 1)))


def _squeezed_axes(attrs: Mapping, values: list) -> tuple[int, ...] | None:
    axes = _axes(attrs, values, 1)
    return None if axes is None else tuple(a % values[0].ndim for a in axes)


def fold(op: str, attrs: Mapping, values: list[np.ndarray | None]) -> np.ndarray | None:
    """The integer value a shape-arithmetic `op` computes from the known `values` of
    its inputs (None for an absent optional one), with its attributes `attrs` as
    onnx-graphsurgeon holds them; None where it is no such op, or the values do not fit
    it (a malformed graph is the checker's to report)."""
    fn = _FOLDS.get(op)
    if fn is None or not values or values[0] is None:
        return None
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(attrs, values))
    except (ValueError, IndexError, TypeError, KeyError, ZeroDivisionError, AttributeError):
        return None
