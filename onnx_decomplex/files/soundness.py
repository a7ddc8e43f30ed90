"""What the checker lets pass and the rewrite cannot take: text that is not UTF-8,
element types this onnx does not know, negative dims, non-tensor graph values,
control-flow bodies of the wrong arity, ops onnx does not define, and ConstantOfShape
sizes no machine holds. Each is refused in one line that names the node and tensor."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import onnx
from google.protobuf.descriptor import FieldDescriptor
from onnx import AttributeProto, TensorProto, helper, numpy_helper
from onnx.external_data_helper import uses_external_data

from .. import constants
from ..dtypes import TYPE_ATTRIBUTES, is_complex_onnx
from ..errors import LoadError
from ..graphs import is_default_domain, subgraphs
from .external import memory_bytes
from .tensorflow import is_tensorflow_op

_STRING, _MESSAGE = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE


ELEMENT_TYPES = frozenset(TensorProto.DataType.values()) - {TensorProto.UNDEFINED}
"""The element types of this onnx version; anything else in a file is damage."""


_ODD_VALUES = {
    "map_type": "a map",
    "sparse_tensor_type": "a sparse tensor",
    "opaque_type": "opaque",
}


_TENSOR_TEXT = [TensorProto.DESCRIPTOR.fields_by_name[n]
                for n in ("name", "doc_string", "external_data", "metadata_props")]  # fmt: skip
"""A tensor's fields that hold text: only those are read (listing its fields would
copy its data)."""


def _not_text(message, where: str) -> tuple[str, bytes] | None:
    """The first string field under `message` that is not valid UTF-8 (protobuf hands
    those back as bytes), as (field path after `where`, raw value); None when all are
    text."""
    found = _first_bytes(message)
    if found is None:
        return None
    path, value = found
    return where + "".join(reversed(path)), value


def _first_bytes(message) -> tuple[list[str], bytes] | None:
    """`_not_text`'s walk: the path comes out reversed, built only once found."""
    if message.__class__ is TensorProto:
        fields = [(desc, getattr(message, desc.name)) for desc in _TENSOR_TEXT]
    else:
        fields = message.ListFields()
    for desc, value in fields:
        kind = desc.type
        if kind == _STRING:
            if not desc.is_repeated:
                if value.__class__ is bytes:
                    return [f".{desc.name}"], value
                continue
            for i, v in enumerate(value):
                if v.__class__ is bytes:
                    return [f".{desc.name}[{i}]"], v
        elif kind == _MESSAGE:
            if not desc.is_repeated:
                found = _first_bytes(value)
                if found:
                    found[0].append(f".{desc.name}")
                    return found
                continue
            for i, v in enumerate(value):
                found = _first_bytes(v)
                if found:
                    found[0].append(f".{desc.name}[{i}]")
                    return found
    return None


def _check_value_info(v: onnx.ValueInfoProto, declared: bool) -> None:
    """A declared element type this onnx knows, and no negative dim. `declared`: a
    graph input or output, which must say what it is."""
    kind = v.type.WhichOneof("value")
    if kind in _ODD_VALUES:
        raise LoadError(
            f"the value is {_ODD_VALUES[kind]}; only tensors, sequences and optionals are "
            "supported",
            tensor=v.name,
        )
    if kind != "tensor_type":
        return
    t = v.type.tensor_type
    if t.elem_type not in ELEMENT_TYPES and (declared or t.elem_type != TensorProto.UNDEFINED):
        raise LoadError(f"unknown element type {t.elem_type}", tensor=v.name)
    for d in t.shape.dim:
        if d.HasField("dim_value") and d.dim_value < 0:
            raise LoadError(f"negative dim {d.dim_value} in its declared shape", tensor=v.name)


def _check_tensor(t: TensorProto, node: onnx.NodeProto | None = None) -> None:
    if t.data_type not in ELEMENT_TYPES:
        raise LoadError(
            f"unknown element type {t.data_type}",
            node=node.name if node else None,
            op_type=node.op_type if node else None,
            tensor=t.name,
        )


_CONTROL_FLOW = frozenset({"If", "Loop", "Scan"})


def _body_counts(node: onnx.NodeProto) -> Iterator[tuple[str, onnx.GraphProto, int, int]]:
    """(attribute, body, inputs it must take, outputs it must make) of a control-flow
    node, as its op defines them; a count of -1 is not checked."""
    if node.op_type not in _CONTROL_FLOW or not is_default_domain(node.domain):
        return
    bodies = {a.name: a.g for a in node.attribute if a.type == AttributeProto.GRAPH}
    if node.op_type == "If":
        for name in ("then_branch", "else_branch"):
            if name in bodies:
                yield name, bodies[name], 0, len(node.output)
    elif node.op_type == "Loop" and "body" in bodies:
        carried = len(node.input) - 2
        yield "body", bodies["body"], 2 + carried, 1 + len(node.output)
    elif node.op_type == "Scan" and "body" in bodies:
        yield "body", bodies["body"], len(node.input), len(node.output)


