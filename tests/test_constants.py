"""One reader of constant values: every Constant attribute, initializers, Identity of a
constant, at protobuf and at onnx-graphsurgeon level alike."""

import numpy as np
import onnx_graphsurgeon as gs
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from onnx_decomplex.constants import (
    VALUE_ATTRIBUTES,
    attribute_value,
    dense,
    fold,
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


I64 = np.int64
SHAPE = np.array([2, 16, 25], I64)
FOLDS = [
    ("Identity", [SHAPE], {}),
    ("Cast", [np.array([2.0, 3.0], np.float32)], {"to": TensorProto.INT64}),
    ("Neg", [SHAPE], {}),
    ("Add", [SHAPE, np.array(1, I64)], {}),
    ("Sub", [SHAPE, SHAPE], {}),
    ("Mul", [SHAPE, np.array([2, 1, 2], I64)], {}),
    ("Div", [np.array([7, -7, 16], I64), np.array(2, I64)], {}),
    ("Concat", [SHAPE[:2], np.array([-1], I64)], {"axis": 0}),
    ("Gather", [SHAPE, np.array([2, 0], I64)], {"axis": 0}),
    ("Gather", [SHAPE, np.array(-1, I64)], {}),
    ("Unsqueeze", [np.array(25, I64), np.array([0], I64)], {}),
    ("Squeeze", [np.array([25], I64), np.array([0], I64)], {}),
    ("Squeeze", [np.array([25], I64)], {}),
    ("Reshape", [SHAPE, np.array([3, 1], I64)], {}),
    ("Slice", [SHAPE, np.array([1], I64), np.array([9], I64)], {}),
    (
        "Slice",
        [SHAPE, np.array([-1], I64), np.array([-4], I64), np.array([0], I64), np.array([-1], I64)],
        {},
    ),  # fmt: skip
    ("Range", [np.array(0, I64), np.array(9, I64), np.array(3, I64)], {}),
    ("Expand", [np.array([1], I64), np.array([2, 3], I64)], {}),
    (
        "ConstantOfShape",
        [np.array([2, 3], I64)],
        {"value": numpy_helper.from_array(np.array([4], I64), "value")},
    ),  # fmt: skip
]


@pytest.mark.parametrize("op, values, attrs", FOLDS, ids=[f[0] for f in FOLDS])
def test_fold_computes_what_the_reference_does(op, values, attrs):
    """Shape arithmetic folded in numpy equals onnx.reference's run of the node."""
    names = [f"x{i}" for i in range(len(values))]
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in zip(names, values, strict=True)],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (want,) = ReferenceEvaluator(model).run(None, dict(zip(names, values, strict=True)))
    held = dict(attrs)
    if "value" in held:  # onnx-graphsurgeon holds a tensor attribute as a Constant
        held["value"] = gs.Constant("value", numpy_helper.to_array(held["value"]))
    got = fold(op, held, values)
    np.testing.assert_array_equal(got, want)
    assert got.shape == np.shape(want)


def test_fold_declines_what_it_cannot_compute():
    assert fold("Shape", {}, [SHAPE]) is None  # the walk reads Shape from its shapes
    assert fold("Add", {}, [None, SHAPE]) is None
    assert fold("Reshape", {}, [SHAPE, np.array([4], I64)]) is None  # a malformed target
