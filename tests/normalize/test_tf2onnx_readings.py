"""tf2onnx's half-conversions: its magnitude, which reads a complex value's pair on a
leading axis, and a complex value cast to real and back."""

from __future__ import annotations

import functools

import numpy as np
import onnx
import pytest
from exported import converted
from helpers import crandn, init, make_model, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.graphs import opset_versions
from onnx_decomplex.normalize import Walk, imported

RNG = np.random.default_rng(7)
C64, F32 = np.complex64, np.float32
_converted = functools.partial(converted, atol=1e-5)


def _magnitude(then=()):
    """tf2onnx's converted ComplexAbs of input 'z': its pair on a leading axis."""
    nodes = [
        helper.make_node("Gather", ["z", "i0"], ["re"], axis=0),
        helper.make_node("Gather", ["z", "i1"], ["im"], axis=0),
        helper.make_node("Pow", ["re", "two"], ["re2"]),
        helper.make_node("Pow", ["im", "two"], ["im2"]),
        helper.make_node("Add", ["re2", "im2"], ["sum"]),
        helper.make_node("Squeeze", ["sum", "i0"], ["squeezed"]),
        helper.make_node("Sqrt", ["squeezed"], ["abs"]),
        *then,
    ]
    inits = [init("i0", np.array([0], np.int64)), init("i1", np.array([1], np.int64)),
             init("two", np.array([2], C64))]  # fmt: skip
    return nodes, inits


def test_tf2onnx_magnitude_reads_the_pair_on_a_leading_axis():
    z = crandn(RNG, (2, 4))
    nodes, inits = _magnitude()
    model = make_model(nodes, [vi("z", C64, [2, 4])], [vi("abs", F32, [2, 4])], inits)
    _, report = _converted(model, {"z": z}, [np.abs(z)])
    assert [line for line in report.readings if "Gather" in line] == [
        "Gather_0 (Gather): Re 'z', tf2onnx's pair on axis 0",
        "Gather_1 (Gather): Im 'z', tf2onnx's pair on axis 0",
    ]
    assert "Pow_2 (Pow): exponent 'two' is real" in report.readings


def test_tf2onnx_magnitude_read_as_written_is_a_contradiction():
    nodes, inits = _magnitude()
    model = make_model(nodes, [vi("z", C64, [2, 4])], [vi("abs", F32, [2, 4])], inits)
    walk = Walk(imported(model), opset_versions(model), False, {}, in_order=True)
    message = "tf2onnx's magnitude, which reads its pair on a leading axis"
    assert [(c.node, c.message) for c in walk.conflicts][:2] == [
        ("Gather_0", message), ("Gather_1", message)
    ]  # fmt: skip


def test_tf2onnx_magnitude_decides_where_a_native_reading_also_type_checks():
    """sign(z) = z / |z|: read natively, the Gathers take rows, Div broadcasts, and the
    graph is valid; it means the magnitude all the same."""
    z = crandn(RNG, (2, 4))
    cast = helper.make_node("Cast", ["abs"], ["abs_c"], to=onnx.TensorProto.COMPLEX64)
    div = helper.make_node("Div", ["z", "abs_c"], ["y"])
    nodes, inits = _magnitude(then=[cast, div])
    model = make_model(nodes, [vi("z", C64, [2, 4])], [vi("y", C64, [2, 4])], inits)
    _converted(model, {"z": z}, [z / np.abs(z)])


def test_a_gather_of_rows_without_the_magnitude_around_it_stays_a_gather():
    z = crandn(RNG, (2, 4))
    node = helper.make_node("Gather", ["z", "i0"], ["y"], axis=0)
    model = make_model([node], [vi("z", C64, [2, 4])], [vi("y", C64, [1, 4])],
                       [init("i0", np.array([0], np.int64))])  # fmt: skip
    out, report = decomplex(model)
    assert report.normalized is None
    assert validate(model, out, {"z": z}).passed


