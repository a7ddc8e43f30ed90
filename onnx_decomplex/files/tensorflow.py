"""TensorFlow's raw ops, which tf2onnx leaves in the default domain where it has no
converter: no ONNX ops, so the checker would refuse them, and `normalize` gives them their
meaning."""

from __future__ import annotations

import onnx
from onnx import TensorProto
from onnx.external_data_helper import uses_external_data

from ..graphs import graph_nodes, is_default_domain
from .external import graph_tensors

TENSORFLOW_OPS = frozenset(
    {"Complex", "Real", "Imag", "Angle", "Conj", "ConjugateTranspose", "ComplexAbs",
     "Inv", "Rank", "Reverse", "SegmentSum", "StridedSlice",
     *(f"{kind}{suffix}" for kind in ("FFT", "IFFT", "RFFT", "IRFFT") for suffix in ("", "2D", "3D"))}
)  # fmt: skip
"""TensorFlow's complex ops, which tf2onnx writes as they are, in the default domain,
where it has no converter. They are no ONNX ops; `normalize` gives them their meaning."""


def is_tensorflow_op(node: onnx.NodeProto) -> bool:
    """True for one of TensorFlow's complex ops, as tf2onnx writes it."""
    return node.op_type in TENSORFLOW_OPS and is_default_domain(node.domain)


def with_tensorflow_ops_aside(
    model: onnx.ModelProto, graphs: list[onnx.GraphProto]
) -> onnx.ModelProto | None:
    """A copy with TensorFlow's raw ops in a domain of their own, for the checker to
    pass over; None when the model (of `graphs`) has none.

    Tensors still on disk are empty in the copy: the checker would look for their files
    in the working folder, since the copy has none of its own. `check_external` and
    `check_inside` have checked them where they are."""
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
