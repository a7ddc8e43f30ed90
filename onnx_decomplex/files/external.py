"""A model's weights on disk (external data): where each tensor's bytes lie, reading
them, and checking that every file is there, long enough, and inside the model's folder;
and how much memory this machine has to hold them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto
from onnx.external_data_helper import uses_external_data

from ..errors import LoadError

_TENSOR, _TENSORS = AttributeProto.TENSOR, AttributeProto.TENSORS
_GRAPH, _GRAPHS = AttributeProto.GRAPH, AttributeProto.GRAPHS


def graph_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    """Every tensor of `graph`: initializers, and tensor attributes, subgraphs included."""
    return (t for _, t in tensors_in(graph))


def tensors_in(graph: onnx.GraphProto) -> Iterator[tuple[onnx.NodeProto | None, TensorProto]]:
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
        yield from tensors_in(g)


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
    return locations(external_tensors(model))


def locations(external: list[TensorProto]) -> tuple[str, ...]:
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


def check_external(external: list[TensorProto], path: Path) -> None:
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


def check_inside(external: list[TensorProto], path: Path) -> None:
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


def memory_bytes() -> int:
    """This machine's physical memory, in bytes (a very large number where unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62
