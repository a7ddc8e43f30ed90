"""Cast into, out of and between complex types."""

import numpy as np
import pytest
from helpers import assert_rewrites, crandn, init, make_model, op_types, vi
from onnx import TensorProto, helper

from onnx_decomplex.dtypes import onnx_of


@pytest.mark.parametrize("src", [np.float32, np.float64, np.int64, np.int32, np.bool_])
def test_real_to_complex_has_zero_imaginary_part(opset, cdtype, src):
    m = make_model(
        [helper.make_node("Cast", ["r"], ["y"], to=onnx_of(cdtype))],
        [vi("r", src, [2, 3])],
        [vi("y", cdtype, [2, 3])],
        opset=opset,
    )
    assert_rewrites(m)


def test_real_constant_to_complex_is_folded(cdtype):
    m = make_model(
        [
            helper.make_node("Cast", ["c"], ["cc"], to=onnx_of(cdtype)),
            helper.make_node("Mul", ["a", "cc"], ["y"]),
        ],
        [vi("a", cdtype, [3])],
        [vi("y", cdtype, [3])],
        [init("c", np.array([1.0, 2.0, 3.0], np.float32))],
    )
    out = assert_rewrites(m)
    assert "Cast" not in op_types(out)


@pytest.mark.parametrize("to", [np.float32, np.float64, np.int64, np.int32])
def test_complex_to_real_keeps_real_part(opset, cdtype, to):
    m = make_model(
        [helper.make_node("Cast", ["a"], ["y"], to=onnx_of(to))],
        [vi("a", cdtype, [2, 3])],
        [vi("y", to, [2, 3])],
        opset=opset,
    )
    rng = np.random.default_rng(0)
    # Scaled so that the integer casts see values other than 0.
    feeds = {"a": (4 * crandn(rng, [2, 3], cdtype)).astype(cdtype)}
    assert_rewrites(m, feeds=feeds)


def test_complex_to_bool_is_true_when_either_part_is_nonzero(opset, cdtype):
    m = make_model(
        [helper.make_node("Cast", ["a"], ["y"], to=TensorProto.BOOL)],
        [vi("a", cdtype, [4])],
        [vi("y", np.bool_, [4])],
        opset=opset,
    )
    feeds = {"a": np.array([0, 1j, 2, 0.5 - 3j], cdtype)}
    assert_rewrites(m, feeds=feeds)


@pytest.mark.parametrize("pair", [False, True])
def test_between_complex_precisions(opset, cdtype, pair):
    other = np.complex128 if cdtype == np.complex64 else np.complex64
    x = "p" if pair else "a"
    nodes = [helper.make_node("Cast", [x], ["y"], to=onnx_of(other))]
    if pair:
        nodes.insert(0, helper.make_node("Mul", ["a", "a"], ["p"]))
    m = make_model(nodes, [vi("a", cdtype, [2, 3])], [vi("y", other, [2, 3])], opset=opset)
    out = assert_rewrites(m)
    real = TensorProto.DOUBLE if other == np.complex128 else TensorProto.FLOAT
    assert out.graph.output[0].type.tensor_type.elem_type == real


def test_cast_to_same_complex_type_is_free(cdtype):
    m = make_model(
        [
            helper.make_node("Cast", ["a"], ["b"], to=onnx_of(cdtype)),
            helper.make_node("Neg", ["b"], ["y"]),
        ],
        [vi("a", cdtype, [3])],
        [vi("y", cdtype, [3])],
    )
    out = assert_rewrites(m)
    assert op_types(out) == ["Neg"]
