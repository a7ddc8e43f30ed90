"""The static TensorRT parser check, on the fixture zoo and on what it must catch."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import not_peers
from helpers import init, make_model, vi
from onnx import TensorProto, helper

from onnx_decomplex import decomplex
from onnx_decomplex.check import find_complex
from onnx_decomplex.errors import UnsupportedError
from onnx_decomplex.folder.zoo import find_models
from onnx_decomplex.normalize import NormalizeError
from onnx_decomplex.trt import support
from onnx_decomplex.trt.lint import CHECKS, ERROR, WARNING, lint


def messages(result, level=None):
    return [str(f) for f in result.findings if level is None or f.level == level]


TENSORRT_GAPS: dict[str, str] = {}
"""Whole models (fixtures/models) the TensorRT target does not lower yet, and why. (The
Keras FNO's irfft, whose bins tf2onnx left unknown, lowers since its shapes are folded.)"""


@pytest.mark.slow  # every fixture rewritten for TensorRT and linted, 10 s
def test_zoo_passes_after_the_tensorrt_target(root):
    """Every fixture the tool can rewrite would parse, but for TENSORRT_GAPS; each fails
    as given."""
    checked = 0
    for path in not_peers(find_models(root / "fixtures")):
        if path.parent.parent.name == "models" and path.name in TENSORRT_GAPS:
            continue
        model = onnx.load(path)
        try:
            out, report = decomplex(model, target="tensorrt")
        except (UnsupportedError, NormalizeError):
            continue  # refused with a reason (complex_relu; raw ops): nothing to hand TensorRT
        result = lint(out)
        assert result.passed, (path.name, messages(result))
        if find_complex(model):
            before = lint(model)
            assert not before.passed, path.name
            assert any("COMPLEX" in m for m in messages(before, ERROR)), path.name
        checked += 1
    assert checked >= 12


def test_a_dft_fails_without_the_lowering():
    """A DFT of dynamic length, which the default target keeps: TensorRT has no DFT."""
    node = helper.make_node("DFT", ["x"], ["y"], axis=1)
    model = make_model(
        [node], [vi("x", np.float32, [2, "n", 2])], [vi("y", np.float32, [2, "n", 2])]
    )
    out, report = decomplex(model)
    assert not report.has_complex and not report.lowered
    errors = lint(out).errors
    assert {f.op_type for f in errors} == {"DFT"}
    assert all("marked unsupported" in f.message for f in errors)


def test_complex128_without_narrowing_fails(root):
    model = onnx.load(root / "fixtures" / "rope_complex128.onnx")
    out, _ = decomplex(model, target="tensorrt", keep_double=True)
    text = messages(lint(out), ERROR)
    assert any("graph input of type DOUBLE" in m for m in text)
    assert any("not DOUBLE" in m for m in text)


def one(node, inputs, outputs, inits=(), opset=18):
    return lint(make_model([node], inputs, outputs, inits, opset))


def test_runtime_reduce_axes():
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"])
    result = one(
        node, [vi("x", np.float32, [2, 3]), vi("axes", np.int64, [1])], [vi("y", np.float32, None)]
    )
    assert [f.tensor for f in result.errors] == ["axes"]
    ok = one(
        node,
        [vi("x", np.float32, [2, 3])],
        [vi("y", np.float32, None)],
        [init("axes", np.array([1]))],
    )
    assert ok.passed and not ok.findings


def test_unknown_and_custom_ops():
    unique = one(
        helper.make_node("Unique", ["x"], ["y"]),
        [vi("x", np.float32, [4])],
        [vi("y", np.float32, None)],
    )
    assert "marked unsupported" in unique.errors[0].message
    custom = helper.make_node("Fancy", ["x"], ["y"], domain="my.ops")
    model = make_model([custom], [vi("x", np.float32, [4])], [vi("y", np.float32, None)])
    model.opset_import.append(helper.make_opsetid("my.ops", 1))
    result = lint(model)
    assert result.passed and "plugin" in result.warnings[0].message


def test_types_an_op_does_not_take():
    result = one(
        helper.make_node("MatMul", ["a", "b"], ["y"]),
        [vi("a", np.int32, [2, 2]), vi("b", np.int32, [2, 2])],
        [vi("y", np.int32, None)],
    )
    assert result.errors[0].message == "takes FP32, FP16, BF16, not INT32"


def test_cast_target():
    result = one(
        helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT16),
        [vi("x", np.float32, [2])],
        [vi("y", np.int16, None)],
    )
    assert any("casts to INT16" in m for m in messages(result, ERROR))


def test_float64_weights_warn_and_io_errors():
    node = helper.make_node("Add", ["x", "w"], ["y"])
    result = one(
        node, [vi("x", np.float64, [2])], [vi("y", np.float64, None)], [init("w", np.ones(2))]
    )
    assert any("float64 weight" in m for m in messages(result, WARNING))
    assert any("graph input of type DOUBLE" in m for m in messages(result, ERROR))


def test_complex_weights_are_errors():
    node = helper.make_node("Add", ["x", "w"], ["y"])
    w = init("w", np.ones(2, np.complex64))
    result = one(node, [vi("x", np.float32, [2])], [vi("y", np.float32, None)], [w])
    assert "tensor 'w': COMPLEX64 weight: TensorRT has no complex type" in messages(result, ERROR)


def test_rotary_embedding_needs_10_15():
    node = helper.make_node(
        "RotaryEmbedding", ["x", "cos", "sin"], ["y"], interleaved=1, num_heads=2
    )
    result = one(
        node,
        [
            vi("x", np.float32, [1, 4, 8]),
            vi("cos", np.float32, [1, 4, 2]),
            vi("sin", np.float32, [1, 4, 2]),
        ],
        [vi("y", np.float32, None)],
        opset=23,
    )
    assert result.passed
    assert messages(result, WARNING) == ["node '' (RotaryEmbedding): imported since TensorRT 10.15"]


def test_opset_out_of_range():
    model = make_model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [vi("x", np.float32, [2])],
        [vi("y", np.float32, None)],
    )
    model.opset_import[0].version = 8
    assert "opset 8" in lint(model).errors[0].message


@pytest.mark.parametrize(
    "node, ok",
    [
        (helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add"), False),
        (helper.make_node("ScatterND", ["x", "i", "u"], ["y"]), True),
    ],
)
def test_scatter_reduction(node, ok):
    result = one(
        node,
        [vi("x", np.float32, [4]), vi("i", np.int64, [1, 1]), vi("u", np.float32, [1])],
        [vi("y", np.float32, None)],
    )
    assert result.passed is ok


def test_table_is_consistent():
    assert not set(support.OPS) & support.UNSUPPORTED
    assert set(CHECKS) <= set(support.OPS)
    assert "DFT" in support.UNSUPPORTED and "Atan" in support.OPS
    assert support.OPSETS == (9, 24) and "10.15" in support.SOURCE
