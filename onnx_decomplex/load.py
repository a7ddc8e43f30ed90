"""Load a model file, with errors that say what is wrong with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import onnx
from onnx import AttributeProto, TensorProto
from onnx.external_data_helper import (
    ExternalDataInfo,
    load_external_data_for_model,
    uses_external_data,
)

from .errors import LoadError


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == AttributeProto.TENSOR:
                yield attr.t
            elif attr.type == AttributeProto.TENSORS:
                yield from attr.tensors
            elif attr.type == AttributeProto.GRAPH:
                yield from _graph_tensors(attr.g)
            elif attr.type == AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _graph_tensors(g)


def external_tensors(model: onnx.ModelProto) -> list[TensorProto]:
    """Every tensor whose data lives in an external file."""
    return [t for t in _graph_tensors(model.graph) if uses_external_data(t)]


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


def load_model(path: str | Path) -> onnx.ModelProto:
    """Reads an ONNX model and its external data (see `read_model`)."""
    return read_model(path)[0]


def read_model(path: str | Path) -> tuple[onnx.ModelProto, bool]:
    """Reads an ONNX model and its external data.

    Returns:
        The model, with its external data loaded, and whether it had any: a model
        stored that way is written back that way.

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
    had_external = bool(external_tensors(model))
    _check_external(model, path)
    try:
        load_external_data_for_model(model, str(path.parent))
    except Exception as e:
        raise LoadError(f"cannot load external data: {e}", file=str(path)) from e
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise LoadError(f"not a valid ONNX model, or truncated: {e}", file=str(path)) from e
    return model, had_external
