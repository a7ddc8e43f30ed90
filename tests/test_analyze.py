"""Type propagation, and refusals that list every node that cannot be rewritten."""

import numpy as np
import onnx_graphsurgeon as gs
import pytest
from helpers import init, make_model, vi
from onnx import TensorProto, helper

from onnx_decomplex import UnsupportedError, decomplex
from onnx_decomplex.analyze import analyze


def test_sources_and_propagation_ignore_value_info_labels():
    m = make_model(
        [
            helper.make_node("Cast", ["r"], ["rc"], to=TensorProto.COMPLEX64),
            helper.make_node("Mul", ["rc", "w"], ["p"]),
            helper.make_node("Transpose", ["p"], ["t"]),
            helper.make_node("Cast", ["t"], ["y"], to=TensorProto.FLOAT),
        ],
        [vi("r", np.float32, [2, 2])],
        [vi("y", np.float32, [2, 2])],
        [init("w", np.ones((2, 2), np.complex64))],
    )
    # An exporter's stale label: 'p' is complex, whatever value_info says.
    m.graph.value_info.append(vi("p", np.float32, [2, 2]))
    a = analyze(gs.import_onnx(m))
    assert set(a.complex) == {"rc", "p", "t", "w"}
    assert a.casts == ["rc"] and a.initializers == ["w"]
    assert "y" not in a.complex


def test_every_unsupported_node_is_listed():
    m = make_model(
        [
            helper.make_node("Relu", ["a"], ["r"], name="relu1"),
            helper.make_node("Mul", ["r", "a"], ["m"], name="mul"),
            helper.make_node("ArgMax", ["m"], ["y"], name="argmax"),
        ],
        [vi("a", np.complex64, [3])],
        [vi("y", np.int64, [1])],
    )
    with pytest.raises(UnsupportedError) as info:
        decomplex(m)
    nodes = info.value.nodes
    assert [(n.node, n.op_type, n.tensor) for n in nodes] == [
        ("relu1", "Relu", "a"),
        ("argmax", "ArgMax", "m"),
    ]
    text = str(info.value)
    assert (
        "2 nodes cannot take complex values" in text
        and "'relu1' (Relu" in text
        and "'argmax' (ArgMax" in text
    )
    assert "\n" not in text


def test_complex_inside_a_subgraph_is_refused():
    then = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["t"])], "then", [], [vi("t", np.complex64, [3])]
    )
    other = helper.make_graph(
        [helper.make_node("Neg", ["a"], ["e"])], "else", [], [vi("e", np.complex64, [3])]
    )
    m = make_model(
        [helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then, else_branch=other)],
        [vi("c", np.bool_, []), vi("a", np.complex64, [3])],
        [vi("y", np.complex64, [3])],
    )
    with pytest.raises(UnsupportedError, match="'branch' \\(If"):
        decomplex(m)


def test_model_without_complex_is_returned_unchanged():
    m = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [vi("x", np.float32, [2])],
        [vi("y", np.float32, [2])],
    )
    out, report = decomplex(m)
    assert out is m and not report.has_complex
