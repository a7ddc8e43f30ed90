"""Elementwise functions of one complex value, against the reference evaluator."""

import numpy as np
import pytest
from helpers import PAIR_SOURCE, UNPACK, Ops, assert_ops, assert_rewrites, at, on_parts, single

from onnx_decomplex import decomplex
from onnx_decomplex.rules.unary import FUNCTIONS
from onnx_decomplex.validate import run_onnxruntime

HYPOT = Ops(Abs=2, Max=2, Min=2, Div=1, Mul=2, Add=1, Sqrt=1)
"""|z| = m sqrt(1 + (n / m)^2), m = max(|zr|, |zi|), n = min(|zr|, |zi|)."""
MODULUS = HYPOT + Ops(IsInf=2, Or=1, Where=1)
"""|z| = hypot(zr, zi), and inf where a part is infinite, as numpy's."""
ZERO_PART = Ops(Equal=1, IsInf=1, And=1, Sign=1, Where=1)
"""A part m sin t kept the zero of t where m is infinite: the factor sign(m) there."""
SINES = Ops(Sin=1, Cos=1, Sinh=1, Cosh=1, Mul=2) + ZERO_PART
"""sin z = sin zr cosh zi + i cos zr sinh zi (and cos, sinh, cosh alike), a zero part
kept where it is zero."""

FUNCTION_OPS = {
    "Exp": Ops(Exp=1, Cos=1, Sin=1, Mul=2) + ZERO_PART,  # e^zr (cos zi, sin zi)
    "Sin": SINES,
    "Cos": SINES + Ops(Neg=1),  # cos zr cosh zi - i sin zr sinh zi
    "Sinh": SINES,
    "Cosh": SINES,
    "Tan": Ops(Add=1, Cos=1, Cosh=1, Div=4, Mul=3, Neg=2, Sin=1, Tanh=1),
    "Tanh": Ops(Add=1, Cos=1, Cosh=1, Div=4, Mul=3, Sin=1, Tanh=1),
    "Reciprocal": Ops(Abs=2, Add=1, Div=6, Max=2, Mul=2, Neg=1),  # conj(c) / |c|^2 / s
    # (z / m) / sqrt(1 + q^2); +0 parts where z is 0 or has an infinite part, as numpy's
    "Sign": Ops(Abs=2, Add=1, Div=5, Max=2, Min=2, Mul=1, Sqrt=1, Equal=3, IsInf=1, Or=1,
                And=2, Where=2),
    "Log": Ops(Abs=4, Add=4, Atan=1, Cast=3, Div=4, IsInf=1, Less=3, Log=2, Max=4, Min=5,
               Mul=5, Sqrt=1, Sub=5, Where=1),  # log|z| + i arg z
    "Sqrt": Ops(Abs=2, Add=4, Cast=2, Div=6, IsInf=1, Less=2, Max=4, Min=6, Mul=5, Sqrt=3,
                Sub=2, Where=1),
    "Asin": Ops(Abs=12, Add=19, Atan=1, Cast=10, Div=18, IsInf=4, Less=11, Log=3, Max=11,
                Min=16, Mul=32, Neg=1, Sqrt=7, Sub=17, Where=5),
    "Acos": Ops(Abs=12, Add=19, Atan=1, Cast=10, Div=18, IsInf=4, Less=11, Log=3, Max=11,
                Min=16, Mul=29, Neg=1, Sqrt=7, Sub=16, Where=5),
    "Atan": Ops(Abs=6, Add=8, Atan=1, Cast=5, Div=8, IsInf=4, Less=5, Log=1, Max=5, Min=6,
                Mul=18, Neg=2, Sign=1, Sqrt=1, Sub=12, Where=4),
    "Asinh": Ops(Abs=12, Add=19, Atan=1, Cast=10, Div=18, IsInf=4, Less=11, Log=3, Max=11,
                 Min=16, Mul=32, Neg=3, Sqrt=7, Sub=17, Where=5),
    "Acosh": Ops(Abs=12, Add=20, Atan=1, Cast=10, Div=18, IsInf=4, Less=11, Log=3, Max=11,
                 Min=16, Mul=29, Sqrt=7, Sub=15, Where=5),
    "Atanh": Ops(Abs=6, Add=8, Atan=1, Cast=5, Div=8, IsInf=4, Less=5, Log=1, Max=5, Min=6,
                 Mul=18, Sign=1, Sqrt=1, Sub=12, Where=4),
    "Sigmoid": Ops(Abs=1, Add=3, Cast=1, Cos=1, Div=2, Equal=2, Exp=1, Less=1, Mul=10, Neg=1,
                   Sin=1, Sub=2, Where=4, IsInf=1, And=1, Sign=1),
}  # fmt: skip
"""The ops each function emits on the parts of a complex64 value (complex128: `at`).
The larger ones are read from the rewrite; their formulas are the docstrings of
`cmath`'s functions of the same name."""


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


def test_abs_of_a_pair(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    assert_rewrites(single("Abs", cdtype, pair=True, out_dtype=real), ops=PAIR_SOURCE + MODULUS)


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
