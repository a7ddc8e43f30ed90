"""Every formula helper against numpy's own complex arithmetic."""

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
    ],
)
def test_formula_matches_numpy(helper, args, expected):
    re, im = helper(NUMPY, *args)
    np.testing.assert_allclose(np.broadcast_to(re, expected.shape), expected.real, rtol=1e-12)
    np.testing.assert_allclose(np.broadcast_to(im, expected.shape), expected.imag, rtol=1e-12)


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
