"""Walking graphs and subgraphs, the default domain, and labels as an import gives them."""

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from conftest import FIXTURE_MODELS, fixture_id
from onnx import TensorProto, helper

from onnx_decomplex.graphs import (
    default_opset,
    graph_nodes,
    graphs_in,
    gs_graphs,
    gs_holds_graphs,
    gs_sorted,
    is_default_domain,
    label,
    labeled_graphs,
    node_graphs,
    opset_versions,
    subgraphs,
)
from onnx_decomplex.passes.analyze import with_shapes


def _branch(name, op):
    out = helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [1])
    return helper.make_graph([helper.make_node(op, ["x"], [f"{name}_y"], name=f"{name}_n")],
                             name, [], [out])  # fmt: skip


def _model(domain=""):
    inner = helper.make_node("If", ["c"], ["t_y"], name="inner",
                             then_branch=_branch("it", "Neg"), else_branch=_branch("ie", "Abs"))  # fmt: skip
    then = helper.make_graph([inner], "then", [], [helper.make_tensor_value_info("t_y", 1, [1])])
    outer = helper.make_node("If", ["c"], ["y"], name="outer",
                             then_branch=then, else_branch=_branch("else", "Relu"))  # fmt: skip
    graph = helper.make_graph(
        [outer],
        "main",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, 18)])


@pytest.mark.parametrize("domain, default", [("", True), ("ai.onnx", True), (None, True),
                                             ("com.microsoft", False), ("ai.onnx.ml", False)])  # fmt: skip
def test_default_domain(domain, default):
    assert is_default_domain(domain) is default


@pytest.mark.parametrize("domain", ["", "ai.onnx"])
def test_default_opset_either_spelling(domain):
    model = _model(domain)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    assert default_opset(model) == 18
    assert opset_versions(model) == {"": 18, "com.microsoft": 1}


def test_no_default_opset():
    model = _model()
    del model.opset_import[:]
    assert default_opset(model) is None


def test_graphs_in_every_depth_in_order():
    # A graph before those in it; a node's in the order of its attributes (by name).
    names = [g.name for g in graphs_in(_model().graph)]
    assert names == ["main", "else", "then", "ie", "it"]
    assert [g.name for g in subgraphs(_model().graph.node[0])] == ["else", "then"]


def test_graph_nodes():
    assert [n.name for n in graph_nodes(_model().graph)] == [
        "outer", "else_n", "inner", "ie_n", "it_n",
    ]  # fmt: skip


def test_labels_name_the_nodes_that_hold_each_graph():
    labels = {g.name: where for g, where in labeled_graphs(_model().graph)}
    assert labels == {
        "main": "",
        "then": "node 'outer' (If) body: ",
        "it": "node 'outer' (If) body: node 'inner' (If) body: ",
        "ie": "node 'outer' (If) body: node 'inner' (If) body: ",
        "else": "node 'outer' (If) body: ",
    }
    inner = next(g for g in graphs_in(_model().graph) if g.name == "then").node[0]
    assert [w for _, w in node_graphs(inner, "f: ")] == ["f: node 'inner' (If) body: "] * 2


def test_gs_graphs_every_depth():
    graph = gs.import_onnx(_model())
    assert sorted(g.name for g in gs_graphs(graph)) == ["else", "ie", "it", "main", "then"]
    assert gs_graphs(graph)[0] is graph
    assert np.dtype(graph.inputs[1].dtype) == np.float32


def _labels(graph: gs.Graph) -> dict:
    return {t.name: (t.dtype, t.shape, t.type)
            for t in graph.tensors().values() if isinstance(t, gs.Variable)}  # fmt: skip


@pytest.mark.parametrize("path", FIXTURE_MODELS, ids=fixture_id)
def test_label_gives_what_an_import_of_the_inferred_model_gives(path):
    model = onnx.load(str(path))
    graph = gs.import_onnx(model)
    if any(gs_holds_graphs(n) for n in graph.nodes):
        pytest.skip("label is for graphs whose nodes hold no graphs")
    inferred = with_shapes(model)
    label(graph, inferred)
    assert _labels(graph) == _labels(gs.import_onnx(inferred))


def test_label_merges_value_infos_as_graphsurgeon_does():
    """The first value_info labels a value, a later one fills in what it leaves open, and
    a value named nowhere is unlabeled, whatever it was."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["b"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [2])],
                              [helper.make_tensor_value_info("b", f, None)])  # fmt: skip
    model = helper.make_model(graph)
    model.graph.value_info.extend([helper.make_tensor_value_info("a", f, None),
                                   helper.make_tensor_value_info("a", f, ["n"])])  # fmt: skip
    imported = gs.import_onnx(model)
    plain = helper.make_model(helper.make_graph(nodes, "g", graph.input, graph.output))
    plain.graph.value_info.extend([helper.make_tensor_value_info("b", f, [7])])
    relabeled = gs.import_onnx(plain)
    label(relabeled, model)
    assert _labels(relabeled) == _labels(imported)
    assert _labels(relabeled)["a"][1] == ["n"] and _labels(relabeled)["b"][1] is None


def test_gs_sorted():
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [2])],
                              [helper.make_tensor_value_info("y", f, [2])])  # fmt: skip
    imported = gs.import_onnx(helper.make_model(graph))
    assert gs_sorted(imported)
    imported.nodes.reverse()
    assert not gs_sorted(imported)
    assert gs_sorted(imported.toposort())
