"""Elementwise functions of one complex value, against the reference evaluator."""

import numpy as np
import pytest
from helpers import (
    PAIR_SOURCE,
    UNPACK,
    Ops,
    assert_ops,
    assert_rewrites,
    at,
    init,
    make_model,
    on_parts,
    single,
    vi,
)
from onnx import helper

from onnx_decomplex import decomplex
from onnx_decomplex.rules.common import WIDE_MODULUS_UP_TO
from onnx_decomplex.rules.unary import FUNCTIONS
from onnx_decomplex.validate import run_onnxruntime

HYPOT = Ops(Abs=2, Max=2, Min=2, Div=1, Mul=2, Add=1, Sqrt=1)
"""|z| = m sqrt(1 + (n / m)^2), m = max(|zr|, |zi|), n = min(|zr|, |zi|)."""
MODULUS = HYPOT + Ops(IsInf=2, Or=1, Where=1)
"""|z| = hypot(zr, zi), and inf where a part is infinite, as numpy's."""
FUNCTION_OPS = {
    "Acos": Ops(Abs=12, Add=19, And=6, Atan=1, Cast=10, Div=18, Equal=5, IsInf=8, IsNaN=4, Less=12, Log=3, Max=11, Min=16, Mul=29, Neg=1, Or=2, Sqrt=7, Sub=16, Where=16),
    "Acosh": Ops(Abs=12, Add=20, And=6, Atan=1, Cast=11, Div=18, Equal=5, IsInf=8, IsNaN=4, Less=13, Log=3, Max=11, Min=16, Mul=31, Or=2, Sqrt=7, Sub=16, Where=16),
    "Asin": Ops(Abs=12, Add=19, And=5, Atan=1, Cast=11, Div=19, Equal=6, IsInf=7, IsNaN=3, Less=12, Log=3, Max=12, Min=17, Mul=35, Neg=1, Or=2, Sqrt=7, Sub=19, Where=15),
    "Asinh": Ops(Abs=12, Add=19, And=5, Atan=1, Cast=11, Div=19, Equal=6, IsInf=7, IsNaN=3, Less=12, Log=3, Max=12, Min=17, Mul=35, Neg=3, Or=2, Sqrt=7, Sub=19, Where=15),
    "Atan": Ops(Abs=6, Add=9, And=3, Atan=1, Cast=5, Div=9, Equal=1, IsInf=7, IsNaN=3, Less=5, Log=3, Max=6, Min=7, Mul=20, Neg=2, Sign=1, Sqrt=1, Sub=13, Where=9),
    "Atanh": Ops(Abs=6, Add=9, And=2, Atan=1, Cast=5, Div=9, Equal=1, IsInf=6, IsNaN=2, Less=5, Log=3, Max=6, Min=7, Mul=20, Sign=1, Sqrt=1, Sub=13, Where=8),
    "Cos": Ops(And=3, Cast=1, Cos=1, Cosh=1, Equal=2, IsInf=1, IsNaN=2, Less=1, Mul=3, Neg=1, Sin=1, Sinh=1, Sub=2, Where=3),
    "Cosh": Ops(And=3, Cast=1, Cos=1, Cosh=1, Equal=2, IsInf=1, IsNaN=2, Less=1, Mul=3, Sin=1, Sinh=1, Sub=2, Where=3),
    "Exp": Ops(And=3, Cast=2, Cos=1, Equal=2, Exp=1, IsInf=1, IsNaN=2, Less=2, Mul=4, Sin=1, Sub=3, Where=3),
    "Log": Ops(Abs=4, Add=4, Atan=1, Cast=3, Div=4, IsInf=3, Less=3, Log=2, Max=4, Min=5, Mul=5, Or=1, Sqrt=1, Sub=5, Where=2),
    "Reciprocal": Ops(Abs=4, Add=1, Div=8, IsInf=2, Max=5, Min=3, Mul=4, Neg=2, Where=3, Xor=1),
    "Sigmoid": Ops(Add=3, And=4, Cast=3, Cos=1, Div=2, Equal=4, Exp=1, IsInf=1, IsNaN=2, Less=3, Mul=13, Sin=1, Sub=5, Where=6),
    "Sign": Ops(Abs=2, Add=1, And=3, Div=5, Equal=3, IsInf=3, Max=2, Min=2, Mul=1, Or=1, Sign=2, Sqrt=1, Where=6, Xor=2),
    "Sin": Ops(And=2, Cast=2, Cos=1, Cosh=1, Equal=2, IsInf=1, IsNaN=2, Less=2, Mul=4, Neg=2, Or=1, Sin=1, Sinh=1, Sub=3, Where=2),
    "Sinh": Ops(And=2, Cast=2, Cos=1, Cosh=1, Equal=2, IsInf=1, IsNaN=2, Less=2, Mul=4, Or=1, Sin=1, Sinh=1, Sub=3, Where=2),
    "Sqrt": Ops(Abs=2, Add=4, And=1, Cast=2, Div=6, Equal=2, IsInf=2, IsNaN=1, Less=2, Max=4, Min=6, Mul=5, Or=1, Sqrt=3, Sub=2, Where=4),
    "Tan": Ops(Add=1, And=3, Cast=1, Cos=1, Cosh=1, Div=4, Equal=2, IsInf=1, IsNaN=2, Less=1, Mul=4, Neg=2, Or=1, Sin=1, Sub=1, Tanh=1, Where=4),
    "Tanh": Ops(Add=1, And=3, Cast=1, Cos=1, Cosh=1, Div=4, Equal=2, IsInf=1, IsNaN=2, Less=1, Mul=4, Or=1, Sin=1, Sub=1, Tanh=1, Where=4),
}  # fmt: skip
"""The ops each function emits on the parts of a complex64 value (complex128: `at`),
read from the rewrite; their formulas, and numpy's special values that they keep
(C99's Annex G: a zero part through an infinite or NaN factor, a limit at an
infinite part), are the docstrings of `cmath`'s functions of the same name."""


