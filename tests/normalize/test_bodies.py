"""Bodies and branches: read as their enclosing graph is, with the values they capture."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from exported import converted, z_of
from helpers import init, make_model, vi
from onnx import helper

from onnx_decomplex.graphs import opset_versions
from onnx_decomplex.normalize import NormalizeError, Walk, imported, normalize

C64, F32 = np.complex64, np.float32


def _as_written(model: onnx.ModelProto) -> Walk:
    return Walk(imported(model), opset_versions(model), False, {}, in_order=True)


def _if(then_nodes, then_out, else_nodes, else_out) -> onnx.ModelProto:
    then = helper.make_graph(then_nodes, "then", [], [then_out])
    other = helper.make_graph(else_nodes, "else", [], [else_out])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    return make_model([node], [vi("z", C64, [3, 4]), vi("c", np.bool_, [])], [vi("y", C64, None)])


def test_an_if_gives_the_dims_its_branches_agree_on():
    model = _if([helper.make_node("Identity", ["z"], ["t"])], vi("t", C64, [3, 4]),
                [helper.make_node("Transpose", ["z"], ["e"], perm=[1, 0])], vi("e", C64, [4, 3]))  # fmt: skip
    walk = _as_written(model)
    assert walk.conflicts == [] and walk.kind["y"] == C64 and walk.shape["y"] == [None, None]
    assert len(walk.bodies) == 2


def test_a_value_complex_in_one_branch_only_is_a_contradiction():
    model = _if([helper.make_node("Identity", ["z"], ["t"])], vi("t", C64, [3, 4]),
                [helper.make_node("Cast", ["z"], ["e"], to=onnx.TensorProto.FLOAT)],
                vi("e", F32, [3, 4]))  # fmt: skip
    walk = _as_written(model)
    assert [(c.message, c.tensor) for c in walk.conflicts] == [("complex in one branch only", "y")]


def _scan_with_a_packed_body():
    """A Scan whose body declares packed the complex state the node gives it."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["s"], ["s_out"]),
            helper.make_node("Identity", ["x"], ["y"]),
        ],
        "body",
        [vi("s", np.float32, [4, 2]), vi("x", np.float32, [5])],
        [vi("s_out", np.float32, [4, 2]), vi("y", np.float32, [5])],
    )
    scan = helper.make_node("Scan", ["z", "xs"], ["z_out", "ys"], body=body, num_scan_inputs=1)
    inputs = [vi("z", np.complex64, [4]), vi("xs", np.float32, [3, 5])]
    return make_model(
        [scan], inputs, [vi("z_out", np.float32, [4, 2]), vi("ys", np.float32, [3, 5])]
    )


def test_a_body_that_declares_its_complex_state_packed_contradicts_the_graph_as_written():
    walk = _as_written(_scan_with_a_packed_body())
    assert [c.message for c in walk.conflicts][0] == (
        "its body declares packed the complex values it is given"
    )


def test_a_scan_body_that_mixes_the_forms_is_refused_naming_the_node():
    with pytest.raises(NormalizeError, match="Scan body, which declares them packed") as info:
        normalize(_scan_with_a_packed_body())
    assert info.value.op_type == "Scan"


def test_a_loop_body_keeps_the_types_of_the_inputs_it_captures():
    """A Loop body that declares its complex state packed, and multiplies it by an input
    of the enclosing graph: that input keeps its declaration."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Mul", ["s", "c"], ["s_out"])],
        "body",
        [vi("i", np.int64, []), vi("cond", np.bool_, []), vi("s", np.float32, [4, 2])],
        [vi("cond_out", np.bool_, []), vi("s_out", np.complex64, [4])],
    )  # fmt: skip
    loop = helper.make_node("Loop", ["n", "", "z"], ["z_out"], body=body)
    model = make_model(
        [loop],
        [vi("z", np.complex64, [4]), vi("c", np.float32, [4])],
        [vi("z_out", np.float32, [4, 2])],
        [init("n", np.array(3, np.int64))],
    )
    z, c = z_of(shape=(4,)), np.random.default_rng(4).standard_normal(4).astype(np.float32)
    normalized = normalize(model)
    declared = {v.name: v.type.tensor_type.elem_type for v in normalized.model.graph.input}
    assert declared == {"z": onnx.TensorProto.COMPLEX64, "c": onnx.TensorProto.FLOAT}
    assert "Loop_0 body: input 's' declared packed" in normalized.readings
    converted(model, {"z": z, "c": c}, [z * c**3])
