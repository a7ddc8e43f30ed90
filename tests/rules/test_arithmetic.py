"""Mul, Add, Sub, Neg, Identity: the three checks, across opsets and precisions."""

import numpy as np
import pytest
from helpers import (
    PACK,
    PAIR_SOURCE,
    PRODUCT,
    UNPACK,
    Ops,
    assert_ops,
    assert_rewrites,
    at,
    crandn,
    init,
    make_model,
    run_ort,
    single,
    vi,
)
from onnx import TensorProto, helper

from onnx_decomplex import cmath, decomplex
from onnx_decomplex.cmath import pack, unpack
from onnx_decomplex.dtypes import onnx_of
from onnx_decomplex.errors import DecomplexError

PACKED_PRODUCT = Ops(Split=1, Concat=1, Mul=2, Add=1)
"""z w for a constant w: z (wr, wr) + (-zi, zr) (wi, wi), the swap one Split and one Concat."""
GAUSS = Ops(Mul=3, Add=2, Sub=3)
"""(ar br - ai bi) + i ((ar + ai)(br + bi) - ar br - ai bi): three products."""
DIVIDE = Ops(Abs=2, Max=2, Equal=1, Cast=1, Div=6, Mul=10, Add=5, Sub=1, Sign=1)
"""a / b = a conj(u) / (|u|^2 t) / s, s = max(|br|, |bi|), t the sign of b's larger part,
u = t b / s (cmath.div: Smith's, numpy's)."""
ONE_TIMES = Ops(Mul=2, Add=1, Sub=1)
"""(1 + 0i) z: numpy's repeated squaring starts from 1."""
INVERSE = Ops(Abs=2, Max=2, Cast=1, Div=6, Mul=10, Add=6, Sub=2, Equal=3, And=1, Where=2, Sign=1)
"""z^-1 = (1 + 0i) / z by `div`, NaN where z = 0."""
POLAR = Ops(Abs=4, Max=4, Min=5, Less=4, Equal=3, And=2, IsInf=3, Where=5, Cast=4,
            Atan=1, Div=4, Sqrt=1, Pow=1, Cos=1, Sin=1, Mul=10, Add=3, Sub=7, Or=1,
            IsNaN=1)  # fmt: skip
"""z^p = |z|^p (cos p arg z, sin p arg z) for a real constant p: |z| by hypot, arg z by
atan of the smaller part over the larger."""
EXP_W_LOG = Ops(Abs=4, Add=5, And=4, Atan=1, Cast=5, Cos=1, Div=4, Equal=4, Exp=1,
                IsInf=4, Less=5, Log=2, Max=4, Min=5, Mul=11, Sin=1, Sqrt=1, Sub=9,
                Where=9, IsNaN=2, Or=1)  # fmt: skip
"""z^w = exp(w log z) for a complex constant w: log z = log|z| + i arg z, times w, then
e^re (cos im, sin im)."""


def test_mul_two_runtime_operands_same_shape_is_four_products(opset, cdtype):
    m = make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", cdtype, ["n", 3, 4]), vi("b", cdtype, ["n", 3, 4])],
        [vi("y", cdtype, ["n", 3, 4])],
        opset=opset,
    )
    assert_rewrites(m, ops=UNPACK + UNPACK + PRODUCT + PACK)


def test_mul_by_a_broadcast_runtime_table_stays_packed(opset, cdtype):
    # Four products on the [..., 1] halves of one Split each, and one Concat back.
    m = make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", cdtype, ["n", 3, 4]), vi("b", cdtype, [3, 4])],
        [vi("y", cdtype, ["n", 3, 4])],
        opset=opset,
    )
    assert_rewrites(m, ops=PRODUCT + Ops(Split=2, Concat=1))


def test_mul_by_a_full_complex_constant_stays_packed(opset, cdtype):
    rng = np.random.default_rng(1)
    m = make_model(
        [helper.make_node("Mul", ["a", "w"], ["y"])],
        [vi("a", cdtype, ["n", 5])],
        [vi("y", cdtype, ["n", 5])],
        [init("w", crandn(rng, [5], cdtype))],
        opset=opset,
    )
    # z (wr, wr) + (-zi, zr) (wi, wi): the swap is one Split and one Concat.
    assert_rewrites(m, ops=PACKED_PRODUCT)


