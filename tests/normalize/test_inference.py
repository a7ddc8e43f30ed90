"""Every value's type and rank: ONNX's inference on logical shapes, computed shape
arithmetic, bodies' results, and one inference for like nodes."""

from __future__ import annotations

import numpy as np
import onnx
from exported import like_layers
from helpers import init, make_model, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.graphs import opset_versions
from onnx_decomplex.normalize import Walk, imported, normalize
from onnx_decomplex.normalize.inference import real_typed

C64, F32 = np.complex64, np.float32


def _as_written(model: onnx.ModelProto) -> Walk:
    return Walk(imported(model), opset_versions(model), False, {}, in_order=True)


def test_shape_arithmetic_on_constants_is_computed():
    """Reshape(x, Concat(Unsqueeze(Shape(x)[0] * 2), [2])): the target is known, and so
    is the result's shape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["d0"]),
        helper.make_node("Mul", ["d0", "two"], ["twice"]),
        helper.make_node("Unsqueeze", ["twice", "axes"], ["u"]),
        helper.make_node("Concat", ["u", "last"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = [init("zero", np.array(0, np.int64)), init("two", np.array(2, np.int64)),
             init("axes", np.array([0], np.int64)), init("last", np.array([2], np.int64))]  # fmt: skip
    model = make_model(nodes, [vi("x", C64, [6, 2])], [vi("y", C64, [12, 2])], inits)
    walk = _as_written(model)
    assert walk.folded["target"].tolist() == [12, 2]
    assert walk.shape["y"] == [12, 2] and walk.kind["y"] == C64 and walk.conflicts == []


def test_complex_values_meet_shape_rules_as_real_tensors_of_their_shape():
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"])]
    model = make_model(nodes, [vi("a", C64, [3, 4]), vi("b", C64, [5, 6])], [vi("y", C64, None)])
    walk = _as_written(model)
    (conflict,) = walk.conflicts
    assert conflict.node == walk.graph.nodes[0].name
    assert "Incompatible dimensions" in conflict.message


def test_a_transpose_perm_of_another_rank_is_a_contradiction():
    node = helper.make_node("Transpose", ["z"], ["y"], perm=[1, 0, 2])
    walk = _as_written(make_model([node], [vi("z", C64, [3, 4])], [vi("y", C64, None)]))
    assert [c.message for c in walk.conflicts] == ["perm [1, 0, 2] for a value of rank 2"]


def test_an_op_with_no_schema_leaves_its_outputs_rank_unknown_and_says_why():
    node = helper.make_node("Frob", ["z"], ["y"], domain="custom.ops")
    model = make_model([node], [vi("z", C64, [3])], [vi("y", C64, [3])])
    model.opset_import.append(helper.make_opsetid("custom.ops", 1))
    walk = _as_written(model)
    name = walk.graph.nodes[0].name
    assert walk.failures == {name: "no schema for Frob in domain 'custom.ops'"}
    assert walk.kind["y"] == C64  # complex, as its complex input says
    assert [(n.name, t.name) for n, t in walk.untyped()] == [(name, "y")]


def test_a_dft_of_a_native_signal_keeps_its_shape_where_two_sided():
    nodes = [helper.make_node("DFT", ["z"], ["f"], axis=1),
             helper.make_node("DFT", ["z"], ["half"], axis=1, onesided=1)]  # fmt: skip
    model = make_model(nodes, [vi("z", C64, [2, 8])], [vi("f", C64, [2, 8]), vi("half", C64, None)])
    walk = _as_written(model)
    assert walk.shape["f"] == [2, 8]
    assert walk.shape.get("half") is None  # its length changes: nothing guessed


def test_a_loop_gives_its_state_as_it_is_and_its_scan_outputs_stacked():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Neg", ["s"], ["s_out"]), helper.make_node("Identity", ["s"], ["row"])],
        "body", [vi("i", np.int64, []), vi("cond", np.bool_, []), vi("s", C64, [4])],
        [vi("cond_out", np.bool_, []), vi("s_out", C64, [4]), vi("row", C64, [4])],
    )  # fmt: skip
    loop = helper.make_node("Loop", ["n", "", "z"], ["z_out", "rows"], body=body)
    model = make_model([loop], [vi("z", C64, [4])],
                       [vi("z_out", C64, [4]), vi("rows", C64, [None, 4])],
                       [init("n", np.array(3, np.int64))])  # fmt: skip
    walk = _as_written(model)
    assert (walk.kind["z_out"], walk.shape["z_out"]) == (C64, [4])
    assert (walk.kind["rows"], walk.shape["rows"]) == (C64, [None, 4])


def test_a_complex_attribute_takes_part_as_a_real_one():
    value = helper.make_tensor("v", onnx.TensorProto.COMPLEX64, [1], [1 + 2j])
    source = real_typed(helper.make_node("ConstantOfShape", ["s"], ["z"], value=value))
    assert source.attribute[0].t.data_type == onnx.TensorProto.FLOAT
    assert list(source.attribute[0].t.dims) == [1]
    cast = real_typed(helper.make_node("Cast", ["x"], ["y"], to=onnx.TensorProto.COMPLEX128))
    assert cast.attribute[0].i == onnx.TensorProto.DOUBLE


def test_like_nodes_are_inferred_once(monkeypatch):
    calls = []
    real = onnx.shape_inference.infer_node_outputs

    def counting(*args, **kwargs):
        calls.append(args[1].op_type)
        return real(*args, **kwargs)

    monkeypatch.setattr(onnx.shape_inference, "infer_node_outputs", counting)
    model = like_layers(20)
    assert normalize(model).model is model  # read as written: nothing to change
    # 21 Muls in each of two readings: 42 inferences without the shapes they share.
    assert 0 < calls.count("Mul") < 8
    out, _ = decomplex(model)
    assert validate(model, out).passed
