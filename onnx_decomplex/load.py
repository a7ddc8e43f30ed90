"""Load a model file, with errors that say what is wrong with it."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.descriptor import FieldDescriptor
from onnx import AttributeProto, TensorProto, helper, numpy_helper
from onnx.external_data_helper import (
    load_external_data_for_tensor,
    uses_external_data,
)

from . import constants
from .dtypes import TYPE_ATTRIBUTES, is_complex_onnx
from .errors import LoadError
from .graphs import graph_nodes, graphs_in, is_default_domain, subgraphs

TENSORFLOW_OPS = frozenset(
    {"Complex", "Real", "Imag", "Angle", "Conj", "ConjugateTranspose", "ComplexAbs",
     "Inv", "Rank", "Reverse", "SegmentSum", "StridedSlice",
     *(f"{kind}{suffix}" for kind in ("FFT", "IFFT", "RFFT", "IRFFT") for suffix in ("", "2D", "3D"))}
)  # fmt: skip
"""TensorFlow's complex ops, which tf2onnx writes as they are, in the default domain,
where it has no converter. They are no ONNX ops; `normalize` gives them their meaning."""

STREAM_MIN_BYTES = 1 << 20
"""With `stream`, external tensors of this size or more stay on disk: saving copies
their bytes file to file."""


_TENSOR, _TENSORS = AttributeProto.TENSOR, AttributeProto.TENSORS
_GRAPH, _GRAPHS = AttributeProto.GRAPH, AttributeProto.GRAPHS


def is_tensorflow_op(node: onnx.NodeProto) -> bool:
    """True for one of TensorFlow's complex ops, as tf2onnx writes it."""
    return node.op_type in TENSORFLOW_OPS and is_default_domain(node.domain)


def graph_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    """Every tensor of `graph`: initializers, and tensor attributes, subgraphs included."""
    return (t for _, t in _tensors_in(graph))


def _tensors_in(graph: onnx.GraphProto) -> Iterator[tuple[onnx.NodeProto | None, TensorProto]]:
    """The tensors of `graph` and of its subgraphs, in `graphs_in`'s order, each with the
    node that holds it (None for an initializer); one look at each attribute finds
    tensors and bodies both."""
    for t in graph.initializer:
        yield None, t
    inner = []
    for node in graph.node:
        for attr in node.attribute:
            kind = attr.type
            if kind == _TENSOR:
                yield node, attr.t
            elif kind == _TENSORS:
                for t in attr.tensors:
                    yield node, t
            elif kind == _GRAPH:
                inner.append(attr.g)
            elif kind == _GRAPHS:
                inner += attr.graphs
    for g in inner:
        yield from _tensors_in(g)


def external_tensors(model: onnx.ModelProto) -> list[TensorProto]:
    """Every tensor whose data lives in an external file."""
    return [t for t in graph_tensors(model.graph) if uses_external_data(t)]


def holds_external(model: onnx.ModelProto) -> bool:
    """Whether a tensor's data lives in an external file (it stops at the first)."""
    return any(uses_external_data(t) for t in graph_tensors(model.graph))


def data_files(model: onnx.ModelProto) -> tuple[str, ...]:
    """The files its external tensors' data lives in, by location (relative to the
    model's folder, as the model names them), sorted, each once. For a model read
    without its external data: a read loads some."""
    return _locations(external_tensors(model))


def _locations(external: list[TensorProto]) -> tuple[str, ...]:
    return tuple(sorted({_external_entry(t, "location") or "" for t in external}))


def _external_entry(t: TensorProto, key: str) -> str | None:
    """The last value of `key` among the tensor's external data entries, as onnx reads it."""
    found = None
    for entry in t.external_data:
        if entry.key == key:
            found = entry.value
    return found


def external_location(t: TensorProto) -> tuple[str, int, int | None]:
    """Where an external tensor's data is: (location, offset, length or None).

    Raises:
        LoadError: The offset or length is not a non-negative integer, naming the tensor.
    """
    numbers = {}
    for key in ("offset", "length"):
        text = _external_entry(t, key)
        if text is None:
            continue
        if not text.strip().isdigit():
            raise LoadError(
                f"external data {key} {text!r} is not a non-negative integer", tensor=t.name
            )
        numbers[key] = int(text)
    return _external_entry(t, "location") or "", numbers.get("offset", 0), numbers.get("length")