def test_mul_by_complex_initializer(opset, cdtype):
    rng = np.random.default_rng(0)
    m = make_model(
        [helper.make_node("Mul", ["w", "a"], ["y"])],
        [vi("a", cdtype, [2, 5])],
        [vi("y", cdtype, [2, 5])],
        [init("w", crandn(rng, [5], cdtype))],
        opset=opset,
    )
    assert_rewrites(m, ops=PACKED_PRODUCT)


def test_mul_by_real_valued_constant_is_one_packed_mul(opset, cdtype):
    m = make_model(
        [helper.make_node("Mul", ["a", "w"], ["y"])],
        [vi("a", cdtype, [2, 5])],
        [vi("y", cdtype, [2, 5])],
        [init("w", np.array([1.5, -2, 3, 0.5, 4], cdtype))],
        opset=opset,
    )
    assert_rewrites(m, ops={"Mul": 1})


def test_mul_by_imaginary_constant_needs_no_multiply_by_zero(opset, cdtype):
    m = make_model(
        [helper.make_node("Mul", ["a", "j"], ["y"])],
        [vi("a", cdtype, [3, 4])],
        [vi("y", cdtype, [3, 4])],
        [init("j", np.array(1j, cdtype))],
        opset=opset,
    )
    # times i is (-im, re): a negation and no multiply at all
    assert_rewrites(m, ops=UNPACK + Ops(Neg=1) + PACK)


@pytest.mark.parametrize("op", ["Add", "Sub"])
def test_add_sub_packed_operands_stay_packed(opset, cdtype, op):
    m = make_model(
        [helper.make_node(op, ["a", "b"], ["y"])],
        [vi("a", cdtype, [2, 3]), vi("b", cdtype, [1, 3])],
        [vi("y", cdtype, [2, 3])],
        opset=opset,
    )
    assert_rewrites(m, ops={op: 1})


@pytest.mark.parametrize("op", ["Add", "Sub"])
def test_add_sub_on_pairs_after_mul(opset, cdtype, op):
    m = make_model(
        [helper.make_node("Mul", ["a", "b"], ["p"]), helper.make_node(op, ["c", "p"], ["y"])],
        [vi("a", cdtype, [4]), vi("b", cdtype, [4]), vi("c", cdtype, [3, 4])],
        [vi("y", cdtype, [3, 4])],
        opset=opset,
    )
    # a * b as a pair, c unpacked, the op on each part.
    assert_rewrites(m, ops=3 * UNPACK + PRODUCT + Ops({op: 2}) + PACK)


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
    # r + re(a) is the real part; im(a) meets a zero of r's shape to broadcast.
    zero = Ops(Shape=1, ConstantOfShape=1)
    assert_rewrites(m, ops=UNPACK + Ops({op: 2}) + zero + PACK)


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
    # One Neg of the packed n1, two of the product's parts.
    assert_rewrites(m, ops=Ops(Neg=3) + 2 * UNPACK + PRODUCT + PACK)


def test_identity_chain_from_input_to_outputs(opset, cdtype):
    m = make_model(
        [helper.make_node("Identity", ["a"], ["b"]), helper.make_node("Identity", ["b"], ["y"])],
        [vi("a", cdtype, ["n"])],
        [vi("b", cdtype, ["n"]), vi("y", cdtype, ["n"])],
        opset=opset,
    )
    out = assert_rewrites(m, ops={"Identity": 2})
    assert [o.name for o in out.graph.output] == ["b", "y"]


# The reference evaluator refuses a binary op on complex and real operands, so no
# valid model has one; exporters still emit them. numpy gives the expected values.
#
# A constant r is folded packed: z * r[..., None] is one Mul, z +- (r, 0) one Add or
# Sub. A runtime r scales both parts at once (r unsqueezed), or meets the real part
# while the imaginary part is expanded to r's shape.
@pytest.mark.parametrize("constant", [False, True])
@pytest.mark.parametrize(
    "op, fn, runtime",
    [
        ("Mul", lambda z, r: z * r, Ops(Unsqueeze=1, Mul=1)),
        ("Add", lambda z, r: z + r, UNPACK + Ops(Add=1, Shape=1, Expand=1) + PACK),
        ("Sub", lambda z, r: z - r, UNPACK + Ops(Sub=1, Shape=1, Expand=1) + PACK),
        ("RSub", lambda z, r: r - z, UNPACK + Ops(Sub=1, Neg=1, Shape=1, Expand=1) + PACK),
    ],
)
def test_complex_meets_real_operand(op, fn, runtime, constant):
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
    assert_ops(out, {"Sub" if op == "RSub" else op: 1} if constant else runtime)
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
    parts = {  # what each part of a meets
        "runtime": UNPACK + DIVIDE,  # b unpacked
        "constant": PRODUCT + Ops(Mul=2),  # z (w / s) s, w = 1 / b made in numpy
        "real constant": Ops(Mul=2),
        "imag constant": Ops(Mul=2),  # z / (i d) = (zi / d, -zr / d)
    }[divisor]
    ops = (PAIR_SOURCE if pair else UNPACK) + parts + PACK
    if divisor == "real constant" and not pair:
        ops = Ops(Mul=1)  # the packed z times 1 / b[..., None]
    assert_rewrites(m, ops=ops)


