"""Complex arithmetic on (re, im) pairs.

Each helper takes `ops`, anything with the elementwise functions of `NUMPY`
below: the rewrite context (which emits nodes, folding numpy constants) or `NUMPY`
itself (which computes directly, and lets the tests check every formula against
numpy's complex arithmetic). Helpers hold the math only, no graph plumbing.
Helpers that need a literal (pi, 0.5) take the real `dtype` of the parts, so that
emitted constants match the graph's precision.

Only what ONNX has is used: there is no Atan2 (`angle` is built from Atan and
Where), and no comparison beyond Less and Equal is needed.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .dtypes import real_of

NUMPY = SimpleNamespace(
    add=np.add,
    sub=np.subtract,
    mul=np.multiply,
    div=np.divide,
    pow=np.power,
    neg=np.negative,
    abs=np.abs,
    sqrt=np.sqrt,
    exp=np.exp,
    log=np.log,
    ceil=np.ceil,
    sin=np.sin,
    cos=np.cos,
    sinh=np.sinh,
    cosh=np.cosh,
    atan=np.arctan,
    cast=lambda x, dtype: np.asarray(x).astype(dtype),
    less=np.less,
    equal=np.equal,
    where=np.where,
    split_halves=lambda x, axis: np.split(x, 2, axis),
    concat=lambda parts, axis: np.concatenate(parts, axis),
)


def _c(value, dtype):
    return np.asarray(value, dtype=dtype)


def bilinear(ops, a, b, f, gauss: bool = False):
    """f bilinear: f(a, b) = (f(ar, br) - f(ai, bi)) + i (f(ar, bi) + f(ai, br))

    With `gauss`, three products instead of four (Gauss's trick):
    t1 = f(ar, br), t2 = f(ai, bi), t3 = f(ar + ai, br + bi);
    f(a, b) = (t1 - t2) + i (t3 - t1 - t2).
    """
    (ar, ai), (br, bi) = a, b
    if gauss:
        t1, t2 = f(ar, br), f(ai, bi)
        t3 = f(ops.add(ar, ai), ops.add(br, bi))
        return ops.sub(t1, t2), ops.sub(ops.sub(t3, t1), t2)
    return ops.sub(f(ar, br), f(ai, bi)), ops.add(f(ar, bi), f(ai, br))


def mul(ops, a, b, gauss: bool = False):
    """(ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)"""
    return bilinear(ops, a, b, ops.mul, gauss)


def mul_real(ops, a, r):
    """(ar + i ai) r = ar r + i ai r"""
    ar, ai = a
    return ops.mul(ar, r), ops.mul(ai, r)


def mul_imag(ops, a, s):
    """(ar + i ai)(i s) = -ai s + i ar s"""
    ar, ai = a
    return ops.mul(ai, ops.neg(s)), ops.mul(ar, s)


def add(ops, a, b):
    """(ar + i ai) + (br + i bi) = (ar + br) + i (ai + bi)"""
    (ar, ai), (br, bi) = a, b
    return ops.add(ar, br), ops.add(ai, bi)


def sub(ops, a, b):
    """(ar + i ai) - (br + i bi) = (ar - br) + i (ai - bi)"""
    (ar, ai), (br, bi) = a, b
    return ops.sub(ar, br), ops.sub(ai, bi)


def add_real(ops, a, r):
    """(ar + i ai) + r = (ar + r) + i ai"""
    ar, ai = a
    return ops.add(ar, r), ai


def sub_real(ops, a, r):
    """(ar + i ai) - r = (ar - r) + i ai"""
    ar, ai = a
    return ops.sub(ar, r), ai


def rsub_real(ops, r, a):
    """r - (ar + i ai) = (r - ar) - i ai"""
    ar, ai = a
    return ops.sub(r, ar), ops.neg(ai)


def neg(ops, a):
    """-(ar + i ai) = -ar - i ai"""
    ar, ai = a
    return ops.neg(ar), ops.neg(ai)


def conj(ops, a):
    """conj(ar + i ai) = ar - i ai"""
    ar, ai = a
    return ar, ops.neg(ai)


def mul_packed(ops, z, w_re2, w_im2):
    """z w on the packed layout, where w_re2 = (wr, wr) and w_im2 = (-wi, wi) on the
    last axis and swap(z) = (zi, zr):

    z w_re2 + swap(z) w_im2 = (zr wr - zi wi, zi wr + zr wi)
    """
    zr, zi = ops.split_halves(z, -1)
    return ops.add(ops.mul(z, w_re2), ops.mul(ops.concat([zi, zr], -1), w_im2))


def _times(ops, x, y):
    return None if x is None or y is None else ops.mul(x, y)


def _plus(ops, x, y):
    return x if y is None else y if x is None else ops.add(x, y)


def _minus(ops, x, y):
    return x if y is None else ops.neg(y) if x is None else ops.sub(x, y)


def mul_sparse(ops, a, b):
    """(ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br), where a part given
    as None is zero: every product with it is dropped, and a result part that is
    all dropped products comes back as None.
    """
    (ar, ai), (br, bi) = a, b
    re = _minus(ops, _times(ops, ar, br), _times(ops, ai, bi))
    im = _plus(ops, _times(ops, ar, bi), _times(ops, ai, br))
    return re, im


def add_sparse(ops, a, b, subtract: bool = False):
    """(ar + i ai) +- (br + i bi) = (ar +- br) + i (ai +- bi), a None part being zero."""
    (ar, ai), (br, bi) = a, b
    combine = _minus if subtract else _plus
    return combine(ops, ar, br), combine(ops, ai, bi)


def abs2(ops, a):
    """|a|^2 = ar^2 + ai^2"""
    ar, ai = a
    return ops.add(ops.mul(ar, ar), ops.mul(ai, ai))


def absolute(ops, a):
    """|a| = sqrt(ar^2 + ai^2)"""
    return ops.sqrt(abs2(ops, a))


def div(ops, a, b):
    """a / b = ((ar br + ai bi) + i (ai br - ar bi)) / (br^2 + bi^2)"""
    (ar, ai), (br, bi) = a, b
    den = abs2(ops, b)
    re = ops.add(ops.mul(ar, br), ops.mul(ai, bi))
    im = ops.sub(ops.mul(ai, br), ops.mul(ar, bi))
    return ops.div(re, den), ops.div(im, den)


def div_real(ops, a, r):
    """(ar + i ai) / r = ar / r + i ai / r"""
    ar, ai = a
    return ops.div(ar, r), ops.div(ai, r)


def rdiv_real(ops, r, b):
    """r / (br + i bi) = (r br - i r bi) / (br^2 + bi^2)"""
    br, bi = b
    scale = ops.div(r, abs2(ops, b))
    return ops.mul(br, scale), ops.neg(ops.mul(bi, scale))


def reciprocal(ops, a):
    """1 / (ar + i ai) = (ar - i ai) / (ar^2 + ai^2)"""
    ar, ai = a
    den = abs2(ops, a)
    return ops.div(ar, den), ops.neg(ops.div(ai, den))


def angle(ops, a, dtype):
    """arg(ar + i ai) = atan2(ai, ar), in (-pi, pi], from Atan alone:

    |ar| >= |ai|: atan(ai / ar), plus pi (ai >= 0) or -pi (ai < 0) when ar < 0;
    |ar| <  |ai|: pi/2 sign(ai) - atan(ar / ai).
    The branch keeps each quotient in [-1, 1]; arg(0) = 0.
    """
    ar, ai = a
    zero = _c(0, dtype)
    flat = ops.less(ops.abs(ar), ops.abs(ai))
    half_pi = ops.where(ops.less(ai, zero), _c(-np.pi / 2, dtype), _c(np.pi / 2, dtype))
    steep = ops.sub(half_pi, ops.atan(ops.div(ar, ops.where(flat, ai, _c(1, dtype)))))
    # 0 / 0 is avoided by dividing by 1 on the other branch and where both are 0.
    safe_ar = ops.where(ops.equal(ar, zero), _c(1, dtype), ar)
    shallow = ops.atan(ops.div(ai, safe_ar))
    turn = ops.where(ops.less(ai, zero), _c(-np.pi, dtype), _c(np.pi, dtype))
    shallow = ops.where(ops.less(ar, zero), ops.add(shallow, turn), shallow)
    return ops.where(flat, steep, shallow)


def wrap_angle(ops, t, dtype):
    """t - 2 pi ceil((t - pi) / (2 pi)): the same angle, in (-pi, pi]"""
    turns = ops.ceil(ops.div(ops.sub(t, _c(np.pi, dtype)), _c(2 * np.pi, dtype)))
    return ops.sub(t, ops.mul(turns, _c(2 * np.pi, dtype)))


def sinh_by_exp(ops, x):
    """sinh x = (e^x - e^-x) / 2, for real x"""
    e, inv = ops.exp(x), ops.exp(ops.neg(x))
    return ops.mul(ops.sub(e, inv), np.asarray(0.5, np.float64))


def cosh_by_exp(ops, x):
    """cosh x = (e^x + e^-x) / 2, for real x"""
    e, inv = ops.exp(x), ops.exp(ops.neg(x))
    return ops.mul(ops.add(e, inv), np.asarray(0.5, np.float64))


def atan_refined(ops, x, atan32):
    """atan x in float64 from a float32 start y0 = atan32(t) and one Newton step on
    tan y = t: y1 = y0 - cos y0 (sin y0 - t cos y0), which squares the error. The
    step is taken on |t| <= 1 (t = x, or 1/x with atan x = +-pi/2 - atan(1/x)),
    where its error stays near 1e-16.
    """
    one = np.asarray(1, np.float64)
    big = ops.less(one, ops.abs(x))
    t = ops.where(big, ops.div(one, ops.where(big, x, one)), x)
    y0 = ops.cast(atan32(ops.cast(t, np.float32)), np.float64)
    c = ops.cos(y0)
    y = ops.sub(y0, ops.mul(c, ops.sub(ops.sin(y0), ops.mul(t, c))))
    half_pi = ops.where(ops.less(x, np.asarray(0, np.float64)), _c(-np.pi / 2, np.float64),
                        _c(np.pi / 2, np.float64))  # fmt: skip
    return ops.where(big, ops.sub(half_pi, y), y)


def exp(ops, a):
    """e^(ar + i ai) = e^ar cos ai + i e^ar sin ai"""
    ar, ai = a
    m = ops.exp(ar)
    return ops.mul(m, ops.cos(ai)), ops.mul(m, ops.sin(ai))


def log(ops, a, dtype):
    """log(a) = log|a| + i arg(a), with log|a| = log(ar^2 + ai^2) / 2"""
    return ops.mul(ops.log(abs2(ops, a)), _c(0.5, dtype)), angle(ops, a, dtype)


def sqrt(ops, a, dtype):
    """Principal square root, with no cancellation: t = sqrt((|a| + |ar|) / 2);
    ar >= 0: t + i ai / (2t);  ar < 0: |ai| / (2t) + i t sign(ai);  sqrt(0) = 0.
    """
    ar, ai = a
    zero = _c(0, dtype)
    t = ops.sqrt(ops.mul(ops.add(absolute(ops, a), ops.abs(ar)), _c(0.5, dtype)))
    is_zero = ops.equal(t, zero)
    two_t = ops.where(is_zero, _c(1, dtype), ops.add(t, t))
    other = ops.div(ai, two_t)
    negative = ops.less(ar, zero)
    re = ops.where(negative, ops.abs(other), t)
    im = ops.where(negative, ops.where(ops.less(ai, zero), ops.neg(t), t), other)
    return re, im


def sin(ops, a):
    """sin(ar + i ai) = sin ar cosh ai + i cos ar sinh ai"""
    ar, ai = a
    return ops.mul(ops.sin(ar), ops.cosh(ai)), ops.mul(ops.cos(ar), ops.sinh(ai))


def cos(ops, a):
    """cos(ar + i ai) = cos ar cosh ai - i sin ar sinh ai"""
    ar, ai = a
    return ops.mul(ops.cos(ar), ops.cosh(ai)), ops.neg(ops.mul(ops.sin(ar), ops.sinh(ai)))


def sinh(ops, a):
    """sinh(ar + i ai) = sinh ar cos ai + i cosh ar sin ai"""
    ar, ai = a
    return ops.mul(ops.sinh(ar), ops.cos(ai)), ops.mul(ops.cosh(ar), ops.sin(ai))


def cosh(ops, a):
    """cosh(ar + i ai) = cosh ar cos ai + i sinh ar sin ai"""
    ar, ai = a
    return ops.mul(ops.cosh(ar), ops.cos(ai)), ops.mul(ops.sinh(ar), ops.sin(ai))


def tan(ops, a):
    """tan(ar + i ai) = (sin 2ar + i sinh 2ai) / (cos 2ar + cosh 2ai)"""
    ar, ai = a
    x, y = ops.add(ar, ar), ops.add(ai, ai)
    den = ops.add(ops.cos(x), ops.cosh(y))
    return ops.div(ops.sin(x), den), ops.div(ops.sinh(y), den)


def tanh(ops, a):
    """tanh(ar + i ai) = (sinh 2ar + i sin 2ai) / (cosh 2ar + cos 2ai)"""
    ar, ai = a
    x, y = ops.add(ar, ar), ops.add(ai, ai)
    den = ops.add(ops.cosh(x), ops.cos(y))
    return ops.div(ops.sinh(x), den), ops.div(ops.sin(y), den)


def mul_i(ops, a):
    """i (ar + i ai) = -ai + i ar"""
    ar, ai = a
    return ops.neg(ai), ar


def mul_neg_i(ops, a):
    """-i (ar + i ai) = ai - i ar"""
    ar, ai = a
    return ai, ops.neg(ar)


def asinh(ops, a, dtype):
    """asinh(a) = s log(s a + sqrt(a^2 + 1)), s = sign(ar) (1 at 0): asinh is odd,
    and with Re(s a) >= 0 the sum never cancels."""
    ar, ai = a
    s = ops.where(ops.less(ar, _c(0, dtype)), _c(-1, dtype), _c(1, dtype))
    sa = mul_real(ops, a, s)
    sq = mul(ops, a, a)
    root = sqrt(ops, (ops.add(sq[0], _c(1, dtype)), sq[1]), dtype)
    return mul_real(ops, log(ops, add(ops, sa, root), dtype), s)


def asin(ops, a, dtype):
    """asin(a) = -i asinh(i a)"""
    return mul_neg_i(ops, asinh(ops, mul_i(ops, a), dtype))


def acos(ops, a, dtype):
    """acos(a) = pi/2 - asin(a)"""
    re, im = asin(ops, a, dtype)
    return ops.sub(_c(np.pi / 2, dtype), re), ops.neg(im)


def atanh(ops, a, dtype):
    """atanh(a) = (log(1 + a) - log(1 - a)) / 2"""
    ar, ai = a
    one = _c(1, dtype)
    lp = log(ops, (ops.add(one, ar), ai), dtype)
    lm = log(ops, (ops.sub(one, ar), ops.neg(ai)), dtype)
    return mul_real(ops, sub(ops, lp, lm), _c(0.5, dtype))


def atan(ops, a, dtype):
    """atan(a) = -i atanh(i a)"""
    return mul_neg_i(ops, atanh(ops, mul_i(ops, a), dtype))


def acosh(ops, a, dtype):
    """acosh(a) = log(a + sqrt(a + 1) sqrt(a - 1))"""
    ar, ai = a
    one = _c(1, dtype)
    p = sqrt(ops, (ops.add(ar, one), ai), dtype)
    m = sqrt(ops, (ops.sub(ar, one), ai), dtype)
    return log(ops, add(ops, a, mul(ops, p, m)), dtype)


def sigmoid(ops, a, dtype):
    """sigmoid(a) = 1 / (1 + e^-a)"""
    er, ei = exp(ops, neg(ops, a))
    return reciprocal(ops, (ops.add(er, _c(1, dtype)), ei))


def sign(ops, a, dtype):
    """sign(a) = a / |a|, and sign(0) = 0 (numpy 2)"""
    ar, ai = a
    m = absolute(ops, a)
    safe = ops.where(ops.equal(m, _c(0, dtype)), _c(1, dtype), m)
    return ops.div(ar, safe), ops.div(ai, safe)


def pow_int(ops, a, n: int, dtype):
    """a^n by repeated squaring; a^-n = 1 / a^n; a^0 = 1"""
    if n < 0:
        return reciprocal(ops, pow_int(ops, a, -n, dtype))
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else mul(ops, result, base)
        n >>= 1
        if n:
            base = mul(ops, base, base)
    if result is None:
        # a^0 = 1 in a's shape, even for inf and nan, as numpy and Pow give.
        one = ops.pow(a[0], _c(0, dtype))
        return one, ops.sub(one, one)
    return result


def pow_real(ops, a, p, dtype):
    """a^p = |a|^p (cos p arg a + i sin p arg a), p real"""
    m = ops.pow(abs2(ops, a), ops.mul(p, _c(0.5, dtype)))
    theta = ops.mul(angle(ops, a, dtype), p)
    return ops.mul(m, ops.cos(theta)), ops.mul(m, ops.sin(theta))


def pow_complex(ops, a, b, dtype):
    """a^b = exp(b log a), principal branch; as numpy, 0^b = 0 for Re b > 0 and a^0 = 1"""
    re, im = exp(ops, mul(ops, b, log(ops, a, dtype)))
    zero, one = _c(0, dtype), _c(1, dtype)
    # exp(b log 0) is NaN: 0^b is 0 where Re b > 0 (and stays NaN elsewhere).
    at_zero = ops.equal(abs2(ops, a), zero)
    vanishes = ops.less(zero, b[0])
    re = ops.where(at_zero, ops.where(vanishes, zero, re), re)
    im = ops.where(at_zero, ops.where(vanishes, zero, im), im)
    unit = ops.equal(abs2(ops, b), zero)
    return ops.where(unit, one, re), ops.where(unit, zero, im)


def interleaved_block(w: np.ndarray) -> np.ndarray:
    """W (K, N) complex -> real (2K, 2N) acting on interleaved (re, im) rows:

    [xr_k, xi_k] @ [[Wr, Wi], [-Wi, Wr]]_k = [re_n, im_n] of (x W)_n, so that the
    packed x reshaped to (..., 2K) times it is the packed x W reshaped to (..., 2N).
    A 1-D w (K,) gives (2K, 2): x w packed directly.
    """
    w = w.reshape(w.shape[0], -1)
    k, n = w.shape
    big = np.empty((k, 2, n, 2), dtype=real_of(w.dtype))
    big[:, 0, :, 0], big[:, 0, :, 1] = w.real, w.imag
    big[:, 1, :, 0], big[:, 1, :, 1] = -w.imag, w.real
    return big.reshape(2 * k, 2 * n)


def dft_coefficients(
    n_in: int, length: int, inverse: bool = False, onesided: bool = False
) -> np.ndarray:
    """W (n_in, K) complex with y_k = sum_j W[j, k] x_j, the DFT of length L = `length`:

    forward:           W[j, k] = e^(-2 pi i jk / L),          k < L (k <= L/2 one-sided)
    inverse:           W[j, k] = e^(+2 pi i jk / L) / L,      k < L
    inverse one-sided: W[j, n] = c_j e^(+2 pi i jn / L) / L,  n < L, of which Re y is kept,
                       with c_j = 1 for j = 0 and j = L/2, else 2 (the Hermitian half).

    Rows j >= L are zero (the signal is cut to L); rows past n_in do not exist (it
    is zero-padded to L). A one-sided inverse reads rows j <= L/2 only.
    """
    rows = min(n_in, length // 2 + 1 if inverse and onesided else length)
    cols = length // 2 + 1 if onesided and not inverse else length
    j = np.arange(rows, dtype=np.int64)[:, None]
    k = np.arange(cols, dtype=np.int64)[None, :]
    # The product taken mod L keeps the angle exact for long transforms.
    theta = 2 * np.pi * ((j * k) % length) / length
    w = np.zeros((n_in, cols), np.complex128)
    w[:rows] = np.exp(1j * theta) / length if inverse else np.exp(-1j * theta)
    if inverse and onesided:
        double = (np.arange(rows) > 0) & (2 * np.arange(rows) != length)
        w[:rows][double] *= 2
    return w


def channel_block(w: np.ndarray, transpose: bool = False) -> np.ndarray:
    """Conv weight W (M, C, ...) complex -> real (2M, 2C, ...) = [[Wr, -Wi], [Wi, Wr]]:

    Conv([xr; xi], it) = [Conv(xr, Wr) - Conv(xi, Wi); Conv(xr, Wi) + Conv(xi, Wr)].
    With `transpose` (ConvTranspose weights, (C, M, ...)) the block is
    [[Wr, Wi], [-Wi, Wr]], the same map with inputs and outputs swapped.
    """
    wr, wi = w.real, w.imag
    if transpose:
        rows = [np.concatenate([wr, wi], axis=1), np.concatenate([-wi, wr], axis=1)]
    else:
        rows = [np.concatenate([wr, -wi], axis=1), np.concatenate([wi, wr], axis=1)]
    return np.ascontiguousarray(np.concatenate(rows, axis=0))


def mul_structure(n: int, dtype) -> np.ndarray:
    """T[a1, ..., an, c]: the product of n complex numbers in (re, im) coordinates.

    prod_k (x_k0 + i x_k1) = sum over a of T[a, 0] prod x_k,ak + i T[a, 1] prod x_k,ak,
    where T[a, :] is (re, im) of i^(number of imaginary factors in a).
    """
    t = np.zeros((2,) * n + (2,), dtype)
    for index in np.ndindex(*(2,) * n):
        power = (1, 1j, -1, -1j)[sum(index) % 4]
        t[index] = (power.real, power.imag)
    return t


def split(value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z -> (Re z, Im z), as contiguous real arrays."""
    # not ascontiguousarray, which turns a 0-d array into a 1-d one
    return np.array(value.real, order="C"), np.array(value.imag, order="C")


def pack(value: np.ndarray) -> np.ndarray:
    """z of shape S -> real array of shape S + [2] holding (Re z, Im z).

    A view of `value`'s memory when it is a C-contiguous complex array, else of a
    C-ordered complex copy (a real array packs as (r, 0)). The unit axis goes on
    first so that 0-d arrays can take the view too.
    """
    value = np.asarray(value, dtype=np.result_type(value, np.complex64), order="C")
    return value.reshape(*value.shape, 1).view(real_of(value.dtype))


def unpack(packed: np.ndarray) -> np.ndarray:
    """Real array of shape S + [2] -> z of shape S, z = [..., 0] + i [..., 1]."""
    dtype = np.result_type(packed.dtype, np.complex64)
    return (packed[..., 0] + 1j * packed[..., 1]).astype(dtype)
