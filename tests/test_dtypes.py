"""The table of ops onnxruntime's CPU provider cannot run in float64, against the
installed onnxruntime: a stale entry or a missing one fails here."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from onnx_decomplex.dtypes import ORT_CPU_NO_FLOAT64, ort_lacks_float64

INPUTS = {"Mean": 2, "Conv": 2, "ConvTranspose": 2, "Sum": 2, "Max": 2, "MatMul": 2, "Gemm": 2}
EMITTED = [
    "Sin", "Cos", "Exp", "Log", "Tanh", "Sqrt", "Abs", "Neg", "Reciprocal", "Round", "Sign",
    "Sigmoid", "Ceil", "Sum", "Max", "MatMul", "Gemm", "ReduceSum", "ReduceMean", "ReduceMax",
    "ReduceProd", "Softmax",
]  # fmt: skip
"""Ops that rewrites of complex128 values emit in float64."""


def _runs_in_float64(op: str) -> bool:
    n = INPUTS.get(op, 1)
    shape = [4, 4] if op == "Gemm" else [1, 2, 4, 4]
    inputs = [helper.make_tensor_value_info(f"x{i}", TensorProto.DOUBLE, shape) for i in range(n)]
    node = helper.make_node(op, [f"x{i}" for i in range(n)], ["y"])
    output = helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)
    model = helper.make_model(
        helper.make_graph([node], "g", inputs, [output]),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    try:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        session.run(None, {f"x{i}": np.ones(shape) for i in range(n)})
    except Exception:
        return False
    return True


@pytest.mark.parametrize("op", sorted(ORT_CPU_NO_FLOAT64))
def test_listed_ops_have_no_float64_kernel(op):
    assert not _runs_in_float64(op), f"onnxruntime now runs {op} in float64"


@pytest.mark.parametrize("op", EMITTED)
def test_emitted_ops_have_one(op):
    assert _runs_in_float64(op)


def test_lacks_float64_only_for_float64():
    assert ort_lacks_float64("Atan", np.float64)
    assert not ort_lacks_float64("Atan", np.float32)
    assert not ort_lacks_float64("Sin", np.float64)
    assert not ort_lacks_float64("Atan", None)