def test_div_by_real_and_of_real_against_numpy(cdtype):
    by_real = UNPACK + Ops(Div=2) + PACK
    of_real = UNPACK + DIVIDE + PACK
    real = np.float32 if cdtype == np.complex64 else np.float64
    rng = np.random.default_rng(0)
    z, r = crandn(rng, (2, 3), cdtype), rng.standard_normal((2, 3)).astype(real) + 3
    for inputs, expected, ops in ((["a", "r"], z / r, by_real), (["r", "a"], r / z, of_real)):
        m = single("Div", cdtype, inputs=inputs, extra=[vi("r", real, [2, 3])])
        out, _ = decomplex(m)
        assert_ops(out, ops)
        (got,) = run_ort(out, {"a": pack(z), "r": r})
        np.testing.assert_allclose(unpack(got), expected, rtol=1e-5)


@PAIR
@pytest.mark.parametrize("op", ["Sum", "Mean"])
@pytest.mark.parametrize("n", [1, 3])
def test_sum_mean(opset, cdtype, op, n, pair):
    names = ["a", "b", "c"][:n]
    extra = [vi("b", cdtype, [3]), vi("c", cdtype, [1, 3])]
    m = single(op, cdtype, opset, inputs=names, extra=extra[: n - 1], pair=pair)
    # Packed operands: the op itself. After a pair: the op on each part, the others
    # unpacked. onnxruntime has no float64 Mean: Sum, then Div by n (none for n = 1).
    # A Sum's -0 is +0 (an Equal and a Where), as the reference's sum from 0.
    each = Ops({op: 1}) + (Ops(Equal=1, Where=1) if op == "Sum" else Ops())
    if op == "Mean" and cdtype == np.complex128:
        each = Ops(Sum=1, Div=int(n > 1))
    ops = each if not pair else PAIR_SOURCE + (n - 1) * UNPACK + each + each + PACK
    assert_rewrites(m, ops=ops)


@PAIR
@pytest.mark.parametrize("p", [0, 1, 2, 3, 7, -1, -2, 0.5, 2.5, -1.5])
def test_pow_constant_exponent(opset, cdtype, p, pair):
    dtype = np.float32 if cdtype == np.complex64 else np.float64
    m = single("Pow", cdtype, opset, inputs=["a", "p"], inits=[init("p", np.array(p, dtype))],
               pair=pair)  # fmt: skip
    power = {
        1: Ops(),
        2: PRODUCT,
        3: PRODUCT + PRODUCT,  # z (z z)
        7: ONE_TIMES + 4 * PRODUCT,  # z^2, z^4 and the running product
        -1: INVERSE,
        -2: INVERSE + PRODUCT,
    }.get(p, POLAR)
    ops = (PAIR_SOURCE if pair else UNPACK) + power + PACK
    if p == 1 and not pair:  # the unpacked parts of a packed input are that input
        ops = Ops(Identity=1)
    if p == 0:  # (Pow(zr, 0), 1 - 1): only the real part is read
        ops = Ops(Split=1, Squeeze=1, Pow=1, Sub=1) + PACK
        ops += Ops(Squeeze=1, Abs=2, Sub=1, Add=1, Mul=1) if pair else Ops()
    assert_rewrites(m, ops=at(cdtype, ops))


def test_pow_integer_exponent_uses_no_trig(cdtype):
    m = single("Pow", cdtype, inputs=["a", "p"], inits=[init("p", np.array(5, np.int64))])
    # z^5 = 1 z (z^2)^2: no trigonometry
    assert_rewrites(m, ops=UNPACK + ONE_TIMES + 3 * PRODUCT + PACK)


