"""Complex arithmetic on (re, im) pairs.

Each helper takes `ops`, anything with the elementwise functions of `NUMPY`
below: the rewrite context (which emits nodes, folding numpy constants) or `NUMPY`
itself (which computes directly, and lets the tests check every formula against
numpy's complex arithmetic). Where `ops.reciprocal_divides` is set (the openvino
target), Div runs as a times 1 / b, and no divisor is subnormal (`_Divisor`). Helpers
hold the math only, no graph plumbing.
Helpers that need a literal (pi, 0.5) take the real `dtype` of the parts, so that
emitted constants match the graph's precision.

Only what ONNX has is used: there is no Atan2 (`angle` is built from Atan), no
expm1 or log1p (`log1p` corrects the rounding of 1 + u; sinh near 0 is tanh times
cosh), and no comparison beyond Less and Equal is needed.

The helpers match numpy at special values: signed zeros pick the side of a branch
cut, and moduli are scaled by the larger part before squaring, so that nothing
overflows or underflows where the result does not. Where a choice depends on each
element (a sign, which part is larger), it is made by arithmetic on 0.0/1.0 flags:
onnxruntime's Where runs many times slower than arithmetic on such masks.
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
    sign=np.sign,
    max=np.maximum,
    min=np.minimum,
    sqrt=np.sqrt,
    exp=np.exp,
    log=np.log,
    ceil=np.ceil,
    floor=np.floor,
    sin=np.sin,
    cos=np.cos,
    small_sin=np.sin,
    small_cos=np.cos,
    sinh=np.sinh,
    cosh=np.cosh,
    tanh=np.tanh,
    asinh=np.arcsinh,
    atan=np.arctan,
    cast=lambda x, dtype: np.asarray(x).astype(dtype),
    atan_unit=np.arctan,
    less=np.less,
    equal=np.equal,
    and_=np.logical_and,
    or_=np.logical_or,
    isinf=np.isinf,
    isnan=np.isnan,
    xor=np.logical_xor,
    where=np.where,
    split_halves=lambda x, axis: np.split(x, 2, axis),
    concat=lambda parts, axis: np.concatenate(parts, axis),
)


def _c(value, dtype):
    return np.asarray(value, dtype=dtype)


def _real(ops, dtype):
    """`dtype`, or when None the precision `ops` computes in (float64 for NUMPY)."""
    return np.dtype(dtype or getattr(ops, "work_dtype", None) or np.float64)


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


def square(ops, a):
    """(ar + i ai)^2 = (|ar| - |ai|)(|ar| + |ai|) + i 2 ar ai"""
    # Three products as `mul` takes four, and no cancellation in the real part, which is
    # exactly +0 where |ar| = |ai|, as numpy's ar^2 - ai^2 is: that is inf - inf once the
    # squares overflow, and (ar - ai)(ar + ai) is -0 at ar = -ai = -1, where the log of
    # the square would turn by pi.
    ar, ai = a
    mr, mi = ops.abs(ar), ops.abs(ai)
    re = ops.mul(ops.sub(mr, mi), ops.add(mr, mi))
    return re, ops.mul(ops.add(ar, ar), ai)


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
    """|a|^2 = ar^2 + ai^2 (which overflows or underflows where |a| would not)"""
    ar, ai = a
    return ops.add(ops.mul(ar, ar), ops.mul(ai, ai))


class _Divisor:
    """den >= 0 as a divisor, in the form `ops` divides right:

    - where Div is a true division (`reciprocal_divides` off), den itself, clamped to
      the smallest subnormal where a ratio's 0 / 0 must be 0;
    - where Div is x (1 / y) (OpenVINO, docs/openvino.md), whose 1 / y overflows below
      1 / max float, den = d r0 with d = max(den, tiny) normal and r0 = min(den, tiny) /
      tiny exact (tiny is a power of two): dividing by d, then by r0 (or, for a ratio,
      by r = max(r0, eps), which is r0 but where den = 0), divides by den exactly and
      never by a subnormal.
    """

    def __init__(self, ops, den, dtype):
        finfo = np.finfo(dtype)
        self.ops, self.den = ops, den
        self.scaled = getattr(ops, "reciprocal_divides", False)
        if self.scaled:
            tiny = _c(finfo.tiny, dtype)
            self.d = ops.max(den, tiny)
            self.r0 = ops.mul(ops.min(den, tiny), _c(1 / finfo.tiny, dtype))
            self.r = ops.max(self.r0, _c(finfo.eps, dtype))
        else:
            self.safe = ops.max(den, _c(finfo.smallest_subnormal, dtype))

    def ratio(self, num):
        """num / den for |num| <= den: 0 / 0 is 0"""
        if not self.scaled:
            return self.ops.div(num, self.safe)
        return self.ops.div(self.ops.div(num, self.d), self.r)

    def quotient(self, x):
        """x / den, x / 0 as IEEE division gives it"""
        if not self.scaled:
            return self.ops.div(x, self.den)
        return self.ops.div(self.ops.div(x, self.d), self.r0)


def _over_big(ops, small, big, dtype, divisor=None):
    """small / big for 0 <= small <= big, as min(small, max float) / big (`_Divisor`,
    big's where the caller has it): 0 / 0 is 0 and inf / inf is 0."""
    divisor = divisor or _Divisor(ops, big, dtype)
    return divisor.ratio(ops.min(small, _c(np.finfo(dtype).max, dtype)))


def hypot_root(ops, big, small, dtype, divisor=None):
    """sqrt(1 + q^2), q = small / big (`_over_big`): hypot(big, small) over big, in
    [1, sqrt 2], which a caller scales as it can (a logarithm adds log big instead)."""
    q = _over_big(ops, small, big, dtype, divisor)
    return ops.sqrt(ops.add(ops.mul(q, q), _c(1, dtype)))


def hypot_of(ops, big, small, dtype):
    """sqrt(big^2 + small^2) for 0 <= small <= big, scaled by big before squaring:
    big sqrt(1 + q^2), q = small / big (`hypot_root`): hypot(inf, inf) = inf."""
    return ops.mul(big, hypot_root(ops, big, small, dtype))


def hypot(ops, x, y, dtype):
    """sqrt(x^2 + y^2), with no overflow or underflow where the result has none"""
    ax, ay = ops.abs(x), ops.abs(y)
    return hypot_of(ops, ops.max(ax, ay), ops.min(ax, ay), dtype)


def absolute(ops, a, dtype=None, widen: bool = False):
    """|a| = hypot(ar, ai), and inf where a part is infinite, the other NaN or not, as
    numpy's (the larger part is NaN there: onnxruntime's Max gives NaN beside a NaN).

    With `widen`, for a runtime whose float64 is IEEE double (onnxruntime's), a float32
    a's modulus is sqrt(ar^2 + ai^2) in float64, where no float32 square overflows or
    underflows, rounded once to float32: 7 nodes where the scaled hypot takes 11."""
    dtype = _real(ops, dtype)
    ar, ai = a
    infinite = ops.or_(ops.isinf(ar), ops.isinf(ai))
    if widen and np.dtype(dtype) == np.float32:
        wide = [ops.cast(part, np.float64) for part in a]
        modulus = ops.cast(ops.sqrt(abs2(ops, wide)), np.float32)
    else:
        modulus = hypot(ops, ar, ai, dtype)
    return ops.where(infinite, _c(np.inf, dtype), modulus)


def absolute_squared(ops, a, dtype=None):
    """|a|^2 = ar^2 + ai^2, and inf where a part is infinite, the other NaN or not, as
    numpy's hypot(ar, ai) squared. The square of |a| overflows and underflows where the
    sum of the parts' squares does (to within float rounding): no scaling is needed."""
    dtype = _real(ops, dtype)
    ar, ai = a
    infinite = ops.or_(ops.isinf(ar), ops.isinf(ai))
    return ops.where(infinite, _c(np.inf, dtype), abs2(ops, a))


def signbit(ops, x, dtype):
    """x < 0, or x = -0: min(x, 1/x) < 0, since 1/-0 = -inf"""
    return ops.less(ops.min(x, ops.div(_c(1, dtype), x)), _c(0, dtype))


def div_bounded(ops, a, b):
    """a / b = ((ar br + ai bi) + i (ai br - ar bi)) / (br^2 + bi^2), for a b whose
    squared modulus neither overflows nor underflows"""
    (ar, ai), (br, bi) = a, b
    den = abs2(ops, b)
    re = ops.add(ops.mul(ar, br), ops.mul(ai, bi))
    im = ops.sub(ops.mul(ai, br), ops.mul(ar, bi))
    return ops.div(re, den), ops.div(im, den)


def _flag(ops, cond, dtype):
    """cond as 0.0 or 1.0, to blend finite values arithmetically: Where with a mask
    that changes from element to element runs many times slower than arithmetic."""
    return ops.cast(cond, dtype)


def _minus_where(ops, cond, dtype):
    """-1 where cond, else 1: 1 - 2 cond"""
    return ops.sub(_c(1, dtype), ops.mul(_flag(ops, cond, dtype), _c(2, dtype)))


def _pick(ops, flag, yes, no):
    """no + flag (yes - no): yes where flag is 1, no where it is 0 (finite yes and no)"""
    return ops.add(no, ops.mul(flag, ops.sub(yes, no)))


def _scaled_divisor(ops, b, dtype, zero_divides: bool):
    """b / s with s = max(|br|, |bi|), and a function that divides by s (`_Divisor`): the
    divisor scaled to modulus in [1, 2], so that nothing squared overflows or underflows.
    With `zero_divides`, b = 0 scales to 1 and s is +0, so that a / 0 = (ar / +0, ai / +0)
    as numpy's division gives; without, to 0 (0 / 0 is NaN, as numpy's reciprocal gives)."""
    br, bi = b
    s = ops.max(ops.abs(br), ops.abs(bi))
    divisor = _Divisor(ops, s, dtype)
    cr, ci = divisor.ratio(br), divisor.ratio(bi)
    if zero_divides:
        cr = ops.add(cr, _flag(ops, ops.equal(s, _c(0, dtype)), dtype))
    return (cr, ci), divisor.quotient


def _larger_sign(ops, c, dtype):
    """The sign of c's larger part, for c = b / s (`_scaled_divisor`): one of cr, ci is
    +-1 and the other in [-1, 1], so |cr + ci| is 0 or at least the ulp just below 1,
    with the larger one's sign; cr tie, a quarter of that ulp, breaks the tie cr = -ci
    as numpy does (by br), and turns no other sign. 1 for b = 0, scaled to 1."""
    cr, ci = c
    tie = _c(np.finfo(dtype).epsneg / 4, dtype)
    return ops.sign(ops.add(ops.add(cr, ci), ops.mul(cr, tie)))


def div(ops, a, b, dtype=None):
    """a / b = a conj(u) / (|u|^2 t) / s, with s = max(|br|, |bi|), t the sign of b's
    larger part and u = t b / s, whose larger part is 1: Smith's division, numpy's. No
    overflow or underflow where the quotient has none, a / 0 as numpy's (ar / 0, ai / 0),
    and a numerator that cancels to 0 signed as numpy's: with c = b / s instead of u,
    z / z would be 1 + 0i where numpy's is 1 - 0i (z's larger part a negative imaginary
    one), which a branch cut after it turns by pi. t is exact (+-1, and 1 for b = 0), and
    so is dividing by |u|^2 t."""
    dtype = _real(ops, dtype)
    (ar, ai), ((cr, ci), over_s) = a, _scaled_divisor(ops, b, dtype, zero_divides=True)
    t = _larger_sign(ops, (cr, ci), dtype)
    ur, ui = ops.mul(cr, t), ops.mul(ci, t)
    den = ops.mul(abs2(ops, (ur, ui)), t)
    re = ops.add(ops.mul(ar, ur), ops.mul(ai, ui))
    im = ops.sub(ops.mul(ai, ur), ops.mul(ar, ui))
    return over_s(ops.div(re, den)), over_s(ops.div(im, den))


def div_real(ops, a, r):
    """(ar + i ai) / r = ar / r + i ai / r"""
    ar, ai = a
    return ops.div(ar, r), ops.div(ai, r)


def rdiv_real(ops, r, b, dtype=None):
    """r / (br + i bi) = (r + 0i) / b"""
    dtype = _real(ops, dtype)
    return div(ops, (r, _c(0, dtype)), b, dtype)


def _zero_sign(ops, x, dtype):
    """A finite factor that is negative, and not zero, where x's sign bit is set (-0 and
    -inf too), and >= 0 elsewhere: max(min(x, 1 / x), -1). A Where picks it without
    losing a sign (`Ops.where`), and times 0 it is x's signed zero."""
    return ops.max(ops.min(x, ops.div(_c(1, dtype), x)), _c(-1, dtype))


def _signed_zero_where(ops, cond, x, result, dtype, keep=None):
    """result, but x's signed zero where cond (`_zero_sign`): the Where picks a factor
    that is not -0, a second one (`keep`, where the caller has it) 0 or 1, and their
    product is exact"""
    picked = ops.where(cond, _zero_sign(ops, x, dtype), result)
    keep = ops.where(cond, _c(0, dtype), _c(1, dtype)) if keep is None else keep
    return ops.mul(picked, keep)


def _finite(ops, x):
    """x is neither infinite nor NaN: x - x = 0"""
    return ops.equal(ops.sub(x, x), _c(0, _real(ops, None)))


def reciprocal(ops, a, dtype=None):
    """1 / a = conj(c) / |c|^2 / s, c = a / s (see `div`); 1 / 0 is NaN, as numpy's
    reciprocal gives, and where one part is infinite and the other not NaN, numpy's
    signed zeros (conj(a) times +0)"""
    dtype = _real(ops, dtype)
    (cr, ci), over_s = _scaled_divisor(ops, a, dtype, zero_divides=False)
    # |c|^2 then s, one division each: their product overflows where s is near the
    # largest float, and the reciprocal is only tiny.
    den = abs2(ops, (cr, ci))
    re, im = over_s(ops.div(cr, den)), ops.neg(over_s(ops.div(ci, den)))
    # One part infinite, the other finite (Max and Min give NaN beside a NaN, which
    # leaves the formula's NaN; so does inf with inf).
    x, y = ops.abs(a[0]), ops.abs(a[1])
    infinite = ops.xor(ops.isinf(ops.max(x, y)), ops.isinf(ops.min(x, y)))
    keep = ops.where(infinite, _c(0, dtype), _c(1, dtype))
    return (_signed_zero_where(ops, infinite, a[0], re, dtype, keep),
            _signed_zero_where(ops, infinite, ops.neg(a[1]), im, dtype, keep))  # fmt: skip


def angle(ops, a, dtype):
    """arg(ar + i ai) = atan2(ai, ar), in [-pi, pi], from one Atan of a ratio in [0, 1]:

    t = atan(min(|ar|, |ai|) / max(|ar|, |ai|)); pi/2 - t where |ai| > |ar|; pi minus
    that where ar is negative (or -0); negated where ai is. Signed zeros count as numpy
    counts them: arg(+0 +- 0i) = +-0, arg(-0 +- 0i) = +-pi, arg(-x - 0i) = -pi.
    The corrections are arithmetic on finite values; one Where makes arg(inf + inf i)
    pi/4, as numpy's.
    """
    ar, ai = a
    x, y = ops.abs(ar), ops.abs(ai)
    big, small = ops.max(x, y), ops.min(x, y)
    # Both parts infinite: the ratio is 1, as atan2(inf, inf) = pi/4.
    ratio = _Divisor(ops, big, dtype).ratio(small)
    t = ops.atan_unit(ops.where(ops.isinf(small), _c(1, dtype), ratio))
    t = _pick(ops, _flag(ops, ops.less(x, y), dtype), ops.sub(_c(np.pi / 2, dtype), t), t)
    t = _pick(ops, _flag(ops, signbit(ops, ar, dtype), dtype), ops.sub(_c(np.pi, dtype), t), t)
    sign = _minus_where(ops, signbit(ops, ai, dtype), dtype)
    return ops.mul(t, sign)


def wrap_angle(ops, t, dtype):
    """t - 2 pi ceil((t - pi) / (2 pi)): the same angle, in (-pi, pi]"""
    turns = ops.ceil(ops.div(ops.sub(t, _c(np.pi, dtype)), _c(2 * np.pi, dtype)))
    return ops.sub(t, ops.mul(turns, _c(2 * np.pi, dtype)))


def sinh_by_exp(ops, x):
    """sinh x = (e^x - e^-x) / 2, for real x (which cancels near 0: see sinh_by_tanh)"""
    e, inv = ops.exp(x), ops.exp(ops.neg(x))
    return ops.mul(ops.sub(e, inv), np.asarray(0.5, np.float64))


def sinh_by_tanh(ops, x):
    """sinh x = tanh x cosh x, for real x: exact to a few ulp near 0, where
    (e^x - e^-x) / 2 cancels"""
    return ops.mul(ops.tanh(x), cosh_by_exp(ops, x))


def log1p(ops, u, dtype):
    """log(1 + u) for real u >= 0, with w = 1 + u and d = w - 1 (exact):
    log w + (u - d) / w, which corrects the rounding of 1 + u; log1p(inf) = inf"""
    w = ops.add(u, _c(1, dtype))
    fixed = ops.add(ops.log(w), ops.div(ops.sub(u, ops.sub(w, _c(1, dtype))), w))
    return ops.where(ops.isinf(u), u, fixed)


def asinh_by_log(ops, x, dtype):
    """asinh x = sign(x) log1p(|x| + |x| / (r + sqrt(r^2 + 1))), r = 1 / |x|, for real x:
    the same as log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), with no x^2 to overflow. The
    sign is x's sign bit (from 1 / x, as `signbit`): asinh(-0) = -0, which picks the
    side of a cut where the result feeds another function."""
    ax = ops.abs(x)
    inverse = ops.div(_c(1, dtype), x)
    r = ops.abs(inverse)
    root = ops.add(r, ops.sqrt(ops.add(ops.mul(r, r), _c(1, dtype))))
    y = log1p(ops, ops.add(ax, ops.div(ax, root)), dtype)
    negative = ops.less(ops.min(x, inverse), _c(0, dtype))
    return ops.mul(y, _minus_where(ops, negative, dtype))


def cosh_by_exp(ops, x):
    """cosh x = (e^x + e^-x) / 2, for real x"""
    e, inv = ops.exp(x), ops.exp(ops.neg(x))
    return ops.mul(ops.add(e, inv), np.asarray(0.5, np.float64))


HALF_PI_PARTS = (1.5707963267341256, 6.077100506506192e-11)
"""pi/2 as P1 + P2 to 86 bits, P1 of 33 bits, so that k P1 is exact for |k| < 2^20."""

REDUCED_UP_TO = 1e5
"""The largest |x| whose float64 sine or cosine `QuarterTurns` takes near a zero."""

NEAR_ZERO = 1e-4
"""Where onnxruntime's float64 sine or cosine is below this, `QuarterTurns` gives
+-r (1 - r^2 / 6) instead: its absolute error of 1e-16 is a relative 1e-12 there, and
the next term, r^5 / 120, is 1e-22 of r."""


class QuarterTurns:
    """x = k pi/2 + r, |r| <= pi/4 (Cody and Waite's reduction by a two-part pi/2), for
    float64 sin x and cos x with an error relative to the result near their zeros:
    onnxruntime 1.32's vectorized float64 Sin and Cos have an absolute error near 1e-16
    there (cos(fl(pi/2)) is -0, where numpy's is 6.1e-17), which a sign, a cast to bool
    or a pole (tan(fl(pi/2)) = 1.6e16) turns into a wrong result. Near a zero of sin x
    (k even) it is +-sin r, near one of cos x (k odd) -+sin r, sin r = r (1 - r^2 / 6) to
    float64's precision there (`NEAR_ZERO`); elsewhere onnxruntime's own, from the same
    Sin and Cos nodes. The sign is that of cos(k pi/2) or sin(k pi/2): + for k mod 4 in
    {0, 1}, - for {2, 3}."""

    def __init__(self, ops, x):
        self.ops, self.x = ops, x

        def one(v):
            return _c(v, np.float64)

        def floor_half(v):
            return ops.floor(ops.mul(v, one(0.5)))

        # k to the nearest integer, +0 near 0, so that r keeps the sign of x = -0
        k = ops.floor(ops.add(ops.mul(x, one(2 / np.pi)), one(0.5)))
        p1, p2 = HALF_PI_PARTS
        r = ops.sub(ops.sub(x, ops.mul(k, one(p1))), ops.mul(k, one(p2)))
        sin_r = ops.mul(r, ops.sub(one(1), ops.mul(ops.mul(r, r), one(1 / 6))))  # r of -0 too
        # +-1 by k mod 4: floor(k / 2) - 2 floor(k / 4) is 0 or 1
        half = floor_half(k)
        flip = ops.sub(half, ops.mul(floor_half(half), one(2)))
        self.near = ops.mul(sin_r, ops.sub(one(1), ops.mul(flip, one(2))))
        self.far = ops.less(one(REDUCED_UP_TO), ops.abs(x))

    def _pick(self, plain, near):
        ops = self.ops
        # onnxruntime's value in the Where's second place: it is no zero where picked
        kept = ops.or_(ops.less(_c(NEAR_ZERO, np.float64), ops.abs(plain)), self.far)
        return ops.where(kept, plain, near)

    def sin(self):
        return self._pick(self.ops.small_sin(self.x), self.near)

    def cos(self):
        return self._pick(self.ops.small_cos(self.x), self.ops.neg(self.near))


def atan_unit_refined(ops, t, atan32):
    """atan t in float64 for |t| <= 1, from a float32 start y = atan32(t), corrected
    once: with s, c = sin y, cos y and r = s - t c, the start's error e = y - atan t has
    tan e = c r / (1 - s r) exactly. r is about float32's error, 5e-8, so
    e = c r (1 + s r) leaves out terms in r^3, below 1e-21: what is left is r's
    rounding, an ulp or two of y, as after any number of Newton steps. (One Newton step,
    e = c r, leaves c s r^2, 40 ulps at atan 0.5, which tan(acos 0), at tan's pole,
    turns into a wrong sign.)"""
    y = ops.cast(atan32(ops.cast(t, np.float32)), np.float64)
    s, c = ops.small_sin(y), ops.small_cos(y)
    r = ops.sub(s, ops.mul(t, c))
    e = ops.mul(ops.mul(c, r), ops.add(_c(1, np.float64), ops.mul(s, r)))
    return ops.sub(y, e)


def atan_refined(ops, x, atan32):
    """atan x in float64 (`atan_unit_refined`), the steps taken on |t| <= 1 (t = x, or
    1/x with atan x = +-pi/2 - atan(1/x)), where their error stays near 1e-16.
    """
    one = np.asarray(1, np.float64)
    big = ops.less(one, ops.abs(x))
    t = ops.where(big, ops.div(one, ops.where(big, x, one)), x)
    y = atan_unit_refined(ops, t, atan32)
    half_pi = ops.where(ops.less(x, np.asarray(0, np.float64)), _c(-np.pi / 2, np.float64),
                        _c(np.pi / 2, np.float64))  # fmt: skip
    return ops.where(big, ops.sub(half_pi, y), y)


def _unit_sign(ops, x, dtype):
    """-1 where x < 0, else 1 (NaN and -0 too): a factor with x's sign that is never
    zero, so that a Where can pick it (`Ops.where`) and a product by it keeps the other
    factor's zero, signed"""
    return _minus_where(ops, ops.less(x, _c(0, dtype)), dtype)


def times_sin(ops, m, t, sin_t=None):
    """m sin t, but where t = +-0 and m is infinite or NaN, sign(m) sin t (with sign(NaN)
    = 1): a part that is zero stays zero there, of the product's sign, as numpy keeps
    it (e^(inf + 0i) = inf + 0i, cosh(-inf + 0i) = inf - 0i, e^(NaN - 0i) = NaN - 0i).
    The Where picks the factor, not the product: a -0 it picks may lose its sign
    (`Ops.where`). `sin_t`: sin t where the caller has it."""
    dtype = t.dtype if isinstance(t, np.ndarray) else _real(ops, None)
    wild = ops.isnan(ops.sub(m, m))  # m infinite or NaN
    at_zero = ops.and_(ops.equal(t, _c(0, dtype)), wild)
    factor = ops.where(at_zero, _unit_sign(ops, m, dtype), m)
    return ops.mul(factor, ops.sin(t) if sin_t is None else sin_t)


def _cis(ops, t):
    """(cos t, sin t, wild): wild where t is infinite or NaN, where both are NaN"""
    c = ops.cos(t)
    return c, ops.sin(t), ops.isnan(c)


def exp(ops, a):
    """e^(ar + i ai) = e^ar cos ai + i e^ar sin ai; where ai is infinite or NaN,
    numpy's e^(inf + i ai) = inf + NaN i and e^(-inf + i ai) = 0 +- 0i (ai's sign, +
    for NaN)"""
    dtype = _real(ops, None)
    ar, ai = a
    m = ops.exp(ar)
    c, s, wild = _cis(ops, ai)
    c = ops.where(ops.and_(wild, ops.isinf(ar)), _c(1, dtype), c)
    s = ops.where(ops.and_(wild, ops.equal(ar, _c(-np.inf, dtype))), _unit_sign(ops, ai, dtype), s)
    return ops.mul(m, c), times_sin(ops, m, ai, s)


def log(ops, a, dtype):
    """log(a) = log m + log sqrt(1 + q^2) + i arg(a), m = max(|ar|, |ai|) (`hypot_root`):
    |a| may overflow where its logarithm is modest"""
    ar, ai = a
    x, y = ops.abs(ar), ops.abs(ai)
    big, small = ops.max(x, y), ops.min(x, y)
    modulus = ops.add(ops.log(big), ops.log(hypot_root(ops, big, small, dtype)))
    # |a| = inf where a part is infinite, the other NaN or not: log(inf + NaN i) = inf + NaN i
    infinite = ops.or_(ops.isinf(ar), ops.isinf(ai))
    return ops.where(infinite, _c(np.inf, dtype), modulus), angle(ops, a, dtype)


def sqrt(ops, a, dtype):
    """Principal square root, with no cancellation: t = sqrt((|a| + |ar|) / 2);
    ar >= 0: t + i ai / (2t);  ar < 0: |ai| / (2t) + i t sign(ai);  sqrt(0) = 0.
    The sign of a zero ai picks the side of the cut: sqrt(-4 - 0i) = -2i.
    """
    ar, ai = a
    x, y = ops.abs(ar), ops.abs(ai)
    # t = sqrt(m) sqrt((sqrt(1 + q^2) + x / m) / 2), m = max(x, y): |a| + |ar| may
    # overflow where t does not.
    big = ops.max(x, y)
    divisor = _Divisor(ops, big, dtype)
    inner = ops.add(hypot_root(ops, big, ops.min(x, y), dtype, divisor),
                    _over_big(ops, x, big, dtype, divisor))  # fmt: skip
    t = ops.mul(ops.sqrt(big), ops.sqrt(ops.mul(inner, _c(0.5, dtype))))
    # u = |ai| / (2t) <= t; t = 0 only where a = 0, and then u = 0 / tiny = 0. t is
    # never subnormal (it is at least the root of the least one), so the clamp to the
    # least normal divides by no subnormal, which OpenVINO's Div cannot (`_Divisor`).
    tiny = _c(np.finfo(dtype).tiny, dtype)
    u = ops.div(y, ops.max(ops.add(t, t), tiny))
    u = ops.where(ops.isinf(y), y, u)  # sqrt(x +- inf i) = inf +- inf i, as numpy
    # ar >= 0: (t, u); ar < 0: (u, t). As u <= t, min and max choose, through
    # g = (1 - n) / n and h = n / (1 - n), which are inf or 0 for n = 0 or 1: exact
    # where t is infinite, and with no Where.
    n = _flag(ops, ops.less(ar, _c(0, dtype)), dtype)
    m = ops.sub(_c(1, dtype), n)
    re = ops.min(t, ops.add(u, ops.div(m, n)))
    im = ops.max(u, ops.min(t, ops.div(n, m)))
    sign = _minus_where(ops, signbit(ops, ai, dtype), dtype)
    im = ops.mul(im, sign)
    # numpy's sqrt(x +- inf i) = inf +- inf i for every x, NaN too; sqrt(inf + NaN i) =
    # inf + NaN i and sqrt(-inf + NaN i) = NaN + inf i.
    inf, infinite = _c(np.inf, dtype), ops.isinf(ai)
    re = ops.where(ops.or_(infinite, ops.equal(ar, inf)), inf, re)
    im = ops.where(ops.and_(ops.equal(ar, _c(-np.inf, dtype)), ops.isnan(ai)), inf, im)
    return re, ops.where(infinite, ai, im)


def sin(ops, a):
    """sin(a) = -i sinh(i a), as numpy's (and C99's) special values follow, but
    sin(x +- inf i) = NaN + inf i where x is infinite or NaN"""
    return mul_neg_i(ops, sinh(ops, mul_i(ops, a), infinite_sign=-1))


def cos(ops, a):
    """cos(a) = cosh(i a)"""
    return cosh(ops, mul_i(ops, a))


def sinh(ops, a, infinite_sign: int = 1):
    """sinh(ar + i ai) = sinh ar cos ai + i cosh ar sin ai; where ai is infinite or
    NaN, numpy's sinh(+-0 + i ai) = +-0 + NaN i and sinh(+-inf + i ai) = inf + NaN i
    (-inf with `infinite_sign` -1)"""
    dtype = _real(ops, None)
    ar, ai = a
    c, s, wild = _cis(ops, ai)
    edge = ops.and_(wild, ops.or_(ops.equal(ar, _c(0, dtype)), ops.isinf(ar)))
    # +-1 of sinh ar's sign (of -sinh ar's with infinite_sign -1; 1 at +-0): times it,
    # sinh(+-inf) is inf (-inf), and +-0 keeps its sign.
    flips = ops.less(ar, _c(0, dtype)) if infinite_sign > 0 else ops.less(_c(0, dtype), ar)
    c = ops.where(edge, _minus_where(ops, flips, dtype), c)
    return ops.mul(ops.sinh(ar), c), times_sin(ops, ops.cosh(ar), ai, s)


def cosh(ops, a):
    """cosh(ar + i ai) = cosh ar cos ai + i sinh ar sin ai; where ai is infinite or
    NaN, numpy's cosh(+-inf + i ai) = inf + NaN i and cosh(+-0 + i ai) = NaN + 0i"""
    dtype = _real(ops, None)
    ar, ai = a
    c, s, wild = _cis(ops, ai)
    c = ops.where(ops.and_(wild, ops.isinf(ar)), _c(1, dtype), c)
    im = times_sin(ops, ops.sinh(ar), ai, s)
    zero = _c(0, dtype)
    return ops.mul(ops.cosh(ar), c), ops.where(ops.and_(wild, ops.equal(ar, zero)), zero, im)


def tanh(ops, a):
    """tanh(ar + i ai) = (sinh ar cosh ar + i sin ai cos ai) / (sinh^2 ar + cos^2 ai),
    divided through by c^2 = cosh^2 ar:

        (tanh ar + i (sin ai / c)(cos ai / c)) / (tanh^2 ar + (cos ai / c)^2)

    The denominator is a sum of squares, so nothing cancels near a pole (where
    cosh 2ar + cos 2ai would lose digits), and it stays finite where cosh overflows
    (tanh -> +-1). numpy's special values: tanh(+-inf + i ai) = +-1 +- 0i (ai's sign, +
    for NaN) where ai is infinite or NaN too, tanh(+-0 + i ai) = +-0 + NaN i there, and
    tanh(NaN +- 0i) = NaN +- 0i."""
    dtype = _real(ops, None)
    ar, ai = a
    one = _c(1, dtype)
    c = ops.cosh(ar)
    t = ops.tanh(ar)
    cy, sy, wild = _cis(ops, ai)
    far = ops.and_(wild, ops.isinf(ar))
    cy, sy = ops.where(far, one, cy), ops.where(far, _unit_sign(ops, ai, dtype), sy)
    nan_zero = ops.and_(ops.isnan(ar), ops.equal(ai, _c(0, dtype)))
    c = ops.where(nan_zero, one, c)
    cos_c, sin_c = ops.div(cy, c), ops.div(sy, c)
    den = ops.add(ops.mul(t, t), ops.mul(cos_c, cos_c))
    unit = ops.or_(nan_zero, ops.and_(wild, ops.equal(ar, _c(0, dtype))))
    den = ops.where(unit, one, den)
    return ops.div(t, den), ops.div(ops.mul(sin_c, cos_c), den)


def tan(ops, a):
    """tan(a) = -i tanh(i a)"""
    return mul_neg_i(ops, tanh(ops, mul_i(ops, a)))


def mul_i(ops, a):
    """i (ar + i ai) = -ai + i ar"""
    ar, ai = a
    return ops.neg(ai), ar


def mul_neg_i(ops, a):
    """-i (ar + i ai) = ai - i ar"""
    ar, ai = a
    return ai, ops.neg(ar)


def _sqrt_one_minus_plus(ops, a, dtype):
    """sqrt(1 - a) and sqrt(1 + a), with 1 - a = (1 - ar) - i ai keeping the sign of a
    zero ai flipped, so that each lands on the side of its cut that a's does"""
    ar, ai = a
    one = _c(1, dtype)
    return sqrt(ops, (ops.sub(one, ar), ops.neg(ai)), dtype), sqrt(
        ops, (ops.add(ar, one), ai), dtype
    )


def _halving(ops, a, dtype):
    """(h, b): h = 1/2 and b = 1 where max(|ar|, |ai|) is so large that a product of two
    square roots of a's size may overflow, else h = 1 and b = 0. Products of factors
    each times h are the products times h^2, exactly."""
    ar, ai = a
    big = ops.max(ops.abs(ar), ops.abs(ai))
    b = _flag(ops, ops.less(_c(2.0 ** (np.finfo(dtype).maxexp - 4), dtype), big), dtype)
    return ops.sub(_c(1, dtype), ops.mul(b, _c(0.5, dtype))), b


def asinh_grown(ops, p, b, dtype):
    """asinh(p g), g = 4 where b is 1 (else 1), with no overflow of p g: where |p g| is
    past 2^27, asinh is sign(p) log(2 |p| g) to within 2^-54, as log|p| + log 2g."""
    g = ops.add(_c(1, dtype), ops.mul(b, _c(3, dtype)))
    x = ops.mul(p, g)
    far = ops.add(ops.log(ops.abs(p)), ops.log(ops.add(g, g)))
    far = ops.mul(far, _unit_sign(ops, p, dtype))
    return ops.where(ops.less(_c(2.0**27, dtype), ops.abs(x)), far, ops.asinh(x))


def asin(ops, a, dtype):
    """Kahan's asin: with s = sqrt(1 - a), t = sqrt(1 + a),
    asin(a) = atan2(ar, Re(s t)) + i asinh(Im(conj(s) t)).
    Each factor is a square root, so nothing overflows before the result does, and
    signed zeros pick the sides of the cuts as numpy does. Where a is near the largest
    float, s and t are halved (`_halving`): the angle takes ar / 4 with Re(s t) / 4, and
    the asinh its argument 4 times over (`asinh_grown`)."""
    (sr, si), (tr, ti) = _sqrt_one_minus_plus(ops, a, dtype)
    h, b = _halving(ops, a, dtype)
    sr, si, tr, ti = (ops.mul(v, h) for v in (sr, si, tr, ti))
    ar = ops.mul(ops.mul(a[0], h), h)
    re = angle(ops, (ops.sub(ops.mul(sr, tr), ops.mul(si, ti)), ar), dtype)
    im = asinh_grown(ops, ops.sub(ops.mul(sr, ti), ops.mul(si, tr)), b, dtype)
    # numpy's asin(+-inf + iy) = +-pi/2 +- inf i for finite y, asin(+-inf + NaN i) =
    # NaN + inf i, asin(+-0 + NaN i) = +-0 + NaN i
    x, y = a
    x_inf, y_nan = ops.isinf(x), ops.isnan(y)
    half_pi = ops.mul(_unit_sign(ops, x, dtype), _c(np.pi / 2, dtype))
    re = ops.where(ops.and_(x_inf, _finite(ops, y)), half_pi, re)
    re = _signed_zero_where(ops, ops.and_(ops.equal(x, _c(0, dtype)), y_nan), x, re, dtype)
    return re, ops.where(ops.and_(x_inf, y_nan), _c(np.inf, dtype), im)


def acos(ops, a, dtype):
    """Kahan's acos: with s = sqrt(1 - a), t = sqrt(1 + a),
    acos(a) = 2 atan2(Re s, Re t) + i asinh(Im(conj(t) s)); near the largest float, s
    and t halved as in `asin`"""
    (sr, si), (tr, ti) = _sqrt_one_minus_plus(ops, a, dtype)
    re = ops.mul(angle(ops, (tr, sr), dtype), _c(2, dtype))
    h, b = _halving(ops, a, dtype)
    sr, si, tr, ti = (ops.mul(v, h) for v in (sr, si, tr, ti))
    im = asinh_grown(ops, ops.sub(ops.mul(tr, si), ops.mul(ti, sr)), b, dtype)
    # numpy's acos(+-0 + NaN i) = pi/2 + NaN i, acos(+-inf + NaN i) = NaN - inf i,
    # acos(NaN +- inf i) = NaN -+ inf i (C99's Annex G)
    x, y = a
    x_inf, y_inf, y_nan = ops.isinf(x), ops.isinf(y), ops.isnan(y)
    re = ops.where(ops.and_(ops.equal(x, _c(0, dtype)), y_nan), _c(np.pi / 2, dtype), re)
    re = ops.where(ops.and_(ops.isnan(x), y_inf), _c(np.nan, dtype), re)
    # acos(+-inf +- inf i) = pi/4 (3 pi/4 for -inf) -+ inf i, where 2 atan2 gives pi/2
    re = ops.where(ops.and_(x_inf, y_inf), _quarter_turns(ops, x, dtype), re)
    return re, ops.where(ops.and_(x_inf, y_nan), _c(-np.inf, dtype), im)


def _quarter_turns(ops, x, dtype):
    """pi/4 where x > 0, 3 pi/4 where x < 0: the angle of (x, inf)"""
    return ops.where(ops.less(x, _c(0, dtype)), _c(3 * np.pi / 4, dtype), _c(np.pi / 4, dtype))


def acosh(ops, a, dtype):
    """Kahan's acosh: with s = sqrt(a - 1), t = sqrt(a + 1),
    acosh(a) = asinh(Re(conj(s) t)) + 2i atan2(Im s, Re t); near the largest float, s
    and t halved as in `asin`"""
    ar, ai = a
    one = _c(1, dtype)
    sr, si = sqrt(ops, (ops.sub(ar, one), ai), dtype)
    tr, ti = sqrt(ops, (ops.add(ar, one), ai), dtype)
    im = ops.mul(angle(ops, (tr, si), dtype), _c(2, dtype))
    h, b = _halving(ops, a, dtype)
    sr, si, tr, ti = (ops.mul(v, h) for v in (sr, si, tr, ti))
    re = asinh_grown(ops, ops.add(ops.mul(sr, tr), ops.mul(si, ti)), b, dtype)
    # numpy's acosh(+-0 + NaN i) = NaN + pi/2 i, acosh(+-inf + NaN i) = inf + NaN i,
    # acosh(NaN +- inf i) = inf + NaN i
    x_inf, y_inf, y_nan = ops.isinf(ar), ops.isinf(ai), ops.isnan(ai)
    re = ops.where(ops.and_(x_inf, y_nan), _c(np.inf, dtype), re)
    im = ops.where(ops.and_(ops.equal(ar, _c(0, dtype)), y_nan), _c(np.pi / 2, dtype), im)
    im = ops.where(ops.and_(ops.isnan(ar), y_inf), _c(np.nan, dtype), im)
    # acosh(+-inf +- inf i) = inf +- pi/4 i (3 pi/4 for -inf), where 2 atan2 gives pi/2
    corner = ops.mul(_quarter_turns(ops, ar, dtype), _unit_sign(ops, ai, dtype))
    return re, ops.where(ops.and_(x_inf, y_inf), corner, im)


def asinh(ops, a, dtype):
    """asinh(a) = -i asin(i a)"""
    return mul_neg_i(ops, asin(ops, mul_i(ops, a), dtype))


def atanh(ops, a, dtype):
    """Kahan's atanh, odd in ar: with x = |ar|, y = ai,
    Re = sign(ar) log1p(4x / |1 - x - iy|^2) / 4,  Im = atan2(2y, (1 - x)(1 + x) - y^2) / 2,
    sign(ar) from ar's sign bit (atanh(-0 + iy) has Re -0, the side of atan's cut).
    The quotient is (x / h)(4 / h) with h = hypot(1 - x, y), which cannot overflow; near
    0 the log1p keeps Re ~ ar, where log|1 + a| - log|1 - a| would cancel."""
    ar, ai = a
    one = _c(1, dtype)
    x = ops.abs(ar)
    h = hypot(ops, ops.sub(one, x), ai, dtype)
    q = ops.mul(ops.div(x, h), ops.div(_c(4, dtype), h))  # 4x itself may overflow
    # q overflows where a is within a subnormal of +-1 (atanh(1 - 1e-39i) has Re 44.7):
    # there log1p q = log q = log x + log 4 - 2 log h.
    far = ops.isinf(q)
    q = ops.where(ops.isinf(x), _c(0, dtype), q)  # inf / inf: atanh(+-inf + iy) has Re +-0
    log_q = ops.sub(ops.add(ops.log(x), _c(np.log(4), dtype)), ops.mul(ops.log(h), _c(2, dtype)))
    re = ops.mul(ops.where(far, log_q, log1p(ops, q, dtype)), _c(0.25, dtype))
    re = ops.mul(re, _minus_where(ops, signbit(ops, ar, dtype), dtype))  # atanh(-0) = -0
    # The angle of (cross, 2y) is that of both scaled by s^2, s a power of two small
    # enough where x or |y| is so large that their squares overflow (1 elsewhere):
    # ((s - x s)(s + x s) - (y s)^2, 2 (y s) s).
    finfo = np.finfo(dtype)
    big = _flag(ops, ops.less(_c(2.0 ** (finfo.maxexp // 2 - 2), dtype),
                              ops.max(x, ops.abs(ai))), dtype)  # fmt: skip
    small = _c(2.0 ** -(finfo.maxexp // 2 + 2), dtype)
    s = ops.add(ops.mul(big, small), ops.sub(one, big))
    xs, ys = ops.mul(x, s), ops.mul(ai, s)
    cross = ops.sub(ops.mul(ops.sub(s, xs), ops.add(s, xs)), ops.mul(ys, ys))
    im = ops.mul(angle(ops, (cross, ops.mul(ops.add(ys, ys), s)), dtype), _c(0.5, dtype))
    # An infinite y: the angle of (-inf, +-inf) would be 3 pi / 4, where atanh's
    # imaginary part is +-pi / 2 (atan(+-inf + iy) = +-pi / 2, as numpy's).
    quarter = ops.mul(ops.sign(ai), _c(np.pi / 2, dtype))
    im = ops.where(ops.isinf(ai), quarter, im)
    # numpy's atanh(+-0 + NaN i) = +-0 + NaN i and atanh(NaN +- inf i) = 0 +- pi/2 i
    re = _signed_zero_where(ops, ops.and_(ops.equal(ar, _c(0, dtype)), ops.isnan(ai)), ar, re,
                            dtype)  # fmt: skip
    return ops.where(ops.and_(ops.isnan(ar), ops.isinf(ai)), _c(0, dtype), re), im


def atan(ops, a, dtype):
    """atan(a) = -i atanh(i a), but numpy's atan(+-inf + NaN i) = +-pi/2 + 0i"""
    re, im = mul_neg_i(ops, atanh(ops, mul_i(ops, a), dtype))
    ar, ai = a
    return re, ops.where(ops.and_(ops.isinf(ar), ops.isnan(ai)), _c(0, dtype), im)


def plus_zero(ops, x, dtype):
    """x + 0: x itself, but +0 for -0, as numpy's sum of a complex value and a real one
    gives the imaginary part (1 + e^z has Im = Im e^z + 0). A Where, not an Add of 0,
    which onnxruntime's optimizer removes."""
    zero = _c(0, dtype)
    return ops.where(ops.equal(x, zero), zero, x)


def sigmoid(ops, a, dtype):
    """sigmoid(a) = 1 / (1 + e^-a) where Re a > 0, else e^a / (1 + e^a), as the
    reference computes it: e = e^-a or e^a is at most 1 in modulus, so neither form
    overflows and the division needs no scaling (but where ai is NaN: there numpy's
    sigmoid(inf + NaN i) is NaN, from e^a)."""
    ar, ai = a
    one = _c(1, dtype)
    # Re a > 0, and ai not NaN: numpy's order of complex values has no NaN above 0.
    positive = ops.and_(ops.less(_c(0, dtype), ar), ops.equal(ai, ai))
    pos = _flag(ops, positive, dtype)
    sign = ops.sub(one, ops.mul(pos, _c(2, dtype)))
    er, ei = exp(ops, (ops.mul(ar, sign), ops.mul(ai, sign)))
    # The numerator is 1 + 0i where Re a > 0: its +0 sets the sign of a zero result.
    num = (ops.where(positive, one, er), ops.where(positive, _c(0, dtype), ei))
    return div_bounded(ops, num, (ops.add(er, one), plus_zero(ops, ei, dtype)))


def sign(ops, a, dtype):
    """sign(a) = a / |a|, and sign(0) = 0 (numpy 2)"""
    ar, ai = a
    x, y = ops.abs(ar), ops.abs(ai)
    big = ops.max(x, y)
    # a / |a| = (a / m) / sqrt(1 + q^2), m = max(|ar|, |ai|): |a| may overflow. a / m is
    # 0 where m = 0 (`_Divisor.ratio`), and sign(0) is 0.
    divisor = _Divisor(ops, big, dtype)
    root = hypot_root(ops, big, ops.min(x, y), dtype, divisor)
    # numpy's zero parts are +0 where a is 0 or has an infinite part: sign(-0 + 0i) = 0,
    # and sign(-3 + inf i) has real part +0; beside a finite non-zero part they keep their
    # sign. Where one part is infinite and the other not, the result is that part's sign
    # alone (sign(NaN + inf i) = i), where the quotient has inf / inf.
    zero = _c(0, dtype)
    unsigned = ops.or_(ops.equal(big, zero), ops.isinf(big))
    re, im = (ops.div(divisor.ratio(part), root) for part in (ar, ai))
    re, im = (ops.where(ops.and_(unsigned, ops.equal(p, zero)), zero, p) for p in (re, im))
    x_inf, y_inf = ops.isinf(ar), ops.isinf(ai)
    both = ops.and_(x_inf, y_inf)
    only_x, only_y = ops.xor(x_inf, both), ops.xor(y_inf, both)
    re = ops.where(only_x, ops.sign(ar), ops.where(only_y, zero, re))
    return re, ops.where(only_y, ops.sign(ai), ops.where(only_x, zero, im))


def one_times(ops, a, dtype):
    """(1 + 0i) a = (ar - 0 ai) + i (ai + 0 ar): a itself, but NaN beside an infinite
    part, as numpy's product by its starting 1 gives"""
    ar, ai = a
    zero = _c(0, dtype)
    return ops.sub(ar, ops.mul(ai, zero)), ops.add(ai, ops.mul(ar, zero))


def _squarings(ops, a, n: int, dtype):
    """a^n for n >= 1 by repeated squaring, from 1 as numpy starts"""
    result, base = None, a
    while n:
        if n & 1:
            result = one_times(ops, base, dtype) if result is None else mul(ops, result, base)
        n >>= 1
        if n:
            base = mul(ops, base, base)
    return result


def pow_int(ops, a, n: int, dtype):
    """a^n as numpy computes it: a, a a, a (a a) for n = 1, 2, 3; repeated squaring
    from 1 for larger n; 1 / (that for -n) by `div` for n < 0, NaN at
    a = 0; a^0 = 1"""
    if n == 0:
        # a^0 = 1 in a's shape, even for inf and nan, as numpy and Pow give.
        one = ops.pow(a[0], _c(0, dtype))
        return one, ops.sub(one, one)
    if n < 0:
        one = (_c(1, dtype), _c(0, dtype))
        re, im = div(ops, one, _squarings(ops, a, -n, dtype), dtype)
        at_zero = ops.and_(ops.equal(a[0], _c(0, dtype)), ops.equal(a[1], _c(0, dtype)))
        nan = _c(np.nan, dtype)
        return ops.where(at_zero, nan, re), ops.where(at_zero, nan, im)
    if n <= 3:
        return a if n == 1 else mul(ops, a, a) if n == 2 else mul(ops, a, mul(ops, a, a))
    return _squarings(ops, a, n, dtype)


def pow_real(ops, a, p, dtype):
    """a^p = |a|^p (cos p arg a + i sin p arg a), p real"""
    m = ops.pow(absolute(ops, a, dtype), p)
    theta = ops.mul(angle(ops, a, dtype), p)
    re, im = ops.mul(m, ops.cos(theta)), times_sin(ops, m, theta)
    # numpy's 0^p: 0 for p > 0, 1 for p = 0, NaN otherwise (there is no one complex 0).
    zero, one = _c(0, dtype), _c(1, dtype)
    at_zero = ops.and_(ops.equal(a[0], zero), ops.equal(a[1], zero))
    nan_or_one = ops.where(ops.equal(p, zero), one, _c(np.nan, dtype))
    re = ops.where(at_zero, ops.where(ops.less(zero, p), zero, nan_or_one), re)
    im = ops.where(at_zero, ops.where(ops.less(zero, p), zero, ops.sub(nan_or_one, one)), im)
    return re, im


def pow_complex(ops, a, b, dtype):
    """a^b = exp(b log a), principal branch; as numpy, 0^b = 0 for Re b > 0 and a^0 = 1"""
    re, im = exp(ops, mul(ops, b, log(ops, a, dtype)))
    zero, one = _c(0, dtype), _c(1, dtype)
    # 0^b is 0 where Re b > 0, else NaN, as numpy's (exp(b log 0) may be inf + NaN i).
    at_zero = ops.and_(ops.equal(a[0], zero), ops.equal(a[1], zero))
    at_zero_value = ops.where(ops.less(zero, b[0]), zero, _c(np.nan, dtype))
    re = ops.where(at_zero, at_zero_value, re)
    im = ops.where(at_zero, at_zero_value, im)
    unit = ops.and_(ops.equal(b[0], zero), ops.equal(b[1], zero))
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


def join(re, im, dtype) -> np.ndarray:
    """re + i im as a complex array of `dtype`, part by part: re + 1j * im would turn an
    infinite part times 0j into a NaN in the other part."""
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtype)
    out.real, out.imag = re, im
    return out


def pack(value, dtype=None) -> np.ndarray:
    """A complex array of shape S as a real array of shape S + [2] holding (real,
    imaginary) on its last axis.

    Any layout is taken (transposed, sliced, non-contiguous): the result is a view of
    `value`'s memory when that is a C-contiguous complex array (for complex64, the
    memory of `value.view(np.float32)`), else of a C-ordered complex copy. A real
    array packs as (r, 0). The unit axis goes on first so that 0-d arrays can take
    the view too.

    Args:
        value: The array (or anything `np.asarray` reads).
        dtype: The packed float type; by default float32 for complex64, float64 for
            complex128 (a complex128 model narrowed for TensorRT takes float32).
    """
    value = np.asarray(value, dtype=np.result_type(value, np.complex64), order="C")
    packed = value.reshape(*value.shape, 1).view(real_of(value.dtype))
    return packed if dtype is None else packed.astype(dtype, copy=False)


def unpack(packed, dtype=None) -> np.ndarray:
    """A real array of shape S + [2] as the complex array of shape S it packs:
    z = [..., 0] + i [..., 1].

    Args:
        packed: The array; its last axis must be 2 long.
        dtype: The complex type; by default complex64 for float32 (and narrower),
            complex128 for float64.
    """
    packed = np.asarray(packed)
    if packed.ndim == 0 or packed.shape[-1] != 2:
        raise ValueError(f"a packed array ends in an axis of 2, not one of shape {packed.shape}")
    return join(packed[..., 0], packed[..., 1], dtype or np.result_type(packed.dtype, np.complex64))
