"""Graph inputs and outputs against their declarations: packed ones read complex, any
other mismatch a contradiction."""

from __future__ import annotations

import numpy as np
import onnx
from exported import SHAPE, Export, converted, normalized_runs, z_of
from helpers import init, make_model, vi
from onnx import helper

from onnx_decomplex.graphs import opset_versions
from onnx_decomplex.normalize import Walk, imported, normalize
from onnx_decomplex.normalize.declared import packed_inputs, split_inputs

C64, F32 = np.complex64, np.float32


def _as_written(model: onnx.ModelProto) -> Walk:
    return Walk(imported(model), opset_versions(model), False, {}, in_order=True)


def _conflicts(node_op: str, inputs, outputs, **attrs) -> list[str]:
    node = helper.make_node(node_op, [i.name for i in inputs], ["y"], **attrs)
    return [c.message for c in _as_written(make_model([node], inputs, outputs)).conflicts]


def test_an_output_computed_otherwise_than_declared_is_a_contradiction():
    z = vi("z", C64, [3, 4])
    assert _conflicts("Identity", [z], [vi("y", C64, [5])]) == [
        "computed shape [3, 4], declared [5]"
    ]
    assert _conflicts("Abs", [vi("x", F32, [3])], [vi("y", C64, [3])]) == [
        "declared complex, computed real"
    ]
    assert _conflicts("Identity", [z], [vi("y", F32, [3, 4, 2])]) == [
        "complex of shape [3, 4], declared real [3, 4, 2]"
    ]


def test_inputs_declared_packed_and_those_a_gather_splits():
    nodes = [helper.make_node("Gather", ["p", "one"], ["im"], axis=-1),
             helper.make_node("Gather", ["q", "one"], ["row"], axis=0)]  # fmt: skip
    inputs = [vi("p", F32, [3, 4, 2]), vi("q", F32, [3, 2]), vi("i", np.int64, [3, 2]),
              vi("h", np.float16, [3, 2])]  # fmt: skip
    model = make_model(nodes, inputs, [vi("im", F32, [3, 4]), vi("row", F32, [2])],
                       [init("one", np.array(1, np.int64))])  # fmt: skip
    walk = _as_written(model)
    assert packed_inputs(walk) == {"p", "q"} and split_inputs(walk) == {"p"}


def test_an_input_a_gather_splits_is_declared_complex():
    """The parts of p, stacked again and squared: z * z, of p declared complex."""
    e = Export()
    e.inputs = [vi("p", F32, [*SHAPE, 2])]
    pair, _ = e.pair(*e.split(("p", "last")))
    out = e.op("Mul", pair, pair)
    model = e.model([vi(out, F32, [*SHAPE, 2])])
    z = z_of()
    _, report = converted(model, {"p": z}, [z * z])
    assert report.packed_io == ["input 'p'", f"output '{out}'"]
    (p,) = report.normalized.graph.input
    assert p.type.tensor_type.elem_type == onnx.TensorProto.COMPLEX64
    assert [d.dim_value for d in p.type.tensor_type.shape.dim] == list(SHAPE)


def test_an_output_declared_by_its_logical_shape_alone_is_complex():
    e = Export()
    e.inputs = [vi("z", C64, SHAPE)]
    real, imag = e.split(("z", "typed"))
    out, _ = e.pair(real, e.op("Neg", imag))
    model = e.model([vi(out, F32, list(SHAPE))])
    z = z_of()
    _, report = converted(model, {"z": z}, [np.conj(z)])
    assert report.packed_io == [f"output '{out}' (declared {list(SHAPE)}, complex)"]


def test_inputs_no_operand_gives_away_are_tried_complex_where_nothing_else_reads():
    """Identity(p) declared complex [3, 4]: no Gather splits p, no complex operand meets
    it; read complex, the graph is consistent."""
    model = make_model([helper.make_node("Identity", ["p"], ["y"])], [vi("p", F32, [*SHAPE, 2])],
                       [vi("y", C64, list(SHAPE))])  # fmt: skip
    assert normalize(model).packed_io == ["input 'p'"]
    z = z_of()
    np.testing.assert_array_equal(normalized_runs(model, {"p": z})[0], z)
