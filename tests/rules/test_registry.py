"""The registry: the exact op set, and no silent double registration."""

import pytest

from onnx_decomplex.rules import REGISTRY, rule, supported_ops

EXPECTED = {
    # arithmetic
    "Add", "Sub", "Mul", "Div", "Neg", "Identity", "Sum", "Mean", "Pow", "Equal",
    # unary
    "Abs", "Exp", "Log", "Sqrt", "Sin", "Cos", "Tan", "Sinh", "Cosh", "Tanh", "Asin",
    "Acos", "Atan", "Asinh", "Acosh", "Atanh", "Sigmoid", "Sign", "Reciprocal", "Round",
    "IsNaN", "IsInf",
    # cast, constant, shape
    "Cast", "Constant", "ConstantOfShape", "EyeLike", "Shape", "Size",
    # layout and indexing
    "Transpose", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Concat", "Split", "Slice",
    "Expand", "Tile", "Pad", "Where", "Compress", "ReverseSequence", "DepthToSpace",
    "SpaceToDepth", "Trilu", "CumSum", "Gather", "GatherElements", "GatherND",
    "ScatterElements", "ScatterND",
    # reductions
    "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
    "ReduceLogSum", "ReduceLogSumExp",
    # linear algebra and transforms
    "MatMul", "Gemm", "Einsum", "Conv", "ConvTranspose", "DFT", "STFT",
    # control flow
    "If", "Loop", "Scan", "Softmax", "LogSoftmax",
}  # fmt: skip


def test_registry_op_set_is_exact():
    # A rule that drops out of the registry (a lost import, a typo) fails here.
    assert supported_ops() == EXPECTED


def test_registering_an_op_twice_raises():
    with pytest.raises(ValueError, match="Mul already has a rule"):
        rule("Mul")(lambda ctx, node: None)
    assert REGISTRY["Mul"].fn.__name__ == "mul"