def external_array(t: TensorProto, base_dir: Path) -> np.ndarray:
    """The values of an external tensor, read from `base_dir` (or from its location
    when that is absolute: the parts the rewrite splits beside the output)."""
    location, offset, _ = external_location(t)
    dtype = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
    count = int(np.prod(t.dims, dtype=np.int64))
    values = np.fromfile(Path(base_dir) / location, dtype, count, offset=offset)
    if values.size != count:
        raise LoadError(f"external data ends early: {values.size} of {count} values", tensor=t.name)
    return values.reshape(tuple(t.dims))


def external_length(t: TensorProto, base_dir: Path) -> int:
    """Bytes of an external tensor's data: its `length`, or to the end of its file."""
    location, offset, length = external_location(t)
    if length is not None:
        return length
    return (base_dir / location).stat().st_size - offset


def _check_external(external: list[TensorProto], path: Path) -> None:
    """Each of the `external` tensors of the model at `path` points into a file beside
    it, long enough to hold its data."""
    base = path.parent
    for t in external:
        try:
            location, offset, length = external_location(t)
        except LoadError as e:
            raise e.at_file(str(path)) from None
        data = base / location
        if not location or not data.is_file():
            raise LoadError(
                f"external data file '{location}' is missing", file=str(path), tensor=t.name
            )
        size = data.stat().st_size
        if offset > size or offset + (length or 0) > size:
            raise LoadError(
                f"external data file '{location}' is too short: needs "
                f"{offset + (length or 0)} bytes, has {size}",
                file=str(path),
                tensor=t.name,
            )


def _check_inside(external: list[TensorProto], path: Path) -> None:
    """Each data file of the model at `path` is a file inside its folder, not a link, as
    onnx reads them: folder mode counts on it (`zoo.input_files`). Where onnx checks,
    it refuses first; a check of its own holds where it does not (a data file left on
    disk beside a model with TensorFlow's ops, which the checker sees in memory)."""
    base = path.parent.resolve()
    for t in external:
        location = _external_entry(t, "location") or ""
        data = path.parent / location
        if data.is_symlink() or not data.resolve().is_relative_to(base):
            raise LoadError(
                f"external data file '{location}' is a link, or lies outside the model's "
                "folder: onnx reads neither",
                tensor=t.name,
            )


ELEMENT_TYPES = frozenset(TensorProto.DataType.values()) - {TensorProto.UNDEFINED}
"""The element types of this onnx version; anything else in a file is damage."""

_ODD_VALUES = {
    "map_type": "a map",
    "sparse_tensor_type": "a sparse tensor",
    "opaque_type": "opaque",
}


_STRING, _MESSAGE = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE
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


def _check_sound(
    model: onnx.ModelProto,
    graphs: list[onnx.GraphProto],
    tensors: list[tuple[onnx.NodeProto | None, TensorProto]],
) -> None:
    """What the checker lets pass and the rewrite cannot take: text that is not UTF-8,
    element types this onnx does not know, negative declared dims, non-tensor graph
    values, and control-flow bodies with the wrong number of inputs or outputs.
    `graphs` are the model's (`graphs_in`), `tensors` its tensors (`_tensors_in`).

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


def memory_bytes() -> int:
    """This machine's physical memory, in bytes (a very large number where unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


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


def _check_shapes(graph: onnx.GraphProto, outer: dict | None = None) -> None:
    known = constants.graph_tensors(graph, outer)
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and is_default_domain(node.domain):
            _check_constant_of_shape(node, known)
        for body in subgraphs(node):
            _check_shapes(body, known)


def _dense(sparse: onnx.SparseTensorProto) -> TensorProto:
    """A sparse tensor as the dense tensor it stands for."""
    return numpy_helper.from_array(constants.dense(sparse), sparse.values.name)


def _densify(graphs: list[onnx.GraphProto]) -> None:
    """Sparse initializers and Constant sparse values become dense ones: no rule or
    stage reads the sparse form, and the meaning is the same."""
    for g in graphs:
        if g.sparse_initializer:
            g.initializer.extend(_dense(s) for s in g.sparse_initializer)
            del g.sparse_initializer[:]
        for node in g.node:
            if node.op_type != "Constant":
                continue
            for attr in node.attribute:
                if attr.name == "sparse_value":
                    attr.CopyFrom(helper.make_attribute("value", _dense(attr.sparse_tensor)))


