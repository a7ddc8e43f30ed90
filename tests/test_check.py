"""find_complex sees every place a complex type can hide; check() refuses leftovers."""

import numpy as np
import pytest
from helpers import init, make_model, vi
from onnx import TensorProto, helper, numpy_helper

from onnx_decomplex.check import check, find_complex
from onnx_decomplex.errors import CheckError


def test_finds_every_kind_of_place():
    body = helper.make_graph(
        [helper.make_node("Cast", ["r"], ["t"], name="inner_cast", to=TensorProto.COMPLEX128)],
        "body",
        [],
        [vi("t", np.complex128, [1])],
    )
    m = make_model(
        [
            helper.make_node(
                "Constant",
                [],
                ["c"],
                name="k",
                value=numpy_helper.from_array(np.ones(1, np.complex64)),
            ),
            helper.make_node("If", ["b"], ["y"], name="branch", then_branch=body, else_branch=body),
        ],
        [vi("b", np.bool_, []), vi("z", np.complex64, [1])],
        [vi("y", np.complex128, [1])],
        [init("w", np.ones(1, np.complex64)), init("r", np.ones(1, np.float32))],
    )
    m.graph.value_info.append(vi("c", np.complex64, [1]))
    found = "\n".join(find_complex(m))
    for place in [
        "input 'z'",
        "output 'y'",
        "value_info 'c'",
        "initializer 'w'",
        "node 'k' (Constant) attribute 'value'",
    ]:
        assert place in found
    assert "node 'branch' (If) body: node 'inner_cast' (Cast) attribute 'to' = COMPLEX128" in found
    assert "body: output 't'" in found


def test_check_refuses_leftovers():
    m = make_model(
        [helper.make_node("Identity", ["z"], ["y"])],
        [vi("z", np.complex64, [1])],
        [vi("y", np.complex64, [1])],
    )
    with pytest.raises(CheckError, match="complex types remain"):
        check(m)


def test_real_model_passes():
    m = make_model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [vi("x", np.float32, [2])],
        [vi("y", np.float32, [2])],
    )
    assert find_complex(check(m)) == []