def test_function_table_covers_every_function():
    assert set(FUNCTION_OPS) == set(FUNCTIONS)


@pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])
@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_function(op, opset, cdtype, pair):
    ops = at(cdtype, on_parts(FUNCTION_OPS[op], pair))
    assert_rewrites(single(op, cdtype, opset, pair=pair), ops=ops)


# Points on the axes and at zero, where branch handling matters.
SPECIAL = np.array(
    [0, 1, -1, 1j, -1j, -4, 4, 2j, -2j, -3 + 1e-7j, -3 - 1e-7j, 3 + 1e-7j, 1e-7 + 2j, 0.5 - 0.5j],
)


@pytest.mark.parametrize("op", ["Sqrt", "Log", "Sign", "Exp", "Reciprocal", "Atan", "Asinh"])
def test_function_at_special_points(op, cdtype):
    values = SPECIAL
    if op in ("Log", "Reciprocal"):
        values = values[values != 0]  # poles
    if op == "Atan":
        values = values[(values != 1j) & (values != -1j)]  # atan(+-i) is a pole
    m = single(op, cdtype, shape=[len(values)])
    ops = at(cdtype, on_parts(FUNCTION_OPS[op]))
    assert_rewrites(m, ops=ops, feeds={"a": values.astype(cdtype)})


def test_abs_is_real_and_scales_before_squaring(cdtype, opset):
    m = single("Abs", cdtype, opset, out_dtype=np.float32 if cdtype == np.complex64 else np.float64)
    # hypot of max(|re|, |im|) and min(|re|, |im|), with no ReduceL2 to overflow.
    assert_rewrites(m, ops=UNPACK + MODULUS)


WIDE_MODULUS = Ops(Cast=3, Mul=2, Add=1, Sqrt=1, IsInf=2, Or=1, Where=1)
"""|z| = sqrt(zr^2 + zi^2) in float64, rounded once, and inf where a part is infinite."""


@pytest.mark.parametrize(
    "shape, wide",
    [([64], True), ([WIDE_MODULUS_UP_TO], True), ([WIDE_MODULUS_UP_TO + 1], False), (["n"], False)],
    ids=["64", "most", "more", "dynamic"],
)
def test_abs_on_onnxruntime_sums_small_squares_in_float64(shape, wide):
    """On onnxruntime a complex64 modulus of at most WIDE_MODULUS_UP_TO values sums its
    squares in float64, faster there; more values, or a count not static, are scaled."""
    m = single("Abs", np.complex64, shape=shape, out_dtype=np.float32)
    ops = UNPACK + (WIDE_MODULUS if wide else MODULUS)
    sizes = {"a": [8]} if shape == ["n"] else None
    assert_rewrites(m, ops=ops, input_shapes=sizes, target="onnxruntime")


