"""Transpose, Reshape, Unsqueeze, Squeeze, Flatten on packed tensors and on pairs."""

import numpy as np
import pytest
from helpers import assert_rewrites, init, make_model, op_types, vi
from onnx import TensorProto, helper


def _pair_source(cdtype):
    """A node that leaves its result as a (re, im) pair, to test the pair path."""
    return helper.make_node("Mul", ["a", "a"], ["x"])


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("perm", [[2, 0, 1], None])
def test_transpose(opset, cdtype, perm, pair):
    attrs = {} if perm is None else {"perm": perm}
    nodes = [helper.make_node("Transpose", ["x" if pair else "a"], ["y"], **attrs)]
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(nodes, [vi("a", cdtype, [2, 3, 4])], [vi("y", cdtype, None)], opset=opset)
    out = assert_rewrites(m)
    if not pair:
        assert op_types(out) == ["Transpose"]


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("shape", [[0, -1], [-1], [3, -1, 0], [4, 0, 3], []])
def test_reshape_constant_shape(opset, cdtype, shape, pair):
    src_shape = [1] if shape == [] else [3, 2, 4]
    nodes = [helper.make_node("Reshape", ["x" if pair else "a", "s"], ["y"])]
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(
        nodes,
        [vi("a", cdtype, src_shape)],
        [vi("y", cdtype, None)],
        [init("s", np.array(shape, np.int64))],
        opset=opset,
    )
    out = assert_rewrites(m)
    if not pair:
        assert op_types(out) == ["Reshape"]


def test_reshape_runtime_shape(opset, cdtype):
    m = make_model(
        [
            helper.make_node("Shape", ["like"], ["s"]),
            helper.make_node("Reshape", ["a", "s"], ["y"]),
        ],
        [vi("a", cdtype, [2, 6]), vi("like", np.float32, [3, 4])],
        [vi("y", cdtype, [3, 4])],
        opset=opset,
    )
    assert_rewrites(m)


@pytest.mark.parametrize("allowzero", [0, 1])
def test_reshape_allowzero(cdtype, allowzero):
    shape = [0, 3] if allowzero else [0, -1]
    src = [0, 3] if allowzero else [2, 3]
    m = make_model(
        [helper.make_node("Reshape", ["a", "s"], ["y"], allowzero=allowzero)],
        [vi("a", cdtype, src)],
        [vi("y", cdtype, None)],
        [init("s", np.array(shape, np.int64))],
        opset=18,
    )
    assert_rewrites(m)


def _axes_node(op, x, axes, opset):
    if opset < 13:
        return [helper.make_node(op, [x], ["y"], axes=axes)], []
    return [helper.make_node(op, [x, "axes"], ["y"])], [init("axes", np.array(axes, np.int64))]


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("axes", [[0], [-1], [1, -1], [-3, 0]])
def test_unsqueeze(opset, cdtype, axes, pair):
    nodes, inits = _axes_node("Unsqueeze", "x" if pair else "a", axes, opset)
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(nodes, [vi("a", cdtype, [2, 3])], [vi("y", cdtype, None)], inits, opset=opset)
    out = assert_rewrites(m)
    if not pair:
        assert op_types(out) == ["Unsqueeze"]


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("axes", [[0], [-1], [0, -1], None])
def test_squeeze(opset, cdtype, axes, pair):
    x = "x" if pair else "a"
    if axes is None:
        nodes, inits = [helper.make_node("Squeeze", [x], ["y"])], []
    else:
        nodes, inits = _axes_node("Squeeze", x, axes, opset)
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(nodes, [vi("a", cdtype, [1, 3, 1])], [vi("y", cdtype, None)], inits, opset=opset)
    assert_rewrites(m)


def test_unsqueeze_runtime_axes_uses_pairs(cdtype):
    # Axes known only at run time: each part is unsqueezed with the same axes.
    m = make_model(
        [
            helper.make_node("Shape", ["like"], ["n"]),
            helper.make_node("Sub", ["n", "one"], ["axes"]),
            helper.make_node("Unsqueeze", ["a", "axes"], ["y"]),
        ],
        [vi("a", cdtype, [2, 3]), vi("like", np.float32, [1])],
        [vi("y", cdtype, [2, 3, 1])],
        [init("one", np.array([2], np.int64))],  # axes = [1 - 2] = [-1]
        opset=18,
    )
    out = assert_rewrites(m)
    assert op_types(out).count("Unsqueeze") >= 2


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten(opset, cdtype, axis, pair):
    nodes = [helper.make_node("Flatten", ["x" if pair else "a"], ["y"], axis=axis)]
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(nodes, [vi("a", cdtype, [2, 3, 4])], [vi("y", cdtype, None)], opset=opset)
    assert_rewrites(m)


def test_symbolic_dims_survive_on_io(cdtype):
    m = make_model(
        [helper.make_node("Transpose", ["a"], ["y"], perm=[1, 0])],
        [vi("a", cdtype, ["batch", "seq"])],
        [vi("y", cdtype, ["seq", "batch"])],
    )
    out = assert_rewrites(m, input_shapes={"a": (3, 5)})
    dims = [d.dim_param or d.dim_value for d in out.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq", 2]
    dims = [d.dim_param or d.dim_value for d in out.graph.output[0].type.tensor_type.shape.dim]
    assert dims == ["seq", "batch", 2]
    real = TensorProto.FLOAT if cdtype == np.complex64 else TensorProto.DOUBLE
    assert out.graph.input[0].type.tensor_type.elem_type == real