def _with_tensorflow_ops_aside(
    model: onnx.ModelProto, graphs: list[onnx.GraphProto]
) -> onnx.ModelProto | None:
    """A copy with TensorFlow's raw ops in a domain of their own, for the checker to
    pass over; None when the model (of `graphs`) has none.

    Tensors still on disk are empty in the copy: the checker would look for their files
    in the working folder, since the copy has none of its own. `_check_external` and
    `_check_inside` have checked them where they are."""
    if not any(is_tensorflow_op(n) for g in graphs for n in g.node):
        return None
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for node in graph_nodes(copy.graph):
        if is_tensorflow_op(node):
            node.domain = "org.tensorflow"
    for t in graph_tensors(copy.graph):
        if uses_external_data(t):
            stand_in = TensorProto(name=t.name, data_type=t.data_type, dims=[0])
            t.CopyFrom(stand_in)
    copy.opset_import.append(onnx.helper.make_opsetid("org.tensorflow", 1))
    return copy


def load_model(path: str | Path) -> onnx.ModelProto:
    """Reads an ONNX model and its external data (see `read_model`)."""
    return read_model(path)[0]


def read_model(path: str | Path, stream: bool = False) -> tuple[onnx.ModelProto, tuple[str, ...]]:
    """Reads an ONNX model and its external data.

    Args:
        path: The .onnx file.
        stream: Load only small external tensors and those in node attributes.
            Large ones keep pointing into the files beside `path` (see
            `save_model`'s `source_dir`), so that a model of many GB is never held
            in memory: the rewrite loads what it reads, or rewrites a complex one
            where it lies (see `stream`).

    Returns:
        The model, with its external data loaded (or, with `stream`, the part of
        it described above), and the files that data was in (`data_files`, as the
        file names them; empty for a model without): a model stored that way is
        written back that way.

    Raises:
        LoadError: The file is missing, not ONNX, truncated, damaged (text that is not
            UTF-8, unknown element types, negative dims, control-flow bodies of the wrong
            arity), or its external data is missing, short or badly placed. The message
            names the file and, where it applies, the node and tensor.
    """
    path = Path(path)
    model = _parse(path)
    graphs = list(graphs_in(model.graph))
    tensors = list(_tensors_in(model.graph))
    try:
        _check_sound(model, graphs, tensors)
        external = [t for _, t in tensors if uses_external_data(t)]
        _check_external(external, path)
    except LoadError as e:
        raise e.at_file(str(path)) from None
    locations = _locations(external)  # before the load below takes some of them in
    _load_external(external, tensors, path, stream)
    try:
        # Tensors still on disk are checked where they are, beside the file.
        on_disk = any(uses_external_data(t) for t in external)
        raw = _with_tensorflow_ops_aside(model, graphs)
        onnx.checker.check_model(raw or (str(path) if on_disk else model))
    except Exception as e:
        raise LoadError(f"not a valid ONNX model, or truncated: {e}", file=str(path)) from e
    try:
        _check_inside(external, path)
        if any(n.op_type == "ConstantOfShape" for g in graphs for n in g.node):
            _check_shapes(model.graph)
        _densify(graphs)
    except LoadError as e:
        raise e.at_file(str(path)) from None
    return model, locations


def _parse(path: Path) -> onnx.ModelProto:
    """The file's model, without its external data: the one parse of a read."""
    if not path.exists():
        raise LoadError("no such file", file=str(path))
    if path.is_dir():
        raise LoadError("is a folder, not an ONNX file", file=str(path))
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as e:
        raise LoadError(f"not an ONNX model, or truncated: {e}", file=str(path)) from e
    if model.ir_version <= 0 or not model.HasField("graph") or not model.graph.output:
        raise LoadError(
            "not an ONNX model, or truncated: it has no IR version or no graph outputs",
            file=str(path),
        )
    return model


def _load_external(
    external: list[TensorProto],
    tensors: list[tuple[onnx.NodeProto | None, TensorProto]],
    path: Path,
    stream: bool,
) -> None:
    """Loads the `external` tensors' data from beside `path`; with `stream`, only the
    small ones and those in node attributes (`tensors`, with the node that holds each)."""
    # Tensors in node attributes (a Constant's value) are read where they are used,
    # with no folder to find their files in: they are always loaded, from beside `path`.
    in_nodes = {id(t) for node, t in tensors if node is not None} if external else set()
    try:
        with warnings.catch_warnings():
            # onnx warns of external data keys it ignores; the data is still read right.
            warnings.simplefilter("ignore", UserWarning)
            for t in external:
                kept = stream and id(t) not in in_nodes
                if not kept or external_length(t, path.parent) < STREAM_MIN_BYTES:
                    load_external_data_for_tensor(t, str(path.parent))
    except Exception as e:
        raise LoadError(f"cannot load external data: {e}", file=str(path)) from e