def test_pow_runtime_exponent(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    m = single("Pow", cdtype, 18, inputs=["a", "p"], extra=[vi("p", real, [3])])
    # The polar form, with p = 0 and z = 0 sorted out at run time.
    runtime = POLAR + Ops(Less=2, Equal=1, Where=3, Sub=1)
    assert_rewrites(m, ops=at(cdtype, UNPACK + runtime + PACK))


@PAIR
def test_pow_complex_exponent(opset, cdtype, pair):
    m = single("Pow", cdtype, opset, inputs=["a", "b"], extra=[vi("b", cdtype, [2, 3])],
               pair=pair)  # fmt: skip
    # exp(w log z), w unpacked and multiplied by log z as a product, not by constants
    runtime = EXP_W_LOG + Ops(Equal=2, And=1, Less=1, Mul=2, Where=1)
    ops = (PAIR_SOURCE if pair else UNPACK) + UNPACK + runtime + PACK
    assert_rewrites(m, ops=at(cdtype, ops))


@pytest.mark.parametrize("w", [0.5 + 1j, -1j, 2 + 0.25j])
def test_pow_constant_complex_exponent(cdtype, w):
    m = single("Pow", cdtype, inputs=["a", "w"], inits=[init("w", np.array(w, cdtype))])
    # log z times w: two products less where Re w is 0 (a negation instead), two more
    # where both parts are not 1 or 0.
    times_w = {-1j: Ops(Neg=2), 0.5 + 1j: Ops(), 2 + 0.25j: Ops(Mul=2)}[w]
    assert_rewrites(m, ops=at(cdtype, UNPACK + EXP_W_LOG + times_w + PACK))


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
    # zr == wr and zi == wi, with w split in numpy
    assert_rewrites(m, ops=UNPACK + Ops(Equal=2, And=1), feeds={"a": z})


@pytest.mark.parametrize("strategy", ["four", "gauss", "auto"])
def test_mul_strategy(cdtype, strategy):
    m = single("Mul", cdtype, inputs=["a", "b"], extra=[vi("b", cdtype, [2, 3])])
    product = GAUSS if strategy == "gauss" else PRODUCT
    assert_rewrites(m, ops=UNPACK + UNPACK + product + PACK, mul_strategy=strategy)


@pytest.mark.parametrize("c", [2 + 0j, 1j, -0.5j, 0j, 1 + 0j], ids=str)
def test_div_by_a_complex_scalar_constant(cdtype, c):
    m = single("Div", cdtype, inputs=["a", "c"], inits=[init("c", np.array(c, cdtype))])
    z = np.array([[1 + 2j, -3 + 0j, 0j], [0.5 - 1j, 1e-3j, -2 - 2j]], cdtype)
    ops = {
        2: Ops(Mul=1),  # the packed z times 1 / c
        1: Ops(Mul=1),
        1j: UNPACK + Ops(Neg=1) + PACK,  # z / i = (zi, -zr)
        -0.5j: UNPACK + Ops(Mul=2) + PACK,  # z 2i = (-2 zi, 2 zr)
        0: UNPACK + Ops(Div=2, Mul=2, Add=1, Sub=1) + PACK,  # kept: numpy's infinities
    }[c]
    assert_rewrites(m, ops=ops, feeds={"a": z})


def test_a_constant_quotient_with_infinite_parts_keeps_them(cdtype):
    """Both operands constant: the quotient is folded, and (0.2 - 0.3i) / 0 is numpy's
    (inf, -inf), each part its own, not a NaN from assembling re + 1j * im."""
    w = np.array([0.2 - 0.3j, 3 + 0j, -1j], cdtype)
    m = make_model([helper.make_node("Div", ["w", "zero"], ["y"])], [],
                   [vi("y", cdtype, [3])], [init("w", w), init("zero", np.array(0j, cdtype))])  # fmt: skip
    assert_rewrites(m, ops={"Identity": 1})


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
    assert_rewrites(m, ops={"Mul": 1})  # the packed z times 0.5


def test_a_real_vector_cast_to_complex_times_a_complex_scalar():
    """onnx's data propagation reads the packed scalar [2] and the vector [3] as shapes,
    and refuses their valid broadcast: shape inference runs without it then."""
    nodes = [helper.make_node("Cast", ["x"], ["c"], to=TensorProto.COMPLEX128),
             helper.make_node("Mul", ["c", "z"], ["y"])]  # fmt: skip
    model = make_model(nodes, [vi("x", np.float64, [3]), vi("z", np.complex128, [])],
                       [vi("y", np.complex128, [3])])  # fmt: skip
    feeds = {"x": np.array([1.0, 2.0, 3.0]), "z": np.array(1 + 2j)}
    assert_rewrites(model, ops={"Unsqueeze": 1, "Mul": 1}, feeds=feeds)  # x[..., None] z
