"""Every value's type and rank, as a reading goes.

Complex values take part in ONNX's shape inference as real tensors of their logical
shape, which is how they meet every shape rule of an op. Complex sources include what
ONNX's schemas type no complex (a complex ConstantOfShape, EyeLike of a complex
dtype); Loop and Scan outputs are their bodies'; and the small integer values exporters
build shapes from are computed (`constants.evaluate`), so a Reshape's target or an
Expand's shape is known. Where inference fails, the walk notes why, by node
(`Walk.failures`), and `normalize` refuses a reading that leaves a value untyped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import helper, numpy_helper, shape_inference
from onnx_graphsurgeon.exporters.onnx_exporter import OnnxExporter

from ..constants import evaluate
from ..dtypes import TYPE_ATTRIBUTES, is_complex_np, is_complex_onnx, np_of, onnx_of, real_of
from ..graphs import gs_holds_graphs, is_default_domain
from ..shapes import static
from .facts import MAX_READ_ELEMENTS, declared

if TYPE_CHECKING:
    from .protocol import ReadingContext

ONESIDED_DEFAULT = {"DFT": 0, "STFT": 1}
"""The spec's default of each transform's `onesided`: DFT is two-sided unless told,
STFT one-sided."""

FOLDED = frozenset(
    {"Shape", "Concat", "Gather", "Unsqueeze", "Squeeze", "Slice", "Cast", "Identity", "Reshape",
     "Add", "Sub", "Mul", "Div", "Neg", "Range", "ConstantOfShape", "Expand"}
)  # fmt: skip
"""Ops whose small integer results the walk computes (`fold`)."""

_KEY_MAX_ELEMENTS = 64
"""Constant inputs and attributes of more elements than this are not put in a key:
such nodes infer their shapes each time."""


def onesided(node: gs.Node) -> bool:
    """Whether a DFT or STFT `node` is one-sided, its own default where it says nothing."""
    return bool(node.attrs.get("onesided", ONESIDED_DEFAULT[node.op]))


def infer(walk: ReadingContext, node: gs.Node, promoted: dict[str, np.dtype] | None = None) -> None:
    """Shapes of `node`'s outputs, logical for complex values; a contradiction when
    the node's inputs cannot agree.

    `promoted` are real operands the op reads as complex of the type given."""
    if node.op == "DFT" and node.inputs[0].name in walk.kind:
        _native_dft(walk, node)
        return
    if _perm_misfits(walk, node):
        return
    inputs = _inputs(walk, node, promoted)
    if inputs is None:
        return
    known, values, elems = inputs
    # A body or an op with no schema has no key, nor is one ever stored for it.
    key = _inference_key(node, known, [values.get(t.name) for t in node.inputs])
    if key is not None and key in walk.inferred:
        set_inferred(walk, node, walk.inferred[key])
        return
    if gs_holds_graphs(node):
        if node.op in ("Loop", "Scan"):
            set_inferred(walk, node, body_results(node))
        return  # an If's outputs are its branches' (`bodies.branches`)
    found = _from_schema(walk, node, elems, values)
    if found is None:
        return
    if key is not None:
        walk.inferred[key] = found
    set_inferred(walk, node, found)


def _native_dft(walk: ReadingContext, node: gs.Node) -> None:
    """A DFT of a native complex signal: a complex value of the same shape, unless the
    length or one-sidedness changes it."""
    same = len(node.inputs) < 2 or not node.inputs[1].name
    if same and not onesided(node):
        walk.shape[node.outputs[0].name] = walk.shape.get(node.inputs[0].name)


def _perm_misfits(walk: ReadingContext, node: gs.Node) -> bool:
    """True, with a contradiction, for a Transpose whose perm is not of its input's rank."""
    if node.op != "Transpose" or "perm" not in node.attrs:
        return False
    rank = walk.rank(node.inputs[0])
    if rank is None or len(node.attrs["perm"]) == rank:
        return False
    walk.conflict(node, f"perm {list(node.attrs['perm'])} for a value of rank {rank}",
                  node.inputs[0].name)  # fmt: skip
    return True


