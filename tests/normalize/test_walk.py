"""The walk's machinery: a complex value's forms, fresh names, constants, the export."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from exported import SHAPE, Export, z_of
from helpers import init, make_model, vi
from onnx import helper
from onnx.reference import ReferenceEvaluator

from onnx_decomplex.cmath import pack
from onnx_decomplex.graphs import opset_versions
from onnx_decomplex.normalize import Walk, imported

C64, F32 = np.complex64, np.float32


def _walk(model: onnx.ModelProto, mixed: bool = True) -> Walk:
    return Walk(imported(model), opset_versions(model), mixed, {}, in_order=True)


def _identity_of_z(opset: int = 18) -> onnx.ModelProto:
    return make_model([helper.make_node("Identity", ["z"], ["y"])], [vi("z", C64, SHAPE)],
                      [vi("y", C64, SHAPE)], opset=opset)  # fmt: skip


@pytest.mark.filterwarnings("ignore:Casting complex values to real")  # Re z, as meant
def test_each_form_of_a_complex_value_holds_its_numbers(opset):
    """parts_of(z) = (Re z, Im z) and packed_of(z) = view_as_real(z), each made once, in
    the opset's spelling of Unsqueeze."""
    model = _identity_of_z(opset)
    walk = _walk(model)
    z = walk.graph.inputs[0]
    re, im = walk.parts_of(z)
    packed = walk.packed_of(z)
    assert walk.parts_of(z) == (re, im) and walk.packed_of(z) is packed
    walk.graph.outputs += [re, im, packed]
    out = walk.export(model)  # Cast from complex: onnx.reference runs it, the checker refuses
    value = z_of()
    _, *found = ReferenceEvaluator(out).run(None, {"z": value})
    for got, want in zip(found, [value.real, value.imag, pack(value)], strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_stacked_pair_is_held_by_its_parts_and_given_native():
    """Concat(Unsqueeze(x), Unsqueeze(y)) on the last axis: the walk keeps x and y as the
    parts of the packed value, and the output declared packed is x + i y, typed complex."""
    e = Export()
    e.inputs = [vi("x", F32, SHAPE), vi("y", F32, SHAPE)]
    pair, _ = e.pair("x", "y")
    model = e.model([vi(pair, F32, [*SHAPE, 2])])
    walk = _walk(model)
    assert [t.name for t in walk.parts[pair]] == ["x", "y"] and pair in walk.packed
    out = walk.export(model)
    assert out.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.COMPLEX64
    x, y = z_of().real, z_of(1).real
    (found,) = ReferenceEvaluator(out).run(None, {"x": x, "y": y})
    np.testing.assert_array_equal(found, x + 1j * y)


def test_a_real_value_made_complex_is_cast_once_per_type():
    model = make_model([helper.make_node("Identity", ["x"], ["y"])], [vi("x", np.float64, [2])],
                       [vi("y", np.float64, [2])])  # fmt: skip
    walk = _walk(model)
    x = walk.graph.inputs[0]
    wide = walk.native_of(x)
    assert walk.kind.get(wide.name) == np.complex128 and walk.native_of(x) is wide
    assert walk.native_of(x, np.complex64) is not wide
    assert [n.op for n in walk.graph.nodes].count("Cast") == 2


def test_emitted_names_are_fresh_in_the_whole_graph():
    model = _identity_of_z()
    model.graph.node[0].name = "taken_node"
    walk = _walk(model)
    z = walk.graph.inputs[0]
    first = walk.emit("Neg", [z], name="y", dtype=C64, shape=list(SHAPE))
    second = walk.emit("Neg", [z], name="y", dtype=C64, shape=list(SHAPE))
    assert len({"z", "y", first.name, second.name}) == 4
    assert walk.unique("taken_node") != "taken_node"


def test_the_reading_as_written_emits_nothing():
    walk = _walk(_identity_of_z(), mixed=False)
    with pytest.raises(AssertionError, match="only reads its graph"):
        walk.packed_of(walk.graph.inputs[0])


def test_small_constants_are_read_weights_never():
    nodes = [helper.make_node("Cast", ["i"], ["f"], to=onnx.TensorProto.FLOAT),
             helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Add", ["w", "x"], ["y"])]  # fmt: skip
    inits = [init("i", np.array(1, np.int64)), init("w", np.zeros(5000, F32))]
    model = make_model(nodes, [vi("x", F32, [5000])], [vi("y", F32, [5000]), vi("f", F32, []),
                       vi("s", np.int64, [1])], inits)  # fmt: skip
    walk = _walk(model, mixed=False)
    tensors = walk.graph.tensors()
    assert walk.constant(tensors["i"]) == 1
    assert walk.constant(tensors["f"]).dtype == F32  # a promoted constant, cast as it is
    assert walk.constant(tensors["s"]).tolist() == [5000]  # computed
    assert walk.constant(tensors["w"]) is None and walk.constant(tensors["x"]) is None


def test_a_complex_value_is_a_float_one_and_half_precision_is_not():
    model = make_model([helper.make_node("Identity", ["h"], ["y"])],
                       [vi("h", np.float16, [2]), vi("z", C64, [2])], [vi("y", np.float16, [2])])  # fmt: skip
    walk = _walk(model, mixed=False)
    h, z = walk.graph.inputs
    assert walk.is_float(z) and not walk.is_float(h)
    assert walk.rank(z) == 1 and walk.typed(h) and walk.untyped() == []
