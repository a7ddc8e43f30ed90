"""Cast into, out of and between complex types."""

import numpy as np
import pytest
from helpers import (
    PACK,
    PAIR_SOURCE,
    UNPACK,
    Ops,
    assert_rewrites,
    crandn,
    init,
    make_model,
    vi,
)
from onnx import TensorProto, helper

from onnx_decomplex.check import find_complex
from onnx_decomplex.dtypes import onnx_of

PAD_ZERO = Ops(Unsqueeze=1, Shape=1, Expand=1, Concat=1)
"""r -> (r, 0): r[..., None] padded with one zero on the last axis."""


def _widened(src, cdtype) -> Ops:
    """The Cast of a real value to the complex type's part type, unless it has it."""
    part = np.float32 if cdtype == np.complex64 else np.float64
    return Ops(Cast=int(np.dtype(src) != np.dtype(part)))


@pytest.mark.parametrize("src", [np.float32, np.float64, np.int64, np.int32, np.bool_])
def test_real_to_complex_has_zero_imaginary_part(opset, cdtype, src):
    m = make_model(
        [helper.make_node("Cast", ["r"], ["y"], to=onnx_of(cdtype))],
        [vi("r", src, [2, 3])],
        [vi("y", cdtype, [2, 3])],
        opset=opset,
    )
    assert_rewrites(m, ops=_widened(src, cdtype) + PAD_ZERO)


def test_real_constant_to_complex_is_folded(cdtype):
    m = make_model(
        [
            helper.make_node("Cast", ["c"], ["cc"], to=onnx_of(cdtype)),
            helper.make_node("Mul", ["a", "cc"], ["y"]),
        ],
        [vi("a", cdtype, [3])],
        [vi("y", cdtype, [3])],
        [init("c", np.array([1.0, 2.0, 3.0], np.float32))],
    )
    assert_rewrites(m, ops={"Mul": 1})  # (1, 2, 3) as (r, r) in numpy, times the packed a


@pytest.mark.parametrize("to", [np.float32, np.float64, np.int64, np.int32])
def test_complex_to_real_keeps_real_part(opset, cdtype, to):
    m = make_model(
        [helper.make_node("Cast", ["a"], ["y"], to=onnx_of(to))],
        [vi("a", cdtype, [2, 3])],
        [vi("y", to, [2, 3])],
        opset=opset,
    )
    rng = np.random.default_rng(0)
    # Scaled so that the integer casts see values other than 0.
    feeds = {"a": (4 * crandn(rng, [2, 3], cdtype)).astype(cdtype)}
    # Re a is split off the last axis, then the Cast unless it is the part type.
    assert_rewrites(m, ops=Ops(Split=1, Squeeze=1) + _widened(to, cdtype), feeds=feeds)


def test_complex_to_bool_is_true_when_either_part_is_nonzero(opset, cdtype):
    m = make_model(
        [helper.make_node("Cast", ["a"], ["y"], to=TensorProto.BOOL)],
        [vi("a", cdtype, [4])],
        [vi("y", np.bool_, [4])],
        opset=opset,
    )
    feeds = {"a": np.array([0, 1j, 2, 0.5 - 3j], cdtype)}
    # Cast(re, bool) or Cast(im, bool)
    assert_rewrites(m, ops=UNPACK + Ops(Cast=2, Or=1), feeds=feeds)


@pytest.mark.parametrize("pair", [False, True])
def test_between_complex_precisions(opset, cdtype, pair):
    other = np.complex128 if cdtype == np.complex64 else np.complex64
    x = "p" if pair else "a"
    nodes = [helper.make_node("Cast", [x], ["y"], to=onnx_of(other))]
    if pair:
        nodes.insert(0, helper.make_node("Mul", ["a", "a"], ["p"]))
    m = make_model(nodes, [vi("a", cdtype, [2, 3])], [vi("y", other, [2, 3])], opset=opset)
    # One Cast of the packed tensor, or of each part of the pair.
    ops = PAIR_SOURCE + Ops(Cast=2) + PACK if pair else Ops(Cast=1)
    out = assert_rewrites(m, ops=ops)
    real = TensorProto.DOUBLE if other == np.complex128 else TensorProto.FLOAT
    assert out.graph.output[0].type.tensor_type.elem_type == real


