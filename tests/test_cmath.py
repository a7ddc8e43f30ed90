"""Every formula helper against numpy's own complex arithmetic."""

from types import SimpleNamespace

import numpy as np
import pytest

from onnx_decomplex import cmath
from onnx_decomplex.cmath import NUMPY

rng = np.random.default_rng(0)
A = rng.standard_normal(5) + 1j * rng.standard_normal(5)
B = rng.standard_normal(5) + 1j * rng.standard_normal(5)
R = rng.standard_normal(5)


def parts(z):
    return z.real, z.imag


@pytest.mark.parametrize(
    "helper, args, expected",
    [
        (cmath.mul, (parts(A), parts(B)), A * B),
        (cmath.add, (parts(A), parts(B)), A + B),
        (cmath.sub, (parts(A), parts(B)), A - B),
        (cmath.neg, (parts(A),), -A),
        (cmath.mul_real, (parts(A), R), A * R),
        (cmath.mul_imag, (parts(A), R), A * (1j * R)),
        (cmath.add_real, (parts(A), R), A + R),
        (cmath.sub_real, (parts(A), R), A - R),
        (cmath.rsub_real, (R, parts(A)), R - A),
        (cmath.div, (parts(A), parts(B)), A / B),
        (cmath.div_real, (parts(A), R), A / R),
        (cmath.rdiv_real, (R, parts(B)), R / B),
        (cmath.reciprocal, (parts(A),), 1 / A),
        (cmath.conj, (parts(A),), np.conj(A)),
        (cmath.exp, (parts(A),), np.exp(A)),
        (cmath.sin, (parts(A),), np.sin(A)),
        (cmath.cos, (parts(A),), np.cos(A)),
        (cmath.tan, (parts(A),), np.tan(A)),
        (cmath.sinh, (parts(A),), np.sinh(A)),
        (cmath.cosh, (parts(A),), np.cosh(A)),
        (cmath.tanh, (parts(A),), np.tanh(A)),
        (cmath.mul_i, (parts(A),), 1j * A),
        (cmath.mul_neg_i, (parts(A),), -1j * A),
        (lambda ops, a, b: cmath.mul(ops, a, b, gauss=True), (parts(A), parts(B)), A * B),
        (cmath.mul_sparse, ((A.real, None), parts(B)), A.real * B),
        (cmath.mul_sparse, ((None, A.imag), parts(B)), 1j * A.imag * B),
        (cmath.mul_sparse, ((A.real, None), (None, B.imag)), A.real * 1j * B.imag),
        (cmath.mul_sparse, (parts(A), parts(B)), A * B),
        (cmath.add_sparse, ((A.real, None), (None, B.imag)), A.real + 1j * B.imag),
        (cmath.add_sparse, ((A.real, None), parts(B)), A.real + B),
        (
            lambda ops, a, b: cmath.add_sparse(ops, a, b, subtract=True),
            ((None, A.imag), parts(B)),
            1j * A.imag - B,
        ),  # fmt: skip
    ],
)
def test_formula_matches_numpy(helper, args, expected):
    re, im = helper(NUMPY, *args)
    # The sparse helpers give None for a part that is all zero.
    re, im = (np.zeros(expected.shape) if p is None else p for p in (re, im))
    np.testing.assert_allclose(np.broadcast_to(re, expected.shape), expected.real, rtol=1e-12)
    np.testing.assert_allclose(np.broadcast_to(im, expected.shape), expected.imag, rtol=1e-12)


def test_sparse_helpers_leave_an_all_zero_part_unmade():
    assert cmath.mul_sparse(NUMPY, (R, None), (R, None))[1] is None
    assert cmath.mul_sparse(NUMPY, (None, R), (R, None))[0] is None
    assert cmath.add_sparse(NUMPY, (R, None), (R, None))[1] is None


def test_mul_packed_matches_numpy():
    z = cmath.pack(A.reshape(5, 1) * np.ones((5, 3)))
    w = B[:3]
    w_re2 = np.stack([w.real, w.real], -1)
    w_im2 = np.stack([-w.imag, w.imag], -1)
    got = cmath.unpack(cmath.mul_packed(NUMPY, z, w_re2, w_im2))
    np.testing.assert_allclose(got, cmath.unpack(z) * w, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_pack_is_the_zero_copy_view(dtype):
    z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype)
    real = np.float32 if dtype == np.complex64 else np.float64
    view = z.view(real).reshape(*z.shape, 2)
    np.testing.assert_array_equal(cmath.pack(z), view)
    assert np.shares_memory(cmath.pack(z), z)  # zero-copy, as the design promises
    np.testing.assert_array_equal(cmath.unpack(view), z)
    assert cmath.unpack(view).dtype == dtype


def test_pack_of_a_real_array_has_zero_imaginary_part():
    r = np.array([[1.5, -2.0]], np.float32)
    np.testing.assert_array_equal(cmath.pack(r), [[[1.5, 0.0], [-2.0, 0.0]]])
    assert cmath.pack(r).dtype == np.float32


