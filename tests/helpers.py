"""Model builders and the three checks every rule test makes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.dtypes import onnx_of

IR_VERSION = {11: 6, 13: 7, 17: 8, 18: 8, 21: 10}
OPSETS = (11, 13, 18)
PRECISIONS = (np.complex64, np.complex128)


def vi(name: str, dtype, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, onnx_of(dtype), shape)


def init(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def make_model(nodes, inputs, outputs, initializers=(), opset: int = 18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "test", list(inputs), list(outputs), list(initializers))
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=IR_VERSION[opset]
    )


def crandn(rng, shape, dtype=np.complex64) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def assert_rewrites(model: onnx.ModelProto, *, feeds=None, input_shapes=None, atol=1e-5, rtol=1e-4):
    """The three checks: nothing complex is left, the full checker passes, and
    onnxruntime on the rewrite matches onnx.reference on the original."""
    out, report = decomplex(model)
    assert report.has_complex
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    result = validate(model, out, feeds, input_shapes=input_shapes, atol=atol, rtol=rtol)
    assert result.outputs, "nothing was compared"
    assert result.passed, result.outputs
    return out


def op_types(model: onnx.ModelProto) -> list[str]:
    return sorted(n.op_type for n in model.graph.node)


def run_ort(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)
