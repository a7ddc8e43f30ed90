"""How a walk takes each node: through the registered readings, promoted, or as written,
and what counts as evidence that a graph running as written means complex values."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from exported import SHAPE, Export, converted, z_of
from helpers import init, make_model, vi
from onnx import helper

from onnx_decomplex.normalize import Walk, decide, imported, normalize, unknown_values
from onnx_decomplex.normalize.readings import HALF_CONVERSIONS, READINGS, Reading
from onnx_decomplex.tidy import name_nodes

C64, F32 = np.complex64, np.float32


def _exp_of_conjugate() -> tuple[onnx.ModelProto, str, str]:
    """exp(conj(p)) of an input declared packed: Gathers, a Neg, a Concat, an Exp; and
    the names of the pair and the Exp's output."""
    e = Export()
    e.inputs.append(vi("p", F32, [*SHAPE, 2]))
    real, imag = e.split(("p", "last"))
    pair, _ = e.pair(real, e.op("Neg", imag))
    out = e.op("Exp", pair)
    return e.model([vi(out, F32, [*SHAPE, 2])]), pair, out


def test_the_mixed_reading_tries_a_half_conversion_then_a_jax2onnx_reading(monkeypatch):
    tried = []

    def declines(name):
        def read(walk, node, kinds):
            tried.append((name, node.op, walk.mixed))
            return False

        return read

    monkeypatch.setitem(HALF_CONVERSIONS, "Neg", Reading("Neg", declines("tf2onnx")))
    monkeypatch.setitem(READINGS, "Neg", Reading("Neg", declines("jax2onnx")))
    normalize(_exp_of_conjugate()[0])
    assert tried == [("tf2onnx", "Neg", True), ("jax2onnx", "Neg", True)]


def test_a_reading_that_applies_is_the_last_tried(monkeypatch):
    tried = []

    def reads(walk, node, kinds):
        tried.append("tf2onnx")
        walk.plain(node)  # as written, but read
        return True

    monkeypatch.setitem(HALF_CONVERSIONS, "Neg", Reading("Neg", reads))
    monkeypatch.setitem(READINGS, "Neg", Reading("Neg", lambda *a: tried.append("jax2onnx")))
    normalize(_exp_of_conjugate()[0])
    assert tried == ["tf2onnx"]


def test_a_tensorflow_op_read_as_written_is_a_contradiction():
    model = make_model([helper.make_node("Conj", ["z"], ["y"], name="conj")],
                       [vi("z", C64, [3])], [vi("y", C64, [3])])  # fmt: skip
    walk = Walk(imported(model), {"": 18}, False, {}, in_order=True)
    assert [(c.node, c.message) for c in walk.conflicts] == [
        ("conj", "Conj is TensorFlow's op, left as it is; no ONNX op")
    ]


def _complex_source(op: str, opset: int) -> onnx.ModelProto:
    """`op` on a complex value made by a complex ConstantOfShape, as jax2onnx writes
    `jnp.zeros(..., complex64)`: a source whose schema lists no complex type."""
    zero = helper.make_tensor("v", onnx.TensorProto.COMPLEX64, [1], [0j])
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["z"], value=zero)]
    inits = [init("s", np.array([2, 3], np.int64))]
    if op == "Expand":
        nodes.append(helper.make_node("Expand", ["z", "e"], ["y"]))
        inits.append(init("e", np.array([4, 2, 3], np.int64)))
    elif op == "Tile":
        nodes.append(helper.make_node("Tile", ["z", "r"], ["y"]))
        inits.append(init("r", np.array([2, 1], np.int64)))
    elif op == "Pad":
        nodes.append(helper.make_node("Pad", ["z", "p"], ["y"]))
        inits.append(init("p", np.array([1, 0, 0, 2], np.int64)))
    elif op == "Where":
        nodes.append(helper.make_node("Where", ["c", "z", "x"], ["y"]))
        inits.append(init("c", np.array([[True, False, True]])))
    elif op == "ScatterND":
        nodes.append(helper.make_node("ScatterND", ["z", "i", "x"], ["y"]))
        inits.append(init("i", np.array([[1]], np.int64)))
    x = vi("x", np.complex64, [1, 3] if op == "ScatterND" else [2, 3])
    return make_model(nodes, [x], [vi("y", np.complex64, None)], inits, opset=opset)


