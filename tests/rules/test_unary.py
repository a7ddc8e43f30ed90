"""Elementwise functions of one complex value, against the reference evaluator."""

import numpy as np
import pytest
from helpers import assert_rewrites, op_types, single

from onnx_decomplex import decomplex
from onnx_decomplex.rules.unary import FUNCTIONS
from onnx_decomplex.validate import run_onnxruntime


@pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])
@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_function(op, opset, cdtype, pair):
    assert_rewrites(single(op, cdtype, opset, pair=pair))


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
    assert_rewrites(m, feeds={"a": values.astype(cdtype)})


def test_abs_is_real_and_scales_before_squaring(cdtype, opset):
    m = single("Abs", cdtype, opset, out_dtype=np.float32 if cdtype == np.complex64 else np.float64)
    out = assert_rewrites(m)
    # hypot of max(|re|, |im|) and min(|re|, |im|), with no ReduceL2 to overflow.
    assert "ReduceL2" not in op_types(out)
    assert op_types(out).count("Sqrt") == 1


def test_abs_of_a_pair(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    assert_rewrites(single("Abs", cdtype, pair=True, out_dtype=real))


@pytest.mark.parametrize("op", ["IsNaN", "IsInf"])
def test_nan_inf_tests(op, cdtype, opset):
    values = np.array([np.nan, 1j * np.nan, np.inf, -1j * np.inf, 1 + 1j, 0])
    m = single(op, cdtype, opset, shape=[6], out_dtype=np.bool_)
    z = values.astype(cdtype)
    out, _ = decomplex(m)
    packed = np.stack([z.real, z.imag], -1)
    (got,) = run_onnxruntime(out, {"a": packed})
    expected = np.isnan(z) if op == "IsNaN" else np.isinf(z)
    np.testing.assert_array_equal(got, expected)


def test_round_rounds_each_part(cdtype):
    assert_rewrites(
        single("Round", cdtype),
        feeds={"a": np.array([[1.5 - 2.5j, 0.4 + 3.6j, -0.5 + 0.5j]] * 2, cdtype)},
    )
