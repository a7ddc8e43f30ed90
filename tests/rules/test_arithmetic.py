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
    single,
    vi,
)
from onnx import TensorProto, helper

from onnx_decomplex import cmath, decomplex
from onnx_decomplex.cmath import pack, unpack
from onnx_decomplex.dtypes import onnx_of
from onnx_decomplex.errors import DecomplexError


def test_mul_two_runtime_operands_same_shape_is_four_products(opset, cdtype):
    m = make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", cdtype, ["n", 3, 4]), vi("b", cdtype, ["n", 3, 4])],
        [vi("y", cdtype, ["n", 3, 4])],
        opset=opset,
    )
    out = assert_rewrites(m)
    assert op_types(out).count("Mul") == 4


def test_mul_by_a_broadcast_runtime_table_stays_packed(opset, cdtype):
    # Four products on the [..., 1] halves of one Split each, and one Concat back.
    m = make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", cdtype, ["n", 3, 4]), vi("b", cdtype, [3, 4])],
        [vi("y", cdtype, ["n", 3, 4])],
        opset=opset,
    )
    out = assert_rewrites(m)
    ops = op_types(out)
    assert ops.count("Mul") == 4 and ops.count("Split") == 2 and ops.count("Concat") == 1
    assert not {"Gather", "Squeeze", "Unsqueeze"} & set(ops)


def test_mul_by_a_full_complex_constant_stays_packed(opset, cdtype):
    rng = np.random.default_rng(1)
    m = make_model(
        [helper.make_node("Mul", ["a", "w"], ["y"])],
        [vi("a", cdtype, ["n", 5])],
        [vi("y", cdtype, ["n", 5])],
        [init("w", crandn(rng, [5], cdtype))],
        opset=opset,
    )
    out = assert_rewrites(m)
    assert sorted(op_types(out)) == ["Add", "Concat", "Mul", "Mul", "Split"]


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


PAIR = pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])


@PAIR
@pytest.mark.parametrize("divisor", ["runtime", "constant", "real constant", "imag constant"])
def test_div(opset, cdtype, divisor, pair):
    rng = np.random.default_rng(1)
    value = {
        "constant": crandn(rng, (3,), cdtype),
        "real constant": crandn(rng, (3,), cdtype).real.astype(cdtype),
        "imag constant": (1j * crandn(rng, (3,), cdtype).imag).astype(cdtype),
    }.get(divisor)
    extra = [vi("b", cdtype, [2, 3])] if value is None else []
    inits = [] if value is None else [init("b", value)]
    m = single("Div", cdtype, opset, inputs=["a", "b"], extra=extra, inits=inits, pair=pair)
    assert_rewrites(m)