def test_cast_to_same_complex_type_is_free(cdtype):
    m = make_model(
        [
            helper.make_node("Cast", ["a"], ["b"], to=onnx_of(cdtype)),
            helper.make_node("Neg", ["b"], ["y"]),
        ],
        [vi("a", cdtype, [3])],
        [vi("y", cdtype, [3])],
    )
    assert_rewrites(m, ops={"Neg": 1})


def _viewed_as_complex(cdtype, shape_x=(3, 4), shape_y=(3, 4), extra=()):
    """z = Cast(x) + Cast(y) i, as models build a complex value from two real ones."""
    return make_model(
        [
            helper.make_node("Cast", ["x"], ["xc"], to=onnx_of(cdtype)),
            helper.make_node("Cast", ["y"], ["yc"], to=onnx_of(cdtype)),
            helper.make_node("Mul", ["yc", "i"], ["yi"]),
            helper.make_node("Add", ["xc", "yi"], ["z"]),
            *extra,
        ],
        [vi("x", np.float32, list(shape_x)), vi("y", np.float32, list(shape_y))],
        [vi("z" if not extra else "out", cdtype, None)],
        [init("i", np.array(1j, cdtype))],
    )


def test_a_cast_zero_part_is_never_made(cdtype):
    # (x, 0) + (0, y) i: the parts are x and y, stacked once for the output.
    ops = 2 * _widened(np.float32, cdtype) + PACK
    assert_rewrites(_viewed_as_complex(cdtype), ops=ops)


def test_a_zero_part_of_another_shape_is_made_to_broadcast(cdtype):
    # x is [3, 1] and y is [3, 4]: the real part must be widened, not taken from x.
    # Each part plus a zero of the other's shape (Shape, ConstantOfShape, Add).
    zero = Ops(Shape=1, ConstantOfShape=1, Add=1)
    ops = 2 * _widened(np.float32, cdtype) + 2 * zero + PACK
    out = assert_rewrites(_viewed_as_complex(cdtype, shape_x=(3, 1)), ops=ops)
    assert find_complex(out) == []


def test_a_real_value_cast_to_complex_is_padded_once(cdtype):
    m = make_model(
        [helper.make_node("Cast", ["r"], ["y"], to=onnx_of(cdtype))],
        [vi("r", np.float32, [2, 3])],
        [vi("y", cdtype, [2, 3])],
    )
    # float32 -> float64 first for complex128
    assert_rewrites(m, ops=_widened(np.float32, cdtype) + PAD_ZERO)


@pytest.mark.parametrize("op", ["Mul", "Neg"])
def test_products_with_a_cast_value_skip_the_zero_part(cdtype, op):
    nodes = [helper.make_node("Cast", ["r"], ["rc"], to=onnx_of(cdtype))]
    nodes.append(helper.make_node(op, ["rc", "w"] if op == "Mul" else ["rc"], ["y"]))
    m = make_model(
        nodes,
        [vi("r", np.float32, [2, 3]), vi("w", cdtype, [2, 3])],
        [vi("y", cdtype, [2, 3])],
    )
    # w packed, scaled by r[..., None]; -(r, 0) is the padded r negated.
    ops = Ops(Unsqueeze=1, Mul=1) if op == "Mul" else PAD_ZERO + Ops(Neg=1)
    assert_rewrites(m, ops=_widened(np.float32, cdtype) + ops)


@pytest.mark.parametrize("as_output", [True, False], ids=["output", "inner"])
def test_complex_constant_cast_to_the_other_complex_type(cdtype, as_output):
    other = np.complex128 if cdtype == np.complex64 else np.complex64
    c = init("c", np.array([1 + 2j, -3e-3j], other))
    nodes = [helper.make_node("Cast", ["c"], ["d"], to=onnx_of(cdtype))]
    nodes.append(helper.make_node("Add" if not as_output else "Identity",
                                  ["a", "d"] if not as_output else ["a"], ["y"]))  # fmt: skip
    outputs = [vi("y", cdtype, None)] + ([vi("d", cdtype, None)] if as_output else [])
    m = make_model(nodes, [vi("a", cdtype, [2])], outputs, [c])
    # The constant is cast in numpy: an Add, or the Identities that name the outputs.
    assert_rewrites(m, ops={"Identity": 2} if as_output else {"Add": 1})
