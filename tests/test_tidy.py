"""The cleanup after the rules: no Identity but a graph output's, no Reshape of a Reshape."""

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import not_peers, weighed
from helpers import assert_rewrites, init, make_model, vi
from onnx import helper, numpy_helper

from onnx_decomplex import DecomplexError, decomplex

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def leftovers(model: onnx.ModelProto) -> list[str]:
    """The Identity nodes no graph output needs, and the Reshapes of a Reshape whose
    target holds no 0, in the main graph."""
    outputs = {o.name for o in model.graph.output}
    made_by = {y: n for n in model.graph.node for y in n.output}
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    found = []
    for node in model.graph.node:
        if node.op_type == "Identity" and node.output[0] not in outputs:
            found.append(f"Identity {node.name}")
        inner = made_by.get(node.input[0]) if node.input else None
        target = constants.get(node.input[1]) if len(node.input) > 1 else None
        chained = node.op_type == "Reshape" and inner is not None and inner.op_type == "Reshape"
        if chained and target is not None and not np.any(target == 0):
            found.append(f"Reshape {node.name} of Reshape {inner.name}")
    return found


def _holds_subgraphs(model: onnx.ModelProto) -> bool:
    return any(a.type == onnx.AttributeProto.GRAPH for n in model.graph.node for a in n.attribute)


@pytest.mark.parametrize(
    "path",
    weighed(not_peers(sorted(FIXTURES.glob("**/*.onnx"))), lambda p: str(p.relative_to(FIXTURES))),
)
def test_no_fixture_leaves_an_identity_or_a_reshape_chain(path):
    model = onnx.load(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, report = decomplex(model, validate=False)
    except DecomplexError:
        pytest.skip("refused before any rewrite (tested elsewhere)")
    if not report.has_complex and report.normalized is None:
        pytest.skip("nothing complex, or only a DFT's: the export's own nodes are left as written")
    if _holds_subgraphs(out):
        pytest.skip("a graph with subgraphs is left as it is: they may read values by name")
    assert leftovers(out) == []


def test_a_reshape_chain_becomes_one_reshape(cdtype):
    """z reshaped to [6] and then to [3, 2]: one Reshape of the packed z to [3, 2, 2]."""
    nodes = [helper.make_node("Reshape", ["z", "flat"], ["f"]),
             helper.make_node("Reshape", ["f", "grid"], ["y"])]  # fmt: skip
    inits = [init("flat", np.array([6], np.int64)), init("grid", np.array([3, 2], np.int64))]
    m = make_model(nodes, [vi("z", cdtype, [2, 3])], [vi("y", cdtype, [3, 2])], inits)
    assert_rewrites(m, ops={"Reshape": 1})


def test_a_zero_that_copies_a_size_the_first_reshape_set_takes_that_size(cdtype):
    """[2, 3] -> [6, 1] -> [0, -1]: the 0 copies the 6 the first target set, so the
    second reads z with [6, -1]."""
    nodes = [helper.make_node("Reshape", ["z", "flat"], ["f"]),
             helper.make_node("Reshape", ["f", "same"], ["y"])]  # fmt: skip
    inits = [init("flat", np.array([6, 1], np.int64)), init("same", np.array([0, -1], np.int64))]
    m = make_model(nodes, [vi("z", cdtype, [2, 3])], [vi("y", cdtype, [6, 1])], inits)
    assert_rewrites(m, ops={"Reshape": 1})


def test_a_reshape_that_copies_a_dim_the_first_one_inferred_is_kept(cdtype):
    """A 0 in the second target copies a dim the first one left to -1: both stay."""
    nodes = [helper.make_node("Reshape", ["z", "flat"], ["f"]),
             helper.make_node("Reshape", ["f", "same"], ["y"])]  # fmt: skip
    inits = [init("flat", np.array([-1, 1], np.int64)), init("same", np.array([0, -1], np.int64))]
    m = make_model(nodes, [vi("z", cdtype, [2, 3])], [vi("y", cdtype, [6, 1])], inits)
    assert_rewrites(m, ops={"Reshape": 2})


def test_an_identity_inside_the_graph_is_bypassed(cdtype):
    nodes = [helper.make_node("Identity", ["z"], ["i"]), helper.make_node("Neg", ["i"], ["y"])]
    m = make_model(nodes, [vi("z", cdtype, [2, 3])], [vi("y", cdtype, [2, 3])])
    assert_rewrites(m, ops={"Neg": 1})


def test_a_reshape_to_its_inputs_own_shape_is_bypassed(cdtype):
    nodes = [
        helper.make_node("Reshape", ["z", "same"], ["r"]),
        helper.make_node("Neg", ["r"], ["y"]),
    ]
    m = make_model(nodes, [vi("z", cdtype, [2, 3])], [vi("y", cdtype, [2, 3])],
                   [init("same", np.array([2, 3], np.int64))])  # fmt: skip
    assert_rewrites(m, ops={"Neg": 1})
