"""Mul, Add, Sub, Neg, Identity: the three checks, across opsets and precisions."""

import numpy as np
import pytest
from helpers import (
    assert_rewrites,
    crandn,
    init,
    make_model,
    op_types,
    run_ort,
    vi,
)
from onnx import TensorProto, helper

from onnx_decomplex import cmath, decomplex


def test_mul_two_runtime_operands_broadcast(opset, cdtype):
    m = make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", cdtype, ["n", 3, 4]), vi("b", cdtype, [3, 4])],
        [vi("y", cdtype, ["n", 3, 4])],
        opset=opset,
    )
    out = assert_rewrites(m)
    assert op_types(out).count("Mul") == 4


def test_mul_by_complex_initializer(opset, cdtype):
    rng = np.random.default_rng(0)
    m = make_model(
        [helper.make_node("Mul", ["w", "a"], ["y"])],
        [vi("a", cdtype, [2, 5])],
        [vi("y", cdtype, [2, 5])],
        [init("w", crandn(rng, [5], cdtype))],
        opset=opset,
    )
    assert_rewrites(m)


def test_mul_by_real_valued_constant_is_one_packed_mul(opset, cdtype):
    m = make_model(
        [helper.make_node("Mul", ["a", "w"], ["y"])],
        [vi("a", cdtype, [2, 5])],
        [vi("y", cdtype, [2, 5])],
        [init("w", np.array([1.5, -2, 3, 0.5, 4], cdtype))],
        opset=opset,
    )
    out = assert_rewrites(m)
    assert op_types(out) == ["Mul"]


def test_mul_by_imaginary_constant_needs_no_multiply_by_zero(opset, cdtype):
    m = make_model(
        [helper.make_node("Mul", ["a", "j"], ["y"])],
        [vi("a", cdtype, [3, 4])],
        [vi("y", cdtype, [3, 4])],
        [init("j", np.array(1j, cdtype))],
        opset=opset,
    )
    out = assert_rewrites(m)
    # times i is (-im, re): a negation and no multiply at all
    assert "Mul" not in op_types(out)


@pytest.mark.parametrize("op", ["Add", "Sub"])
def test_add_sub_packed_operands_stay_packed(opset, cdtype, op):
    m = make_model(
        [helper.make_node(op, ["a", "b"], ["y"])],
        [vi("a", cdtype, [2, 3]), vi("b", cdtype, [1, 3])],
        [vi("y", cdtype, [2, 3])],
        opset=opset,
    )
    out = assert_rewrites(m)
    assert op_types(out) == [op]


@pytest.mark.parametrize("op", ["Add", "Sub"])
def test_add_sub_on_pairs_after_mul(opset, cdtype, op):
    m = make_model(
        [helper.make_node("Mul", ["a", "b"], ["p"]), helper.make_node(op, ["c", "p"], ["y"])],
        [vi("a", cdtype, [4]), vi("b", cdtype, [4]), vi("c", cdtype, [3, 4])],
        [vi("y", cdtype, [3, 4])],
        opset=opset,
    )
    assert_rewrites(m)


@pytest.mark.parametrize("op", ["Add", "Sub"])
def test_add_sub_with_real_cast_to_complex_touches_real_part(opset, cdtype, op):
    rtype = TensorProto.FLOAT if cdtype == np.complex64 else TensorProto.DOUBLE
    ctype = TensorProto.COMPLEX64 if cdtype == np.complex64 else TensorProto.COMPLEX128
    m = make_model(
        [
            helper.make_node("Cast", ["r"], ["rc"], to=ctype),
            helper.make_node(op, ["rc", "a"], ["y"]),
        ],
        [vi("a", cdtype, [3]), helper.make_tensor_value_info("r", rtype, [2, 3])],
        [vi("y", cdtype, [2, 3])],
        opset=opset,
    )
    assert_rewrites(m)


def test_neg_packed_and_pair(opset, cdtype):
    m = make_model(
        [
            helper.make_node("Neg", ["a"], ["n1"]),
            helper.make_node("Mul", ["n1", "a"], ["p"]),
            helper.make_node("Neg", ["p"], ["y"]),
        ],
        [vi("a", cdtype, [2, 3])],
        [vi("n1", cdtype, [2, 3]), vi("y", cdtype, [2, 3])],
        opset=opset,
    )
    assert_rewrites(m)


def test_identity_chain_from_input_to_outputs(opset, cdtype):
    m = make_model(
        [helper.make_node("Identity", ["a"], ["b"]), helper.make_node("Identity", ["b"], ["y"])],
        [vi("a", cdtype, ["n"])],
        [vi("b", cdtype, ["n"]), vi("y", cdtype, ["n"])],
        opset=opset,
    )
    out = assert_rewrites(m)
    assert [o.name for o in out.graph.output] == ["b", "y"]


# The reference evaluator refuses a binary op on complex and real operands, so no
# valid model has one; exporters still emit them. numpy gives the expected values.
@pytest.mark.parametrize("constant", [False, True])
@pytest.mark.parametrize(
    "op, fn",
    [
        ("Mul", lambda z, r: z * r),
        ("Add", lambda z, r: z + r),
        ("Sub", lambda z, r: z - r),
        ("RSub", lambda z, r: r - z),
    ],
)
def test_complex_meets_real_operand(op, fn, constant):
    rng = np.random.default_rng(1)
    z = crandn(rng, [3])
    r = rng.standard_normal([2, 3]).astype(np.float32)  # r widens the result
    onnx_op, ins = ("Sub", ["r", "z"]) if op == "RSub" else (op, ["z", "r"])
    inputs = [vi("z", np.complex64, [3])]
    inits = [init("r", r)] if constant else []
    if not constant:
        inputs.append(vi("r", np.float32, [2, 3]))
    m = make_model(
        [helper.make_node(onnx_op, ins, ["y"])], inputs, [vi("y", np.complex64, [2, 3])], inits
    )
    out, _ = decomplex(m)
    feeds = {"z": cmath.pack(z)} | ({} if constant else {"r": r})
    (got,) = run_ort(out, feeds)
    expected = fn(z, r)
    np.testing.assert_allclose(got[..., 0], expected.real, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[..., 1], expected.imag, rtol=1e-6, atol=1e-6)