@pytest.mark.parametrize("op", ["Expand", "Tile", "Pad", "Where", "ScatterND"])
def test_ops_on_a_complex_source_are_typed(op, opset):
    model = _complex_source(op, opset)
    walk = Walk(imported(model), {"": opset}, False, {}, in_order=True)
    assert walk.kind["y"] == np.complex64 and walk.rank(walk.graph.outputs[0]) is not None
    assert unknown_values(model) == []


def test_the_reading_as_written_promotes_a_real_operand_without_casting_it(monkeypatch):
    """Add(z complex128, r float32): the reading infers the Add on complex128 operands,
    as the op promotes them, and adds no Cast to the graph it only reads."""
    nodes = [helper.make_node("Gather", ["p", "zero"], ["p0"], axis=-1),
             helper.make_node("Add", ["z", "r"], ["y"])]  # fmt: skip
    model = make_model(nodes, [vi("z", np.complex128, [3]), vi("r", np.float32, [3]),
                               vi("p", np.float32, [3, 2])],
                       [vi("y", np.complex128, [3]), vi("p0", np.float32, [3])],
                       [init("zero", np.array(0, np.int64))])  # fmt: skip
    graph = gs.import_onnx(model)
    name_nodes(graph)
    found = {}

    def noted(*args, **kwargs):
        found["walk"] = Walk(*args, **kwargs)
        return found["walk"]

    monkeypatch.setattr(decide, "Walk", noted)
    assert normalize(model, graph).model is model
    assert found["walk"].conflicts == []
    assert found["walk"].shape["y"] == [3] and found["walk"].kind["y"] == np.complex128
    assert [n.op for n in graph.nodes] == ["Gather", "Add"]


def test_an_input_declared_packed_meets_a_complex_operand():
    """z + x for a real x: Add(float[3, 4, 2], Cast(x, to=complex))."""
    e = Export()
    e.inputs = [vi("z", np.float32, [*SHAPE, 2]), vi("x", np.float32, SHAPE)]
    out = e.op("Add", "z", e.op("Cast", "x", to=onnx.TensorProto.COMPLEX64))
    model = e.model([vi(out, np.float32, [*SHAPE, 2])])
    z = z_of()
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    _, report = converted(model, {"z": z, "x": x}, [z + x])
    assert report.packed_io == ["input 'z'", f"output '{out}'"]


def test_a_real_graph_that_splits_an_input_is_left_alone():
    """A real [..., 2] input read by part and read whole (Sigmoid) is not made complex:
    only a graph that stacks pairs itself shows that it means complex values."""
    e = Export()
    e.inputs = [vi("p", np.float32, [5, 2])]
    first = e.op("Gather", "p", e.const(np.array(0, np.int64)), axis=1)
    squashed = e.op("Sigmoid", "p")
    model = e.model([vi(first, np.float32, [5]), vi(squashed, np.float32, [5, 2])])
    assert normalize(model).model is model


def test_a_real_graph_that_multiplies_dft_outputs_is_left_alone():
    e = Export()
    e.inputs = [vi("x", np.float32, [2, 8, 1])]
    f = e.op("DFT", "x", axis=1)
    model = e.model([vi(e.op("Mul", f, f), np.float32, [2, 8, 2])])
    assert normalize(model).model is model


def test_an_op_that_differs_on_a_stacked_pair_reads_it_as_complex():
    """Exp of a pair the graph stacked: evidence that it means exp(z), not the exp of
    each part, though the graph runs as written."""
    model, pair, out = _exp_of_conjugate()
    z = z_of()
    _, report = converted(model, {"p": z}, [np.exp(np.conj(z))])
    assert f"{out}_node (Exp): reads '{pair}' as complex" in report.readings


def test_a_stack_of_values_no_part_was_read_from_stays_real():
    """Exp of a stack of two real inputs: nothing in the graph splits a pair, so nothing
    says the stack is one; the Exp is of each."""
    e = Export()
    e.inputs = [vi("x", F32, SHAPE), vi("y", F32, SHAPE)]
    pair, _ = e.pair("x", "y")
    model = e.model([vi(e.op("Exp", pair), F32, [*SHAPE, 2])])
    assert normalize(model).model is model
