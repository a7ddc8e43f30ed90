"""The emitter: names `{node}_{role}`, each once, and the opset's spelling of axes."""

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from onnx_decomplex.emit import Emitter


def _emitter(opset: int = 18) -> Emitter:
    x = gs.Variable("x", np.float32, [2, 3])
    graph = gs.Graph(nodes=[gs.Node("Relu", "mul", inputs=[x], outputs=[gs.Variable("y")])],
                     inputs=[x], opset=opset)  # fmt: skip
    e = Emitter(graph, opset)
    e.node = graph.nodes[0]
    return e


def test_names_start_with_the_running_node_and_are_never_reused():
    e = _emitter()
    first = e.emit("Neg", [e.graph.inputs[0]])
    second = e.emit("Neg", [np.ones(3, np.float32)])
    nodes = e.graph.nodes[1:]
    assert [n.name for n in nodes] == ["mul_neg", "mul_neg_2"]
    assert first.name == "mul_neg_1" and second.name == "mul_neg_2_1"
    assert isinstance(nodes[1].inputs[0], gs.Constant) and nodes[1].inputs[0].name == "mul_neg_2_c"
    assert e.fresh("moved") == "mul_moved" and e.constant(np.zeros(1), "table").name == "mul_table"
    assert e.count == 2


def test_a_subgraph_emitter_shares_the_names():
    e = _emitter()
    body = gs.Graph(opset=18)
    child = e.child(body)
    child.node = e.node
    assert child.fresh("moved") == "mul_moved" and e.fresh("moved") == "mul_moved_1"


@pytest.mark.parametrize(("opset", "as_input"), [(11, False), (13, True)])
def test_axes_are_an_input_from_the_given_opset(opset, as_input):
    e = _emitter(opset)
    e.with_axes("Unsqueeze", e.graph.inputs[0], [0], since=13)
    node = e.graph.nodes[-1]
    assert (len(node.inputs) == 2) == as_input and ("axes" in node.attrs) != as_input


def test_bind_renames_a_fresh_result_and_copies_anything_else():
    e = _emitter()
    out = gs.Variable("kept")
    e.bind(out, e.emit("Neg", [e.graph.inputs[0]]))
    assert e.graph.nodes[-1].op == "Neg" and e.graph.nodes[-1].outputs == [out]
    other = gs.Variable("copy")
    e.bind(other, e.graph.inputs[0])
    assert e.graph.nodes[-1].op == "Identity" and e.graph.nodes[-1].outputs == [other]