def test_div_by_real_and_of_real_against_numpy(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    rng = np.random.default_rng(0)
    z, r = crandn(rng, (2, 3), cdtype), rng.standard_normal((2, 3)).astype(real) + 3
    for inputs, expected in ((["a", "r"], z / r), (["r", "a"], r / z)):
        m = single("Div", cdtype, inputs=inputs, extra=[vi("r", real, [2, 3])])
        out, _ = decomplex(m)
        (got,) = run_ort(out, {"a": pack(z), "r": r})
        np.testing.assert_allclose(unpack(got), expected, rtol=1e-5)


@PAIR
@pytest.mark.parametrize("op", ["Sum", "Mean"])
@pytest.mark.parametrize("n", [1, 3])
def test_sum_mean(opset, cdtype, op, n, pair):
    names = ["a", "b", "c"][:n]
    extra = [vi("b", cdtype, [3]), vi("c", cdtype, [1, 3])]
    m = single(op, cdtype, opset, inputs=names, extra=extra[: n - 1], pair=pair)
    out = assert_rewrites(m)
    if not pair and cdtype == np.complex64:
        assert op_types(out) == [op]


@PAIR
@pytest.mark.parametrize("p", [0, 1, 2, 3, 7, -1, -2, 0.5, 2.5, -1.5])
def test_pow_constant_exponent(opset, cdtype, p, pair):
    dtype = np.float32 if cdtype == np.complex64 else np.float64
    m = single("Pow", cdtype, opset, inputs=["a", "p"], inits=[init("p", np.array(p, dtype))],
               pair=pair)  # fmt: skip
    assert_rewrites(m)


def test_pow_integer_exponent_uses_no_trig(cdtype):
    m = single("Pow", cdtype, inputs=["a", "p"], inits=[init("p", np.array(5, np.int64))])
    out = assert_rewrites(m)
    assert not {"Sin", "Cos", "Atan"} & set(op_types(out))


def test_pow_runtime_exponent(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    m = single("Pow", cdtype, 18, inputs=["a", "p"], extra=[vi("p", real, [3])])
    assert_rewrites(m)


@PAIR
def test_pow_complex_exponent(opset, cdtype, pair):
    m = single("Pow", cdtype, opset, inputs=["a", "b"], extra=[vi("b", cdtype, [2, 3])],
               pair=pair)  # fmt: skip
    assert_rewrites(m)


@pytest.mark.parametrize("w", [0.5 + 1j, -1j, 2 + 0.25j])
def test_pow_constant_complex_exponent(cdtype, w):
    m = single("Pow", cdtype, inputs=["a", "w"], inits=[init("w", np.array(w, cdtype))])
    assert_rewrites(m)


def test_complex_exponent_of_a_real_base_is_refused():
    m = single("Pow", np.complex64, inputs=["x", "w"], extra=[vi("x", np.float32, [2, 3])],
               inits=[init("w", np.array(0.5 - 2j, np.complex64))])  # fmt: skip
    with pytest.raises(DecomplexError, match="complex exponent of a real base"):
        decomplex(m)


def test_equal(opset, cdtype):
    b = np.array([[1 + 2j, 3, 1j], [0, 0, 1]], cdtype)
    m = single("Equal", cdtype, opset, inputs=["a", "b"], inits=[init("b", b)], out_dtype=np.bool_)
    z = b.copy()
    z[0, 1] += 1j
    z[1, 2] = 2
    m.graph.output.append(vi("a", cdtype, [2, 3]))
    assert_rewrites(m, feeds={"a": z})


@pytest.mark.parametrize("strategy", ["four", "gauss", "auto"])
def test_mul_strategy(cdtype, strategy):
    m = single("Mul", cdtype, inputs=["a", "b"], extra=[vi("b", cdtype, [2, 3])])
    out, _ = decomplex(m, mul_strategy=strategy)
    muls = op_types(out).count("Mul")
    assert muls == (3 if strategy == "gauss" else 4)
    assert_rewrites(m)


@pytest.mark.parametrize("c", [2 + 0j, 1j, -0.5j, 0j, 1 + 0j], ids=str)
def test_div_by_a_complex_scalar_constant(cdtype, c):
    m = single("Div", cdtype, inputs=["a", "c"], inits=[init("c", np.array(c, cdtype))])
    z = np.array([[1 + 2j, -3 + 0j, 0j], [0.5 - 1j, 1e-3j, -2 - 2j]], cdtype)
    assert_rewrites(m, feeds={"a": z})


def test_div_by_a_real_constant_cast_to_complex(cdtype):
    two = helper.make_tensor("v", TensorProto.FLOAT, [], [2.0])
    m = make_model(
        [
            helper.make_node("Constant", [], ["c"], value=two),
            helper.make_node("Cast", ["c"], ["cc"], to=onnx_of(cdtype)),
            helper.make_node("Div", ["a", "cc"], ["y"]),
        ],
        [vi("a", cdtype, [2, 3])],
        [vi("y", cdtype, None)],
    )
    assert_rewrites(m)


def test_a_real_vector_cast_to_complex_times_a_complex_scalar():
    """onnx's data propagation reads the packed scalar [2] and the vector [3] as shapes,
    and refuses their valid broadcast: shape inference runs without it then."""
    nodes = [helper.make_node("Cast", ["x"], ["c"], to=TensorProto.COMPLEX128),
             helper.make_node("Mul", ["c", "z"], ["y"])]  # fmt: skip
    model = make_model(nodes, [vi("x", np.float64, [3]), vi("z", np.complex128, [])],
                       [vi("y", np.complex128, [3])])  # fmt: skip
    feeds = {"x": np.array([1.0, 2.0, 3.0]), "z": np.array(1 + 2j)}
    assert_rewrites(model, feeds=feeds)
