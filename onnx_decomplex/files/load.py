"""Load a model file, with errors that say what is wrong with it: the one parse of a
read, its soundness (`soundness`), its weights on disk (`external`), and the checker."""

from __future__ import annotations

import warnings
from pathlib import Path

import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data

from .. import constants
from ..errors import LoadError
from ..graphs import graphs_in
from .external import check_external, check_inside, external_length, locations, tensors_in
from .soundness import check_shapes, check_sound
from .tensorflow import with_tensorflow_ops_aside

STREAM_MIN_BYTES = 1 << 20
"""With `stream`, external tensors of this size or more stay on disk: saving copies
their bytes file to file."""


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
    tensors = list(tensors_in(model.graph))
    try:
        check_sound(model, graphs, tensors)
        external = [t for _, t in tensors if uses_external_data(t)]
        check_external(external, path)
    except LoadError as e:
        raise e.at_file(str(path)) from None
    files = locations(external)  # before the load below takes some of them in
    _load_external(external, tensors, path, stream)
    try:
        # Tensors still on disk are checked where they are, beside the file.
        on_disk = any(uses_external_data(t) for t in external)
        raw = with_tensorflow_ops_aside(model, graphs)
        onnx.checker.check_model(raw or (str(path) if on_disk else model))
    except Exception as e:
        raise LoadError(f"not a valid ONNX model, or truncated: {e}", file=str(path)) from e
    try:
        check_inside(external, path)
        if any(n.op_type == "ConstantOfShape" for g in graphs for n in g.node):
            check_shapes(model.graph)
        _densify(graphs)
    except LoadError as e:
        raise e.at_file(str(path)) from None
    return model, files


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
