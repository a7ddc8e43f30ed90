"""Load a model file, with errors that say what is wrong with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import onnx
from onnx import AttributeProto, TensorProto
from onnx.external_data_helper import (
    ExternalDataInfo,
    load_external_data_for_model,
    load_external_data_for_tensor,
    uses_external_data,
)

from .dtypes import is_complex_onnx
from .errors import LoadError

TENSORFLOW_OPS = frozenset(
    {"Complex", "Real", "Imag", "Angle", "Conj", "ConjugateTranspose", "ComplexAbs",
     *(f"{kind}{suffix}" for kind in ("FFT", "IFFT", "RFFT", "IRFFT") for suffix in ("", "2D", "3D"))}
)  # fmt: skip
"""TensorFlow's complex ops, which tf2onnx writes as they are, in the default domain,
where it has no converter. They are no ONNX ops; `normalize` gives them their meaning."""

STREAM_MIN_BYTES = 1 << 20
"""With `stream`, real external tensors of this size or more stay on disk: the
rewrite does not read them, and saving copies their bytes file to file."""


def graphs_in(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """`graph` and every subgraph in it, at any depth."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield from graphs_in(attr.g)
            elif attr.type == AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from graphs_in(g)


def graph_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node of `graph`, subgraphs' included."""
    for g in graphs_in(graph):
        yield from g.node


def is_tensorflow_op(node: onnx.NodeProto) -> bool:
    """True for one of TensorFlow's complex ops, as tf2onnx writes it."""
    return node.op_type in TENSORFLOW_OPS and node.domain in ("", "ai.onnx")


def graph_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    """Every tensor of `graph`: initializers, and tensor attributes, subgraphs included."""
    for g in graphs_in(graph):
        yield from g.initializer
        for node in g.node:
            for attr in node.attribute:
                if attr.type == AttributeProto.TENSOR:
                    yield attr.t
                elif attr.type == AttributeProto.TENSORS:
                    yield from attr.tensors


def external_tensors(model: onnx.ModelProto) -> list[TensorProto]:
    """Every tensor whose data lives in an external file."""
    return [t for t in graph_tensors(model.graph) if uses_external_data(t)]


def external_length(t: TensorProto, base_dir: Path) -> int:
    """Bytes of an external tensor's data: its `length`, or to the end of its file."""
    info = ExternalDataInfo(t)
    if info.length is not None:
        return int(info.length)
    return (base_dir / info.location).stat().st_size - int(info.offset or 0)


def _check_external(model: onnx.ModelProto, path: Path) -> None:
    base = path.parent
    for t in external_tensors(model):
        info = ExternalDataInfo(t)
        data = base / info.location
        if not data.is_file():
            raise LoadError(
                f"external data file '{info.location}' is missing", file=str(path), tensor=t.name
            )
        need = (info.offset or 0) + (info.length or 0)
        if need > data.stat().st_size:
            raise LoadError(
                f"external data file '{info.location}' is too short: needs {need} bytes, has "
                f"{data.stat().st_size}",
                file=str(path),
                tensor=t.name,
            )


def _with_tensorflow_ops_aside(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """A copy with TensorFlow's raw ops in a domain of their own, for the checker to
    pass over; None when the model has none."""
    if not any(is_tensorflow_op(n) for n in graph_nodes(model.graph)):
        return None
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for node in graph_nodes(copy.graph):
        if is_tensorflow_op(node):
            node.domain = "org.tensorflow"
    copy.opset_import.append(onnx.helper.make_opsetid("org.tensorflow", 1))
    return copy


def load_model(path: str | Path) -> onnx.ModelProto:
    """Reads an ONNX model and its external data (see `read_model`)."""
    return read_model(path)[0]


def read_model(path: str | Path, stream: bool = False) -> tuple[onnx.ModelProto, bool]:
    """Reads an ONNX model and its external data.

    Args:
        path: The .onnx file.
        stream: Load only the external data the rewrite may read: complex tensors
            and small ones. Large real tensors keep pointing into the files beside
            `path` (see `save_model`'s `source_dir`), so that a model of many GB
            is never held in memory.

    Returns:
        The model, with its external data loaded (or, with `stream`, the part of
        it described above), and whether it had any: a model stored that way is
        written back that way.

    Raises:
        LoadError: The file is missing, not ONNX, truncated, or its external data is
            missing or short. The message names the file and, where it applies, the tensor.
    """
    path = Path(path)
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
    external = external_tensors(model)
    _check_external(model, path)
    try:
        if not stream:
            load_external_data_for_model(model, str(path.parent))
        for t in external if stream else ():
            if is_complex_onnx(t.data_type) or external_length(t, path.parent) < STREAM_MIN_BYTES:
                load_external_data_for_tensor(t, str(path.parent))
    except Exception as e:
        raise LoadError(f"cannot load external data: {e}", file=str(path)) from e
    try:
        # Tensors still on disk are checked where they are, beside the file.
        on_disk = any(uses_external_data(t) for t in external)
        raw = _with_tensorflow_ops_aside(model)
        onnx.checker.check_model(raw or (str(path) if on_disk else model))
    except Exception as e:
        raise LoadError(f"not a valid ONNX model, or truncated: {e}", file=str(path)) from e
    return model, bool(external)