def test_pack_of_a_0d_array():
    z = np.array(1 - 2j, np.complex64)
    np.testing.assert_array_equal(cmath.pack(z), [1.0, -2.0])
    assert np.shares_memory(cmath.pack(z), z)


F64 = np.float64
EDGES = np.array([0, 1, -1, 1j, -1j, -2, 2j, -3 + 1e-9j, -3 - 1e-9j, 1e-9 - 2j, 0.3 + 0.4j])


@pytest.mark.parametrize(
    "helper, fn",
    [
        (cmath.log, np.log),
        (cmath.sqrt, np.sqrt),
        (cmath.asin, np.arcsin),
        (cmath.acos, np.arccos),
        (cmath.atan, np.arctan),
        (cmath.asinh, np.arcsinh),
        (cmath.acosh, np.arccosh),
        (cmath.atanh, np.arctanh),
        (cmath.sign, np.sign),
        (cmath.sigmoid, lambda z: 1 / (1 + np.exp(-z))),
    ],
)
def test_function_matches_numpy(helper, fn):
    z = np.concatenate([A, B])
    re, im = helper(NUMPY, parts(z), F64)
    np.testing.assert_allclose(re + 1j * im, fn(z), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("helper, fn", [(cmath.sqrt, np.sqrt), (cmath.log, np.log)])
def test_branches_at_the_axes_match_numpy(helper, fn):
    z = EDGES[EDGES != 0] if helper is cmath.log else EDGES
    re, im = helper(NUMPY, parts(z), F64)
    np.testing.assert_allclose(re + 1j * im, fn(z), rtol=1e-12, atol=1e-12)


def test_angle_is_atan2():
    z = np.concatenate([A, B, EDGES, [-1 + 0j, 0j]])
    np.testing.assert_allclose(cmath.angle(NUMPY, parts(z), F64), np.angle(z), atol=1e-15)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 13, -1, -4])
def test_integer_power(n):
    re, im = cmath.pow_int(NUMPY, parts(A), n, F64)
    np.testing.assert_allclose(re + 1j * im, A**n, rtol=1e-12)


@pytest.mark.parametrize("p", [0.5, -1.5, 2.25])
def test_real_power(p):
    re, im = cmath.pow_real(NUMPY, parts(A), np.float64(p), F64)
    np.testing.assert_allclose(re + 1j * im, A**p, rtol=1e-12)


def test_complex_power():
    re, im = cmath.pow_complex(NUMPY, parts(A), parts(B), F64)
    np.testing.assert_allclose(re + 1j * im, A**B, rtol=1e-12)


def test_complex_power_of_zero_is_numpys():
    a = np.zeros(4, np.complex128)
    b = np.array([2, 1 + 1j, 0, -1 + 0.5j])
    with np.errstate(invalid="ignore", divide="ignore"):  # log 0, as in the model
        re, im = cmath.pow_complex(NUMPY, parts(a), parts(b), F64)
        np.testing.assert_array_equal(re + 1j * im, a**b)  # 0, 0, 1, nan


def test_double_helpers_for_missing_float64_kernels():
    x = np.linspace(-30, 30, 101)
    np.testing.assert_allclose(cmath.sinh_by_exp(NUMPY, x), np.sinh(x), rtol=1e-14)
    np.testing.assert_allclose(cmath.cosh_by_exp(NUMPY, x), np.cosh(x), rtol=1e-14)
    t = np.concatenate([x, [1e-9, -1e9]])
    np.testing.assert_allclose(cmath.atan_refined(NUMPY, t, np.arctan), np.arctan(t), rtol=1e-14)


def test_block_weights():
    w = A.reshape(5, 1) * B.reshape(1, 5)
    x = np.stack([A, B])
    big = cmath.interleaved_block(w)
    y = (cmath.pack(x).reshape(2, -1) @ big).reshape(2, 5, 2)
    np.testing.assert_allclose(cmath.unpack(y), x @ w, rtol=1e-12)
    t = cmath.mul_structure(3, F64)
    prod = np.einsum("a,b,c,abcz->z", cmath.pack(A[0]), cmath.pack(A[1]), cmath.pack(A[2]), t)
    np.testing.assert_allclose(cmath.unpack(prod), A[0] * A[1] * A[2], rtol=1e-12)


def test_wrap_angle_lands_in_the_principal_range():
    t = np.linspace(-20, 20, 4001)
    wrapped = cmath.wrap_angle(NUMPY, t, F64)
    assert np.all(wrapped > -np.pi) and np.all(wrapped <= np.pi + 1e-12)
    np.testing.assert_allclose(np.exp(1j * wrapped), np.exp(1j * t), atol=1e-12)