def test_a_complex_value_cast_to_real_and_back_is_converted_as_written_with_a_warning():
    z = crandn(RNG, (3, 4))
    nodes = [
        helper.make_node("Cast", ["z"], ["real"], name="to_real", to=onnx.TensorProto.FLOAT),
        helper.make_node("Pad", ["real", "pads"], ["padded"]),
        helper.make_node("Cast", ["padded"], ["y"], name="back", to=onnx.TensorProto.COMPLEX64),
    ]
    model = make_model(nodes, [vi("z", C64, [3, 4])], [vi("y", C64, [4, 4])],
                       [init("pads", np.array([1, 0, 0, 0], np.int64))])  # fmt: skip
    out, report = decomplex(model)
    assert report.warnings == [
        "'to_real' casts complex 'z' to real, 'back' casts it back to complex: its "
        "imaginary part is dropped (converted as written)"
    ]
    assert validate(
        model, out, {"z": z}, expected=[np.pad(z.real, [(1, 0), (0, 0)]).astype(C64)]
    ).passed


def test_a_complex_pad_value_of_a_real_cast_pads_with_its_real_part_with_a_warning():
    """tf2onnx's complex PadV2: the cast's real part padded with a complex constant, no
    valid model as written; read with the constant's real part, it is the Pad above."""
    z = crandn(RNG, (3, 4))
    nodes = [
        helper.make_node("Complex", ["re", "im"], ["z"], name="complex"),
        helper.make_node("Cast", ["z"], ["real"], name="to_real", to=onnx.TensorProto.FLOAT),
        helper.make_node("Pad", ["real", "pads", "value"], ["padded"], name="pad"),
        helper.make_node("Cast", ["padded"], ["y"], name="back", to=onnx.TensorProto.COMPLEX64),
    ]
    inits = [init("pads", np.array([1, 0, 0, 0], np.int64)), init("value", np.array(2 + 3j, C64))]
    parts = [vi("re", F32, [3, 4]), vi("im", F32, [3, 4])]
    model = make_model(nodes, parts, [vi("y", C64, [4, 4])], inits)
    out, report = decomplex(model)
    assert "pad (Pad): pad value 'value' taken at its real part" in report.readings
    assert "its imaginary part is dropped" in report.warnings[0]
    expected = np.pad(z.real, [(1, 0), (0, 0)], constant_values=2).astype(C64)
    feeds = {"re": z.real.astype(F32), "im": z.imag.astype(F32)}
    assert validate(model, out, feeds, expected=[expected]).passed


def test_an_equal_of_complex_values_cast_to_int32_is_converted_as_written_with_a_warning():
    """tf2onnx's complex Equal: the real parts truncated, the imaginary parts gone."""
    a = np.array([[1.5 + 2j, 0.2 - 1j, 3 + 0j]], C64)
    b = np.array([[1.2 + 2j, 0.7 + 5j, 3 + 0j]], C64)
    nodes = [
        helper.make_node("Cast", ["a"], ["ia"], name="cast_a", to=onnx.TensorProto.INT32),
        helper.make_node("Cast", ["b"], ["ib"], name="cast_b", to=onnx.TensorProto.INT32),
        helper.make_node("Equal", ["ia", "ib"], ["y"], name="equal"),
    ]
    model = make_model(nodes, [vi("a", C64, [1, 3]), vi("b", C64, [1, 3])],
                       [vi("y", np.bool_, [1, 3])])  # fmt: skip
    out, report = decomplex(model)
    assert report.warnings == [
        "'equal' compares what 'cast_a' kept of complex 'a', its real part cast to a real "
        "type: the imaginary parts are not compared (converted as written)"
    ]
    feeds = {"a": a, "b": b}
    assert validate(model, out, feeds, expected=[np.array([[True, True, True]])]).passed
    assert not validate(model, out, feeds, expected=[a == b]).passed


@pytest.mark.parametrize("between", [[], ["Exp"]])
def test_a_real_part_made_complex_at_once_or_computed_on_is_no_warning(between):
    """Cast(Cast(z, float), complex) is Re z as a complex value, an idiom; a real part
    computed on is a new value."""
    names = ["real", *(f"{op.lower()}_out" for op in between)]
    nodes = [
        helper.make_node("Cast", ["z"], ["real"], to=onnx.TensorProto.FLOAT),
        *(
            helper.make_node(op, [a], [b])
            for op, a, b in zip(between, names[:-1], names[1:], strict=True)
        ),
        helper.make_node("Cast", [names[-1]], ["y"], to=onnx.TensorProto.COMPLEX64),
    ]
    model = make_model(nodes, [vi("z", C64, [3, 4])], [vi("y", C64, [3, 4])])
    assert decomplex(model)[1].warnings == []
