"""Complex initializers and Constant nodes: packed or split in numpy, never at run time."""

import numpy as np
from helpers import assert_rewrites, crandn, init, make_model, vi
from onnx import helper, numpy_helper


def _constant(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value))


def test_constant_node_used_by_mul(opset, cdtype):
    rng = np.random.default_rng(2)
    m = make_model(
        [_constant("c", crandn(rng, [2, 3], cdtype)), helper.make_node("Mul", ["a", "c"], ["y"])],
        [vi("a", cdtype, [2, 3])],
        [vi("y", cdtype, [2, 3])],
        opset=opset,
    )
    # The product stays packed: a (wr, wr) + (-ai, ar) (wi, wi), the constant's halves
    # initializers, the swap one Split and one Concat.
    assert_rewrites(m, ops={"Split": 1, "Concat": 1, "Mul": 2, "Add": 1})


def test_constant_node_and_initializer_as_graph_outputs(cdtype):
    rng = np.random.default_rng(3)
    m = make_model(
        [_constant("c", crandn(rng, [3], cdtype))],
        [],
        [vi("c", cdtype, [3]), vi("w", cdtype, [2])],
        [init("w", crandn(rng, [2], cdtype))],
    )
    out = assert_rewrites(m, ops={"Identity": 2})
    assert [o.name for o in out.graph.output] == ["c", "w"]


def test_constant_packed_once_for_many_consumers(cdtype):
    rng = np.random.default_rng(4)
    m = make_model(
        [
            helper.make_node("Add", ["a", "w"], ["s1"]),
            helper.make_node("Sub", ["s1", "w"], ["y"]),
        ],
        [vi("a", cdtype, [3])],
        [vi("y", cdtype, [3])],
        [init("w", crandn(rng, [3], cdtype))],
    )
    out = assert_rewrites(m, ops={"Add": 1, "Sub": 1})
    assert len(out.graph.initializer) == 1
