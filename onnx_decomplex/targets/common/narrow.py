"""float64 -> float32 (and complex128 -> complex64), for TensorRT, which has no float64
tensors, and OpenVINO, whose CPU plugin computes float64 in float32.

The `normalize` pass narrows the native-complex model before the rewrite, so that the
rewrite's formulas take float32's limits (a float64 constant such as the least normal
float64 would turn to 0 in float32); the target's form narrows what is left after.

Every place a type is spelled is narrowed: graph inputs, outputs and value_info,
initializers, tensor attributes (Constant, ConstantOfShape), type attributes
(`Cast(to=)`, `EyeLike(dtype=)`, `RandomNormal(dtype=)`, ...), subgraphs and
model-local functions. Values past float32's range are clamped to +-FLT_MAX, as
TensorRT's parser does with the float64 weights it casts down, rather than
turned into infinities.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper
from onnx.external_data_helper import uses_external_data

from ...dtypes import TYPE_ATTRIBUTES
from ...errors import DecomplexError
from ...files.external import external_array
from ...graphs import labeled_graphs, node_graphs, node_label

NARROWER = {TensorProto.DOUBLE: TensorProto.FLOAT, TensorProto.COMPLEX128: TensorProto.COMPLEX64}
"""Each double type, and the single one it becomes."""


@dataclass
class Narrowed:
    """What `narrow_double` changed.

    Attributes:
        places: Each narrowed input, output, initializer or attribute, by name.
        clamped: Values clamped to +-FLT_MAX.
    """

    places: list[str] = field(default_factory=list)
    clamped: int = 0


def _narrow_tensor(t: TensorProto, external_dir: Path | None, narrowed: Narrowed) -> None:
    if uses_external_data(t):
        if external_dir is None:
            raise DecomplexError("its data is on disk and no folder was given", tensor=t.name)
        value = external_array(t, external_dir)
    else:
        value = numpy_helper.to_array(t)
    if value.dtype.kind == "c":
        re, im = _clamped(value.real, narrowed), _clamped(value.imag, narrowed)
        value = (re + 1j * im).astype(np.complex64)
    else:
        value = _clamped(value, narrowed)
    t.CopyFrom(numpy_helper.from_array(value, t.name))


def _clamped(value: np.ndarray, narrowed: Narrowed) -> np.ndarray:
    """float64 values as float32, finite ones past its range clamped to +-FLT_MAX."""
    big = np.finfo(np.float32).max
    finite = np.isfinite(value)
    narrowed.clamped += int(np.count_nonzero(finite & (np.abs(value) > big)))
    return np.where(finite, np.clip(value, -big, big), value).astype(np.float32)


def _narrow_type(tp: onnx.TypeProto) -> bool:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type" and tp.tensor_type.elem_type in NARROWER:
        tp.tensor_type.elem_type = NARROWER[tp.tensor_type.elem_type]
        return True
    inner = {
        "sequence_type": lambda: tp.sequence_type.elem_type,
        "optional_type": lambda: tp.optional_type.elem_type,
    }.get(kind)
    return _narrow_type(inner()) if inner else False


def _narrow_graph(g: onnx.GraphProto, where: str, base: Path | None, n: Narrowed) -> None:
    """Narrows `g` itself: its declarations, initializers and nodes (not its bodies)."""
    for kind, values in (("input", g.input), ("output", g.output), ("value_info", g.value_info)):
        for v in values:
            if _narrow_type(v.type) and kind != "value_info":
                n.places.append(f"{where}{kind} '{v.name}'")
    for t in g.initializer:
        if t.data_type in NARROWER:
            _narrow_tensor(t, base, n)
            n.places.append(f"{where}initializer '{t.name}'")
    _narrow_nodes(g.node, where, base, n)


def _narrow_nodes(nodes, where: str, base: Path | None, n: Narrowed) -> None:
    for node in nodes:
        label = node_label(node, where)
        for attr in node.attribute:
            if attr.type == AttributeProto.TENSOR and attr.t.data_type in NARROWER:
                _narrow_tensor(attr.t, base, n)
                n.places.append(f"{label} attribute '{attr.name}'")
            elif attr.type == AttributeProto.TENSORS:
                for t in attr.tensors:
                    if t.data_type in NARROWER:
                        _narrow_tensor(t, base, n)
                        n.places.append(f"{label} attribute '{attr.name}'")
            elif (
                attr.type == AttributeProto.INT
                and attr.name in TYPE_ATTRIBUTES
                and attr.i in NARROWER
            ):
                attr.i = NARROWER[attr.i]
                n.places.append(f"{label} attribute '{attr.name}'")


def narrow_double(
    model: onnx.ModelProto, external_dir: str | Path | None = None
) -> tuple[onnx.ModelProto, Narrowed]:
    """`model` with every float64 (complex128) type and value made float32 (complex64).

    Args:
        model: Any model; it is not modified.
        external_dir: Where float64 weights still on disk live; they are loaded.

    Returns:
        The narrowed copy (`model` itself when it holds no float64), and what changed.
    """
    out = onnx.ModelProto()
    out.CopyFrom(model)
    narrowed = Narrowed()
    base = Path(external_dir) if external_dir is not None else None
    for g, where in labeled_graphs(out.graph):
        _narrow_graph(g, where, base, narrowed)
    for fn in out.functions:
        where = f"function '{fn.name}': "
        _narrow_nodes(fn.node, where, base, narrowed)
        for node in fn.node:
            for g, inner in node_graphs(node, where):
                _narrow_graph(g, inner, base, narrowed)
    return (out, narrowed) if narrowed.places else (model, narrowed)
