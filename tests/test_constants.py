"""One reader of constant values: every Constant attribute, initializers, Identity of a
constant, at protobuf and at onnx-graphsurgeon level alike."""

import numpy as np
import onnx_graphsurgeon as gs
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx_decomplex.constants import (
    VALUE_ATTRIBUTES,
    attribute_value,
    dense,
    evaluate,
    graph_tensors,
    gs_node_value,
    gs_value,
    node_tensor,
    node_value,
)

SPARSE = helper.make_sparse_tensor(
    numpy_helper.from_array(np.array([5.0, 7.0], np.float32)),
    numpy_helper.from_array(np.array([1, 4], np.int64)),
    [2, 3],
)

KINDS = {
    "value": (numpy_helper.from_array(np.array([[1, 2]], np.int32)), np.array([[1, 2]], np.int32)),
    "value_float": (1.5, np.array(1.5, np.float32)),
    "value_floats": ([1.0, -2.5], np.array([1.0, -2.5], np.float32)),
    "value_int": (3, np.array(3, np.int64)),
    "value_ints": ([0, -1], np.array([0, -1], np.int64)),
    "value_string": ("ab", np.array("ab", object)),
    "value_strings": (["a", "b"], np.array(["a", "b"], object)),
    "sparse_value": (SPARSE, np.array([[0, 5, 0], [0, 7, 0]], np.float32)),
}


def _model(attr: str, value, consumer: str = "Identity"):
    nodes = [helper.make_node("Constant", [], ["c"], **{attr: value})]
    nodes.append(helper.make_node(consumer, ["c"], ["y"]))
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", 0, None)])
    return helper.make_model(graph)


def _same(got, expected):
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_every_attribute_kind_is_covered():
    assert set(KINDS) == set(VALUE_ATTRIBUTES)


@pytest.mark.parametrize("attr", KINDS)
def test_proto_constant_node(attr):
    value, expected = KINDS[attr]
    node = _model(attr, value).graph.node[0]
    _same(attribute_value(node.attribute[0]), expected)
    _same(node_value(node), expected)
    assert node_tensor(node).data_type == helper.np_dtype_to_tensor_dtype(expected.dtype) or (
        expected.dtype == object and node_tensor(node).data_type == TensorProto.STRING
    )


@pytest.mark.parametrize("attr", KINDS)
def test_proto_identity_of_a_constant(attr):
    value, expected = KINDS[attr]
    found = graph_tensors(_model(attr, value).graph)
    _same(numpy_helper.to_array(found["y"]), expected)


def test_proto_initializers_and_outer_graphs():
    w = numpy_helper.from_array(np.arange(3, dtype=np.float32), "w")
    graph = helper.make_graph([], "g", [], [], [w])
    outer = {"u": numpy_helper.from_array(np.array(2, np.int64), "u")}
    found = graph_tensors(graph, outer)
    assert set(found) == {"w", "u"} and found["w"] is graph.initializer[0]


def test_proto_other_nodes_have_no_value():
    assert node_value(helper.make_node("Relu", ["x"], ["y"])) is None
    assert node_tensor(helper.make_node("Constant", [], ["c"])) is None


@pytest.mark.parametrize("attr", [a for a in KINDS if a != "sparse_value"])
def test_gs_constant_node_and_identity(attr):
    value, expected = KINDS[attr]
    graph = gs.import_onnx(_model(attr, value))
    constant, identity = graph.nodes
    _same(gs_node_value(constant), expected)
    _same(gs_value(identity.outputs[0]), expected)


def test_gs_sparse_value_is_not_imported():
    graph = gs.import_onnx(_model("sparse_value", SPARSE))
    assert gs_value(graph.nodes[1].outputs[0]) is None


def test_gs_initializers_and_their_size_limit():
    w = gs.Constant("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    _same(gs_value(w), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert gs_value(w, max_elements=5) is None
    _same(gs_value(w, max_elements=6), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_gs_runtime_values_have_none():
    x = gs.Variable("x", np.float32, [2])
    y = gs.Variable("y", np.float32, [2])
    gs.Node("Relu", inputs=[x], outputs=[y])
    assert gs_value(x) is None and gs_value(y) is None and gs_value(None) is None


def test_dense_from_coordinates():
    coords = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([1, 2], np.int64)),
        numpy_helper.from_array(np.array([[0, 2], [1, 0]], np.int64)),
        [2, 3],
    )
    _same(dense(coords), np.array([[0, 0, 1], [2, 0, 0]], np.int64))


def test_evaluate_runs_one_node_and_declines_a_malformed_one():
    shape = np.array([2, 16, 25], np.int64)
    node = helper.make_node("Concat", ["a", "b"], ["c"], axis=0)
    (value,) = evaluate(node, {"a": shape[:2], "b": np.array([-1], np.int64)}, 18)
    np.testing.assert_array_equal(value, [2, 16, -1])
    reshape = helper.make_node("Reshape", ["a", "s"], ["c"])
    assert evaluate(reshape, {"a": shape, "s": np.array([4], np.int64)}, 18) is None