def _inputs(walk: ReadingContext, node: gs.Node, promoted: dict[str, np.dtype] | None):
    """(type and shape of each input, small integer values, element types by name), or
    None when an input's type is unknown."""
    known, values, elems = [], {}, {}
    for t in node.inputs:  # every node's: dtypes as stored, three lookups at most
        name = t.name
        if not name:
            known.append(None)
            continue
        elem = promoted.get(name) if promoted else None
        if elem is None:
            elem = walk.kind.get(name)
        if elem is None:
            elem = walk.elem.get(name)
            if elem is None:
                return None
        elems[name] = elem
        shape = walk.shape.get(name)
        known.append((elem.str, None if shape is None else tuple(shape)))
        if elem.kind in "iu":
            value = walk.constant(t)
            if value is not None:
                values[name] = value
    return known, values, elems


def _from_schema(walk: ReadingContext, node: gs.Node, elems: dict, values: dict) -> list | None:
    """(dtype, shape) of each output, None where unknown, by the op's schema; None
    when inference fails (noted as a contradiction or a failure)."""
    domain = "" if is_default_domain(node.domain) else node.domain
    try:
        schema = onnx.defs.get_schema(node.op, walk.opset.get(domain, 1), domain)
    except onnx.defs.SchemaError:
        walk.failures[node.name] = f"no schema for {node.op} in domain '{domain}'"
        return None
    types = {name: _type_of(walk, t, elems[name]) for t in node.inputs if (name := t.name)}
    data = {name: numpy_helper.from_array(v, name) for name, v in values.items()}
    proto = real_typed(OnnxExporter.export_node(node))
    try:
        inferred = shape_inference.infer_node_outputs(
            schema, proto, types, data,
            opset_imports=[helper.make_opsetid(d, v) for d, v in walk.opset.items()],
        )  # fmt: skip
    except shape_inference.InferenceError as e:
        walk.conflict(node, str(e).strip().splitlines()[0])
        return None
    except Exception as e:  # the checker's own errors: the node is malformed
        walk.failures[node.name] = str(e).strip().splitlines()[0]
        return None
    found = []
    for out in node.outputs:
        tp = inferred.get(out.name)
        if tp is None or not tp.tensor_type.elem_type:
            found.append(None)
            continue
        tt = tp.tensor_type
        shape = None
        if tt.HasField("shape"):
            shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                     for d in tt.shape.dim]  # fmt: skip
        found.append((np.dtype(np_of(tt.elem_type)), shape))
    return found


def _type_of(walk: ReadingContext, t: gs.Tensor, elem: np.dtype) -> onnx.TypeProto:
    if is_complex_np(elem):
        elem = real_of(elem)
    return helper.make_tensor_type_proto(onnx_of(elem), walk.shape.get(t.name))


def body_results(node: gs.Node, inner: ReadingContext | None = None) -> list:
    """(dtype, shape) of each output of a Loop or Scan, from what its body gives
    back: a state as it is, a scan output stacked on a new axis. From the walk of
    the body where one read it, else from the body's declarations."""
    body = node.attrs["body"]
    results = body.outputs[1:] if node.op == "Loop" else body.outputs
    states = len(node.inputs) - (2 if node.op == "Loop" else node.attrs["num_scan_inputs"])
    axes = list(node.attrs.get("scan_output_axes", []))
    found = []
    for j, result in enumerate(results[: len(node.outputs)]):
        dtype, shape = declared(result)
        if inner is not None and inner.typed(result):
            dtype = inner.kind.get(result.name, inner.elem.get(result.name))
            shape = inner.shape[result.name]
        if dtype is None or shape is None:
            found.append(None)
            continue
        if j >= states:
            axis = axes[j - states] if j - states < len(axes) else 0
            axis = axis % (len(shape) + 1)
            shape = [*shape[:axis], None, *shape[axis:]]
        found.append((dtype, shape))
    return found