def _check_bodies(node: onnx.NodeProto) -> None:
    for name, body, inputs, outputs in _body_counts(node):
        problems = []
        if len(body.input) != inputs:
            problems.append(f"takes {len(body.input)} inputs, where {inputs} are due")
        # A Loop's scan outputs add to both counts alike, so only the difference is fixed.
        if node.op_type == "Loop" and len(body.output) < outputs - len(node.output):
            problems.append(f"makes {len(body.output)} outputs, too few")
        elif node.op_type != "Loop" and len(body.output) != outputs:
            problems.append(f"makes {len(body.output)} outputs, where {outputs} are due")
        if problems:
            raise LoadError(
                f"its {name} {' and '.join(problems)}", node=node.name, op_type=node.op_type
            )


def _check_node(node: onnx.NodeProto) -> None:
    if is_default_domain(node.domain):
        for attr in node.attribute:
            typed = attr.name in TYPE_ATTRIBUTES and attr.type == AttributeProto.INT
            if typed and attr.i not in ELEMENT_TYPES:
                raise LoadError(
                    f"attribute '{attr.name}' is {attr.i}, which is no element type",
                    node=node.name,
                    op_type=node.op_type,
                )
    _check_bodies(node)


def _check_known(node: onnx.NodeProto, producer: str) -> None:
    """A default-domain op that onnx does not define: TensorFlow's raw op where tf2onnx
    wrote the model, and no ONNX op in any case."""
    if not is_default_domain(node.domain) or is_tensorflow_op(node):
        return
    if onnx.defs.has(node.op_type):
        return
    if producer == "tf2onnx":
        what = "TensorFlow's raw op, left in the graph by tf2onnx, which this tool does not read"
    else:
        what = "no ONNX op, and the model names no domain it comes from"
    raise LoadError(f"{node.op_type} is {what}", node=node.name, op_type=node.op_type)


def check_sound(
    model: onnx.ModelProto,
    graphs: list[onnx.GraphProto],
    tensors: list[tuple[onnx.NodeProto | None, TensorProto]],
) -> None:
    """What the checker lets pass and the rewrite cannot take: text that is not UTF-8,
    element types this onnx does not know, negative declared dims, non-tensor graph
    values, and control-flow bodies with the wrong number of inputs or outputs.
    `graphs` are the model's (`graphs_in`), `tensors` its tensors (`tensors_in`).

    Raises:
        LoadError: Naming the node and tensor.
    """
    bad = _not_text(model, "model")
    if bad:
        raise LoadError(f"{bad[0]} is not UTF-8 text: {bad[1]!r}")
    for g in graphs:
        for v in g.input:
            _check_value_info(v, declared=True)
        for v in g.output:
            _check_value_info(v, declared=True)
        for v in g.value_info:
            _check_value_info(v, declared=False)
        for s in g.sparse_initializer:
            _check_tensor(s.values)
        for node in g.node:
            _check_node(node)
            _check_known(node, model.producer_name)
    for node, t in tensors:
        _check_tensor(t, node)


def _check_constant_of_shape(node: onnx.NodeProto, constants: dict[str, TensorProto]) -> None:
    """A ConstantOfShape whose shape is a constant: no negative dim, and a size that
    can be held (the rewrite makes a complex one in memory)."""
    shape = constants.get(node.input[0]) if node.input else None
    if shape is None or uses_external_data(shape):
        return
    dims = [int(d) for d in numpy_helper.to_array(shape).ravel()]
    where = {"node": node.name, "op_type": node.op_type, "tensor": node.input[0]}
    if any(d < 0 for d in dims):
        raise LoadError(f"negative dim in shape {dims}", **where)
    value = next((a.t for a in node.attribute if a.name == "value"), None)
    elem = value.data_type if value is not None else TensorProto.FLOAT
    nbytes = math.prod(dims) * np.dtype(helper.tensor_dtype_to_np_dtype(elem)).itemsize
    limit = memory_bytes() if is_complex_onnx(elem) else np.iinfo(np.int64).max
    if nbytes > limit:
        raise LoadError(f"shape {dims} would make a value of {nbytes:.3g} bytes", **where)


def check_shapes(graph: onnx.GraphProto, outer: dict | None = None) -> None:
    known = constants.graph_tensors(graph, outer)
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and is_default_domain(node.domain):
            _check_constant_of_shape(node, known)
        for body in subgraphs(node):
            check_shapes(body, known)