def test_abs_of_a_pair(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    assert_rewrites(single("Abs", cdtype, pair=True, out_dtype=real), ops=PAIR_SOURCE + MODULUS)


def _squared(cdtype, readers, shape=(2, 3), exponent=2.0, opset=18):
    """|a| read by `readers`: "pow" (Pow(|a|, exponent)), "mul" (Mul(|a|, |a|)), "relu"
    (any other op), each its own graph output; "out" makes |a| one too."""
    real = np.float32 if cdtype == np.complex64 else np.float64
    nodes, outputs = [helper.make_node("Abs", ["a"], ["m"])], []
    for i, reader in enumerate(readers):
        y = f"y{i}"
        if reader == "pow":
            nodes.append(helper.make_node("Pow", ["m", "two"], [y]))
        elif reader == "mul":
            nodes.append(helper.make_node("Mul", ["m", "m"], [y]))
        elif reader == "relu":
            nodes.append(helper.make_node("Relu", ["m"], [y]))
        outputs.append(vi(y if reader != "out" else "m", real, None))
    integer = isinstance(exponent, int)
    value = np.asarray(exponent, np.int64 if integer else real)
    return make_model(nodes, [vi("a", cdtype, list(shape))], outputs, [init("two", value)], opset)


SQUARED_MODULUS = Ops(Mul=2, Add=1, IsInf=2, Or=1, Where=1)
"""|z|^2 = zr^2 + zi^2, and inf where a part is infinite."""


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
@pytest.mark.parametrize("readers", [["pow"], ["mul"], ["pow", "mul"]], ids="+".join)
def test_a_squared_modulus_is_the_sum_of_the_parts_squares(cdtype, opset, readers, target):
    """|z| read only to be squared is zr^2 + zi^2: no scaling, no float64, no root.
    Two squarings read the one sum."""
    m = _squared(cdtype, readers, opset=opset)
    both = Ops(Identity=1) if len(readers) == 2 else Ops()
    assert_rewrites(m, ops=UNPACK + SQUARED_MODULUS + both, target=target)


def test_a_squared_modulus_at_special_values(cdtype):
    """numpy's hypot squared: inf where a part is infinite even beside a NaN, NaN where
    a part is NaN and neither is infinite, overflow where |z| passes the root of the
    largest float and underflow below the root of the smallest, signed zeros squared."""
    big = np.sqrt(np.finfo(cdtype).max)
    tiny = np.sqrt(np.finfo(cdtype).smallest_subnormal)
    inf, nan = np.inf, np.nan
    values = np.array(
        [*SPECIAL, complex(inf, nan), complex(nan, -inf), complex(nan, 1), complex(2, nan),
         complex(-inf, 3), complex(-0.0, -0.0), 2 * big, big * (1 + 1j), big / 2 + 0j,
         tiny / 2, tiny * (1 - 1j), 1e3 * tiny * 1j]
    )  # fmt: skip
    z = values.astype(cdtype)
    m = _squared(cdtype, ["pow"], shape=[len(values)])
    out = assert_rewrites(m, ops=UNPACK + SQUARED_MODULUS, feeds={"a": z})
    # validation leaves out where float32 overflows in both; numpy's infinities and NaNs
    (got,) = run_onnxruntime(out, {"a": np.stack([z.real, z.imag], -1)})
    with np.errstate(over="ignore", under="ignore"):
        want = np.abs(z) ** 2
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=0)


@pytest.mark.parametrize(
    "readers, exponent",
    [(["pow", "relu"], 2.0), (["pow", "out"], 2.0), (["pow"], 3.0),
     (["pow"], np.full((1, 1, 1), 2.0, np.float32))],
    ids=["read otherwise", "an output", "cubed", "a 2 that adds an axis"],
)  # fmt: skip
def test_a_modulus_read_otherwise_is_hypot(readers, exponent):
    """|z| that anything reads but a square of it (another op, the graph's output, a
    power other than 2, a 2 of more axes than |z|, which broadcasts it) is hypot's."""
    m = _squared(np.complex64, readers, exponent=exponent)
    relus = Ops({"Relu": readers.count("relu")})
    assert_rewrites(m, ops=UNPACK + MODULUS + Ops(Pow=1) + relus)


@pytest.mark.parametrize(
    "exponent", [2, np.full((1, 1), 2.0, np.float32)], ids=["integer", "1 x 1 on a matrix"]
)
def test_any_2_that_adds_no_axis_squares(exponent):
    m = _squared(np.complex64, ["pow"], exponent=exponent)
    assert_rewrites(m, ops=UNPACK + SQUARED_MODULUS)


@pytest.mark.parametrize("op", ["IsNaN", "IsInf"])
def test_nan_inf_tests(op, cdtype, opset):
    values = np.array([np.nan, 1j * np.nan, np.inf, -1j * np.inf, 1 + 1j, 0])
    m = single(op, cdtype, opset, shape=[6], out_dtype=np.bool_)
    z = values.astype(cdtype)
    out, _ = decomplex(m)
    assert_ops(out, UNPACK + Ops({op: 2, "Or": 1}))  # the test of either part
    packed = np.stack([z.real, z.imag], -1)
    (got,) = run_onnxruntime(out, {"a": packed})
    expected = np.isnan(z) if op == "IsNaN" else np.isinf(z)
    np.testing.assert_array_equal(got, expected)


def test_round_rounds_each_part(cdtype):
    assert_rewrites(
        single("Round", cdtype),
        ops=on_parts({"Round": 2}),  # numpy rounds each part
        feeds={"a": np.array([[1.5 - 2.5j, 0.4 + 3.6j, -0.5 + 0.5j]] * 2, cdtype)},
    )