def set_inferred(walk: ReadingContext, node: gs.Node, found: list) -> None:
    """Records the (dtype, shape) inferred for each output, None where unknown."""
    for out, inferred in zip(node.outputs, found, strict=False):
        if inferred is None:
            continue
        dtype, shape = inferred
        shape = None if shape is None else list(shape)
        if out.name in walk.kind:
            walk.shape[out.name] = shape
        else:  # a subgraph's declared complex output is complex here too
            walk.record(out, dtype, shape)
    fold(walk, node)


def fold(walk: ReadingContext, node: gs.Node) -> None:
    """Computes the small integer value `node` makes from known ones (a shape, an
    index, a length): exporters spell a shape as arithmetic on constants, and a
    reading needs its value (a Reshape's target, a Slice's bounds)."""
    if node.op not in FOLDED or len(node.outputs) != 1:
        return
    out = node.outputs[0]
    if walk.elem.get(out.name, np.dtype(np.float32)).kind not in "iu":
        return
    if node.op == "Shape":
        shape = walk.shape.get(node.inputs[0].name)
        if not static(shape):
            return
        dims = np.array(shape, np.int64)
        start, end = node.attrs.get("start", 0), node.attrs.get("end")
        walk.folded[out.name] = dims[start:end]
        return
    values = {t.name: walk.constant(t) for t in node.inputs if t.name}
    if any(v is None for v in values.values()):
        return
    found = evaluate(OnnxExporter.export_node(node), values, walk.opset.get("", 1))
    if found is not None and np.asarray(found[0]).size <= MAX_READ_ELEMENTS:
        walk.folded[out.name] = np.asarray(found[0])


def real_typed(proto: onnx.NodeProto) -> onnx.NodeProto:
    """`proto` with a complex type or tensor attribute made real of the same shape: a
    complex value takes part in shape inference as a real tensor of its logical shape,
    and some schemas (ConstantOfShape's) list no complex type."""
    for attr in proto.attribute:
        if (
            attr.name in TYPE_ATTRIBUTES
            and attr.type == onnx.AttributeProto.INT
            and is_complex_onnx(attr.i)
        ):
            attr.i = onnx_of(real_of(np_of(attr.i)))
        elif attr.type == onnx.AttributeProto.TENSOR and is_complex_onnx(attr.t.data_type):
            real = real_of(np_of(attr.t.data_type))
            attr.t.CopyFrom(numpy_helper.from_array(np.zeros(attr.t.dims, real), attr.t.name))
    return proto


def _key_of(value):
    """`value` (an attribute, a constant input) as part of a hashable key; None when it
    is too large, or of a kind that has no key."""
    if isinstance(value, gs.Constant):
        value = value.values
    if isinstance(value, np.ndarray):
        if value.size > _KEY_MAX_ELEMENTS:
            return None
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        parts = tuple(_key_of(v) for v in value)
        return None if any(p is None for p in parts) else ("seq", parts)
    if isinstance(value, (bool, int, float, str, bytes)):
        return (type(value).__name__, value)
    return None


def _inference_key(node: gs.Node, known: list, values: list):
    """What decides the shapes `infer` finds for `node`: its op, attributes, input
    types and shapes, and its small integer constant inputs; None when one of them
    has no key (the node is then inferred on its own)."""
    attrs = []
    for name, value in node.attrs.items():  # every node's: loops, no generators
        key = _key_of(value)
        if key is None:
            return None
        attrs.append((name, key))
    attrs.sort()
    data = []
    for value in values:
        key = None if value is None else _key_of(value)
        if key is None and value is not None:
            return None
        data.append(key)
    return (node.op, node.domain or "", len(node.outputs), tuple(attrs), tuple(known), tuple(data))
