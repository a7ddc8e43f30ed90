"""Value forms: a conversion is emitted at most once per value, and constants fold."""

import numpy as np
from helpers import assert_rewrites, make_model, op_types, vi
from onnx import helper


def test_packed_input_split_once_for_many_pair_consumers():
    # a is packed (a graph input); three Muls each want its pair: one split only.
    m = make_model(
        [
            helper.make_node("Mul", ["a", "b"], ["p1"]),
            helper.make_node("Mul", ["a", "p1"], ["p2"]),
            helper.make_node("Mul", ["a", "p2"], ["y"]),
        ],
        [vi("a", np.complex64, [4]), vi("b", np.complex64, [4])],
        [vi("y", np.complex64, [4])],
    )
    out = assert_rewrites(m)
    assert op_types(out).count("Gather") == 4  # a and b, two parts each
    assert op_types(out).count("Concat") == 1  # only y is packed, at the output


def test_elementwise_chain_has_no_conversion_ping_pong():
    nodes = [helper.make_node("Mul", ["a", "b"], ["x0"])]
    for i in range(1, 6):
        nodes.append(helper.make_node("Mul", [f"x{i - 1}", "b"], [f"x{i}"]))
    nodes.append(helper.make_node("Sub", ["x5", "a"], ["y"]))
    m = make_model(
        nodes,
        [vi("a", np.complex64, [4]), vi("b", np.complex64, [4])],
        [vi("y", np.complex64, [4])],
    )
    out = assert_rewrites(m)
    ops = op_types(out)
    assert ops.count("Concat") == 1 and ops.count("Gather") == 4


def test_output_name_taken_by_renaming_not_identity():
    m = make_model(
        [helper.make_node("Transpose", ["a"], ["y"], perm=[1, 0])],
        [vi("a", np.complex64, [2, 3])],
        [vi("y", np.complex64, [3, 2])],
    )
    out = assert_rewrites(m)
    assert op_types(out) == ["Transpose"]
    assert out.graph.node[0].output[0] == "y"