def test_a_square_has_numpys_signed_zeros():
    """ar^2 - ai^2 is +0 wherever |ar| = |ai|: (ar - ai)(ar + ai) would give -0 at
    ar = -ai = -1 and at -0 - 0i, and a Log or Sqrt after it would turn by pi."""
    z = np.array([-1 + 1j, 1 - 1j, -1 - 1j, complex(-0.0, -0.0), complex(-0.0, 0.0), 2 - 2j])
    re, im = cmath.square(NUMPY, parts(z))
    expected = z * z
    assert np.array_equal(np.signbit(re), np.signbit(expected.real))
    assert np.array_equal(np.signbit(im), np.signbit(expected.imag))
    np.testing.assert_allclose(re + 1j * im, expected)


def test_a_quotient_has_numpys_signed_zeros():
    """A part that cancels to 0 (z / z, i z / z, ...) is signed as numpy's Smith division
    signs it, by the sign of the divisor's larger part, in every quadrant and order of
    the divisor's parts."""
    b = np.array([complex(r, i) for r in (1.0, -1.0, 0.5, -3.0)
                  for i in (1.0, -1.0, 0.5, -3.0, 0.0, -0.0)], np.complex64)  # fmt: skip
    for a in (b, 1j * b, -1j * b, -b, np.conj(b)):
        expected = a / b
        re, im = cmath.div(NUMPY, parts(a), parts(b), np.float32)
        assert np.array_equal(np.signbit(re), np.signbit(expected.real))
        assert np.array_equal(np.signbit(im), np.signbit(expected.imag))
        np.testing.assert_allclose(re + 1j * im, expected, rtol=1e-6)


RECIPROCAL_DIV = SimpleNamespace(
    **{**vars(NUMPY), "div": lambda a, b: np.multiply(a, np.reciprocal(b))},
    reciprocal_divides=True,
)
"""NUMPY with Div as OpenVINO 2026.4 computes it, a (1 / b) (docs/openvino.md)."""

F32 = np.float32
_TINY = np.finfo(F32).tiny
SMALL = np.array([0, 1e-45, 3e-42, 1e-40, 2e-39, 0.5 * _TINY, _TINY, 1e-30, 0.7, 3e38], F32)
"""Magnitudes from 0 through the subnormals (1e-40, whose reciprocal overflows) to
near the largest float32."""


def _grid(values: np.ndarray) -> np.ndarray:
    signed = np.concatenate([values, -values])
    re, im = np.meshgrid(signed, signed)
    return (re + 1j * im).astype(np.complex64).ravel()


@pytest.mark.parametrize(
    "helper, fn",
    [
        (cmath.absolute, np.abs),
        (cmath.angle, np.angle),
        (cmath.sign, np.sign),
        (cmath.sqrt, np.sqrt),
        (cmath.log, np.log),
        (cmath.reciprocal, lambda z: 1 / z),
    ],
)
def test_divisions_by_reciprocal_keep_zeros_and_subnormals_exact(helper, fn):
    """With Div as a (1 / b), whose 1 / b overflows at a subnormal b, every function
    still matches numpy at 0, at subnormal parts and at large ones, in float32: none
    divides by a subnormal. The plain forms divide by the smallest subnormal at 0."""
    z = _grid(SMALL)
    with np.errstate(all="ignore"):
        # In complex128, rounded once: numpy's own complex64 sign and reciprocal
        # underflow in between.
        want = fn(z.astype(np.complex128))
        want = want.astype(np.complex64 if want.dtype.kind == "c" else F32)
        got = helper(RECIPROCAL_DIV, parts(z), F32)
    got = got[0] + 1j * got[1] if isinstance(got, tuple) else got
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), finite), z[np.isfinite(got) != finite]
    # A subnormal result holds few digits: within 10 of its steps.
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-6, atol=1e-44)


def test_a_plain_division_by_a_reciprocal_breaks_at_zero():
    """Why the openvino target takes `_Divisor`'s scaled form: the plain one gives NaN
    for |0| where Div is a (1 / b)."""
    plain = SimpleNamespace(**{**vars(RECIPROCAL_DIV), "reciprocal_divides": False})
    with np.errstate(all="ignore"):
        assert np.isnan(cmath.absolute(plain, parts(np.zeros(1, np.complex64)), F32)).all()


def test_a_complex_quotient_by_reciprocal_matches_numpy():
    a, b = _grid(SMALL[[0, 7, 8]]), _grid(SMALL)
    a, b = np.repeat(a, b.size), np.tile(b, a.size)
    with np.errstate(all="ignore"):
        want = a.astype(np.complex128) / b.astype(np.complex128)
        re, im = cmath.div(RECIPROCAL_DIV, parts(a), parts(b), F32)
    for got, part in [(re, want.real), (im, want.imag)]:
        finite = np.abs(part) < np.finfo(F32).max
        np.testing.assert_allclose(got[finite], part[finite], rtol=2e-6, atol=1e-44)
