"""If branches that capture or return complex values, for both conditions."""

import numpy as np
import pytest
from helpers import assert_rewrites, crandn, init, make_model, vi
from onnx import helper

from onnx_decomplex import UnsupportedError, decomplex

RNG = np.random.default_rng(0)


def _branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], outputs)


def _if_model(then, other, cdtype, opset, outputs, pre=(), post=()):
    return make_model(
        [
            *pre,
            helper.make_node(
                "If",
                ["c"],
                [o.name for o in outputs[:1]],
                name="branch",
                then_branch=then,
                else_branch=other,
            ),
            *post,
        ],  # fmt: skip
        [vi("c", np.bool_, []), vi("a0", cdtype, [3])],
        outputs[1:] or outputs,
        [init("w", crandn(RNG, (3,), cdtype))],
        opset=opset,
    )


def _check_both(m, cdtype):
    for c in (True, False):
        assert_rewrites(m, feeds={"c": np.array(c), "a0": crandn(RNG, (3,), cdtype)})


@pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])
def test_branches_capture_and_return_complex(opset, cdtype, pair):
    then = _branch("then", [helper.make_node("Mul", ["a", "w"], ["t"])], [vi("t", cdtype, [3])])
    other = _branch("else", [helper.make_node("Neg", ["a"], ["e"])], [vi("e", cdtype, [3])])
    pre = [helper.make_node("Mul" if pair else "Identity", ["a0", "a0"][: 2 if pair else 1], ["a"])]
    post = [helper.make_node("Add", ["y", "a"], ["z"])]
    m = _if_model(
        then, other, cdtype, opset, [vi("y", cdtype, [3]), vi("z", cdtype, [3])], pre, post
    )
    _check_both(m, cdtype)


def test_branch_returns_a_captured_value_directly(cdtype):
    then = _branch("then", [helper.make_node("Identity", ["a0"], ["t"])], [vi("t", cdtype, [3])])
    other = _branch("else", [helper.make_node("Identity", ["w"], ["e"])], [vi("e", cdtype, [3])])
    m = _if_model(then, other, cdtype, 18, [vi("y", cdtype, [3])])
    _check_both(m, cdtype)


def test_branch_returns_a_real_value_from_complex_ones(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    to = 1 if real == np.float32 else 11
    then = _branch("then", [helper.make_node("Abs", ["a0"], ["t"])], [vi("t", real, [3])])
    other = _branch("else", [helper.make_node("Cast", ["a0"], ["e"], to=to)], [vi("e", real, [3])])
    m = _if_model(then, other, cdtype, 18, [vi("y", real, [3])])
    for c in (True, False):
        # Abs of a complex value is refused by the reference's type check; the
        # validation overrides it with numpy's abs.
        assert_rewrites(m, feeds={"c": np.array(c), "a0": crandn(RNG, (3,), cdtype)})


def test_nested_if(cdtype):
    inner_then = _branch(
        "it", [helper.make_node("Mul", ["a0", "a0"], ["u"])], [vi("u", cdtype, [3])]
    )
    inner_else = _branch(
        "ie", [helper.make_node("Sub", ["a0", "w"], ["v"])], [vi("v", cdtype, [3])]
    )
    then = _branch(
        "then",
        [helper.make_node("If", ["c"], ["t"], then_branch=inner_then, else_branch=inner_else)],
        [vi("t", cdtype, [3])],
    )
    other = _branch("else", [helper.make_node("Exp", ["a0"], ["e"])], [vi("e", cdtype, [3])])
    m = _if_model(then, other, cdtype, 18, [vi("y", cdtype, [3])])
    _check_both(m, cdtype)


def test_branches_that_disagree_are_refused():
    then = _branch("then", [helper.make_node("Neg", ["a0"], ["t"])], [vi("t", np.complex64, [3])])
    other = _branch("else", [helper.make_node("Abs", ["a0"], ["e"])], [vi("e", np.float32, [3])])
    m = _if_model(then, other, np.complex64, 18, [vi("y", np.complex64, [3])])
    with pytest.raises(UnsupportedError, match="one branch returns a complex value"):
        decomplex(m)


def test_refusal_inside_a_branch_names_the_branch_node():
    then = _branch("then", [helper.make_node("Relu", ["a0"], ["t"], name="inner_relu")],
                   [vi("t", np.complex64, [3])])  # fmt: skip
    other = _branch("else", [helper.make_node("Neg", ["a0"], ["e"])], [vi("e", np.complex64, [3])])
    m = _if_model(then, other, np.complex64, 18, [vi("y", np.complex64, [3])])
    with pytest.raises(UnsupportedError, match="'inner_relu' \\(Relu"):
        decomplex(m)
