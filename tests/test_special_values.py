"""Every complex math rule at special values, against the reference evaluator.

The values are signed zeros, real and imaginary values beyond the branch points
(each with a zero part of either sign, which picks the side of a branch cut),
magnitudes whose squares overflow or underflow (1e20 and 1e-30 in float32,
1e200 and 1e-200 in float64), and ordinary values. Results are compared with a
tolerance relative to each expected modulus and no absolute slack, so that a
lost tiny part fails; infinities and NaNs must match part by part.
"""

import numpy as np
import onnx
import pytest
from helpers import init, make_model, run_ort, single, vi
from onnx import helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.ops.op_reduce_log_sum_exp import compute_log_sum_exp

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.cmath import pack, unpack
from onnx_decomplex.dtypes import onnx_of
from onnx_decomplex.reference import evaluator
from onnx_decomplex.rules.unary import FUNCTIONS

RTOL = {np.complex64: 1e-4, np.complex128: 1e-9}
DOUBLE = onnx.TensorProto.DOUBLE


def _c(re: float, im: float) -> complex:
    return complex(re, im)


def special_values(cdtype, largest: bool = False) -> np.ndarray:
    """The values every rule is checked at, for one precision; with `largest`, also
    magnitudes near its largest float, where 2|z| and |z|^2 overflow."""
    zeros = [_c(0.0, 0.0), _c(-0.0, 0.0), _c(0.0, -0.0), _c(-0.0, -0.0)]
    axes = []
    for v in (1.5, 2.0, 7.0):
        for zero in (0.0, -0.0):
            axes += [_c(v, zero), _c(-v, zero), _c(zero, v), _c(zero, -v)]
    ordinary = [0.5 - 0.5j, -1.5 + 0.7j, 0.3 + 2j, -0.2 - 0.9j, 1 + 0j, -1 + 0j, 1j, -1j]
    ordinary += [0.7 + 1e-3j, 3 - 4j]
    magnitudes = [1e20, 1e-30]
    if cdtype == np.complex128:
        magnitudes += [1e200, 1e-200]
    if largest:
        magnitudes.append(0.9 * float(np.finfo(cdtype).max))
    scaled = []
    for m in magnitudes:
        for re, im in ((1, 1), (-1, 1), (1, -1), (-1, -1), (1, 0), (0, 1), (-1, 0), (0, -1)):
            scaled.append(_c(m * re, m * im))
        scaled += [_c(m, 0.5 * m)]
        if 3 * m < float(np.finfo(cdtype).max):
            scaled.append(_c(3 * m, -m))
    return np.array(zeros + axes + ordinary + scaled, dtype=cdtype)


def check(
    model: onnx.ModelProto, feeds: dict, cdtype, expected=None, target: str = "onnx"
) -> onnx.ModelProto:
    """The three checks every rule test makes, with the tolerance of `cdtype`; against
    `expected` where the reference evaluator cannot run the model itself."""
    out, report = decomplex(model, target=target)
    assert report.has_complex
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    with np.errstate(all="ignore"):
        result = validate(model, out, feeds, atol=0.0, rtol=RTOL[cdtype], expected=expected)
    assert result.outputs, "nothing was compared"
    assert result.passed, result.outputs
    return out


@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_function(op, cdtype):
    values = special_values(cdtype)
    check(single(op, cdtype, shape=[len(values)]), {"a": values}, cdtype)


@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_function_near_the_largest_float(op):
    """Sqrt, Log, Sign, Reciprocal, the inverse functions and the rest scale where |z|,
    2|z|, |z|^2 or a product of square roots of z would overflow. In complex64 only:
    the float64 run is what judges where the reference itself overflows, and complex128
    has no wider one."""
    values = special_values(np.complex64, largest=True)
    check(single(op, np.complex64, shape=[len(values)]), {"a": values}, np.complex64)


@pytest.mark.parametrize("op", ["Tan", "Tanh"])
def test_near_a_pole(op, cdtype):
    # Where tan (tanh) nearly divides by zero, cos 2x + cosh 2y would lose digits to
    # cancellation: 1e-5 is 80 float32 ulps, and the reference itself is within a few.
    near = np.array([1.5424 + 0.0066j, 1.5708 + 1e-3j, -1.57 + 0.01j, 4.712 - 0.002j])
    values = (near if op == "Tan" else near * 1j).astype(cdtype)
    out = decomplex(single(op, cdtype, shape=[len(values)]))[0]
    with np.errstate(all="ignore"):
        result = validate(single(op, cdtype, shape=[len(values)]), out, {"a": values},
                          atol=0.0, rtol=1e-5)  # fmt: skip
    assert result.passed, result.outputs


def test_round(cdtype):
    values = special_values(cdtype)
    check(single("Round", cdtype, shape=[len(values)]), {"a": values * 3.3}, cdtype)


def _real_of(cdtype):
    return np.float32 if cdtype == np.complex64 else np.float64


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_abs(cdtype, target):
    """On onnxruntime, a float32 modulus sums its squares in float64 (`cmath.absolute`):
    numpy's from float32's largest values to its smallest, and inf beside a NaN."""
    values = special_values(cdtype, largest=True)
    m = single("Abs", cdtype, shape=[len(values)], out_dtype=_real_of(cdtype))
    out = check(m, {"a": values}, cdtype, target=target)
    widened = [n for n in out.graph.node if n.op_type == "Cast" and n.attribute[0].i == DOUBLE]
    assert len(widened) == (2 if target == "onnxruntime" and cdtype == np.complex64 else 0)
    # The verdict leaves out what an infinite input reaches: compared here one by one.
    values = _infinities_and_nans(cdtype)
    m = single("Abs", cdtype, shape=[len(values)], out_dtype=_real_of(cdtype))
    out, _ = decomplex(m, target=target)
    (got,) = run_ort(out, {"a": values.view(values.real.dtype).reshape(-1, 2)})
    np.testing.assert_allclose(got, np.abs(values), rtol=RTOL[cdtype])


def test_abs_of_a_pair(cdtype):
    # Mul(a, a) makes a value that exists as a pair; |a^2| = |a|^2.
    values = special_values(cdtype)
    values = values[np.abs(values) < 1e10]
    m = single("Abs", cdtype, shape=[len(values)], out_dtype=_real_of(cdtype), pair=True)
    check(m, {"a": values}, cdtype)


def test_a_quotient_that_cancels_to_zero_takes_numpys_sign_before_a_branch_cut(cdtype):
    """z / z is 1 - 0i where z's larger part is a negative imaginary one (numpy's Smith
    division divides by it): Log keeps the -0, and Acosh of it is -pi/2 i, not +pi/2 i.
    Found by the fuzzer, as Acosh(Log(Div(x, x)))."""
    z = np.array([0.06286511 - 0.06605243j, -0.3 + 0.2j, 1 - 2j, -2 - 1j, 2 + 1j, -1 + 3j],
                 cdtype)  # fmt: skip
    m = make_model(
        [helper.make_node("Div", ["z", "z"], ["q"]), helper.make_node("Log", ["q"], ["l"]),
         helper.make_node("Acosh", ["l"], ["y"])],
        [vi("z", cdtype, [len(z)])], [vi("y", cdtype, [len(z)])],
    )  # fmt: skip
    out, _ = decomplex(m)
    (got,) = run_ort(out, {"z": pack(z)})
    with np.errstate(all="ignore"):
        expected = np.arccosh(np.log(z / z))
    np.testing.assert_allclose(unpack(got), expected, atol=1e-6)
    assert np.array_equal(np.signbit(unpack(got).imag), np.signbit(expected.imag))


@pytest.mark.parametrize("shift", [1, 5, 17])
def test_div_of_two_runtime_values(cdtype, shift):
    values = special_values(cdtype)
    m = single("Div", cdtype, shape=[len(values)], inputs=["a", "b"],
               extra=[vi("b", cdtype, [len(values)])])  # fmt: skip
    check(m, {"a": values, "b": np.roll(values, shift)}, cdtype)


# 1e-25 - 3e-25j: quotients of 1e20 overflow complex64, to signed infinities, not NaN.
@pytest.mark.parametrize(
    "c", [1.5 - 2j, 3 + 0j, -2j, 1e-3 + 4j, 1e-25 - 3e-25j, 0.25 + 0.5j], ids=str
)
@pytest.mark.parametrize("side", ["numerator", "denominator"])
def test_div_with_a_complex_constant(cdtype, c, side):
    values = special_values(cdtype)
    inputs = ["c", "a"] if side == "numerator" else ["a", "c"]
    inits = [init("c", np.array(c, cdtype))]
    check(single("Div", cdtype, shape=[len(values)], inputs=inputs, inits=inits),
          {"a": values}, cdtype)  # fmt: skip


@pytest.mark.parametrize("side", ["numerator", "denominator"])
def test_div_with_a_real_value_cast_to_complex(cdtype, side):
    values = special_values(cdtype)
    real = _real_of(cdtype)
    names = ["r", "a"] if side == "numerator" else ["a", "r"]
    nodes = [
        helper.make_node("Cast", ["x"], ["r"], to=onnx_of(cdtype)),
        helper.make_node("Div", names, ["y"]),
    ]
    inputs = [vi("a", cdtype, [len(values)]), vi("x", real, [len(values)])]
    m = make_model(nodes, inputs, [vi("y", cdtype, None)])
    x = np.roll(values.real, 3).astype(real)
    check(m, {"a": values, "x": x}, cdtype)


@pytest.mark.parametrize("p", [2, 3, -1, -2, 0.5, 2.5, -1.5], ids=str)
def test_pow_by_a_real_constant(cdtype, p):
    values = special_values(cdtype)
    if not float(p).is_integer():
        # Where |z|^p alone overflows, numpy's result hangs on what it does past the
        # range: complex64's cpowf works in double, and at z < 0, p = 2.5 the real
        # part is inf times cos(2.5 pi), about 1e-16, which onnxruntime's Cos gives as 0.
        with np.errstate(all="ignore"):
            big = np.abs(values.astype(np.complex128)) ** p > np.finfo(_real_of(cdtype)).max
        values = values[~big]
    inits = [init("p", np.array(p, _real_of(cdtype)))]
    m = single("Pow", cdtype, shape=[len(values)], inputs=["a", "p"], inits=inits)
    check(m, {"a": values}, cdtype)


@pytest.mark.parametrize("w", [0.5 + 1j, -1 + 0.25j], ids=str)
def test_pow_by_a_complex_value(cdtype, w):
    values = special_values(cdtype)
    m = single("Pow", cdtype, shape=[len(values)], inputs=["a", "w"],
               extra=[vi("w", cdtype, [1])])  # fmt: skip
    check(m, {"a": values, "w": np.array([w], cdtype)}, cdtype)


REDUCTIONS = [
    "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
    "ReduceLogSum", "ReduceLogSumExp",
]  # fmt: skip


def _reduce_node(op, x, y, opset, axes=None, keepdims=1):
    """One reduction of x over `axes` (all when None), spelled for `opset`."""
    attrs = {"keepdims": keepdims}
    if axes is None:
        return helper.make_node(op, [x], [y], **attrs), []
    if opset >= (13 if op == "ReduceSum" else 18):
        name = f"{y}_axes"
        return helper.make_node(op, [x, name], [y], **attrs), [init(name, np.array(axes))]
    return helper.make_node(op, [x], [y], axes=axes, **attrs), []


def _reduced_values(op, cdtype):
    """The special values, less those whose square overflows for the ops that square:
    numpy's complex square there gives inf - inf = NaN or, fused (FMA), -inf, which
    differs between machines."""
    values = special_values(cdtype)
    if op in ("ReduceL2", "ReduceSumSquare"):
        big = np.sqrt(np.finfo(_real_of(cdtype)).max)
        values = values[np.maximum(np.abs(values.real), np.abs(values.imag)) < big]
    return values


@pytest.mark.parametrize("keepdims", [0, pytest.param(1, marks=pytest.mark.slow)])
@pytest.mark.parametrize("opset", [pytest.param(13, marks=pytest.mark.slow), 18])
@pytest.mark.parametrize(
    "cdtype",
    [np.complex64, pytest.param(np.complex128, marks=pytest.mark.slow)],
    ids=lambda d: d.__name__,
)
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduction_of_rank_0_values(op, cdtype, opset, keepdims):
    # One rank-0 input per special value, each reduced on its own: about a second a
    # case, so the axes given as an attribute (opset 13), keepdims, which keeps no axis
    # of a rank-0 value, and complex128 run with the slow cases.
    values = _reduced_values(op, cdtype)
    nodes, inits, inputs, outputs = [], [], [], []
    for i in range(len(values)):
        node, axes = _reduce_node(op, f"a{i}", f"y{i}", opset, keepdims=keepdims)
        nodes.append(node)
        inits += axes
        inputs.append(vi(f"a{i}", cdtype, []))
        outputs.append(vi(f"y{i}", cdtype, None))
    m = make_model(nodes, inputs, outputs, inits, opset=opset)
    expected = None
    if op == "ReduceLogSumExp":
        # The reference evaluator's exp(..., out=) fails on a 0-d array: its own formula
        # is taken on each value as a 1-element array instead.
        expected = [compute_log_sum_exp(np.array([v]), (0,), True)[0][0] for v in values]
    check(m, {f"a{i}": np.array(v, cdtype) for i, v in enumerate(values)}, cdtype, expected)


@pytest.mark.parametrize("axes", [None, [1], [0, 1], [-1]], ids=str)
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduction_of_special_values(op, cdtype, axes):
    _check_reduction(op, cdtype, axes)


@pytest.mark.parametrize("axes", [None, [1]], ids=str)
def test_sum_of_moduli_on_onnxruntime(cdtype, axes):
    # Its moduli sum their squares in float64 there, as test_abs checks.
    _check_reduction("ReduceL1", cdtype, axes, "onnxruntime")


def _check_reduction(op, cdtype, axes, target="onnx"):
    # Rows pair each special value with an ordinary one.
    values = _reduced_values(op, cdtype)
    rows = np.stack([values, np.full_like(values, 0.5 - 0.25j)], axis=1)
    node, inits = _reduce_node(op, "a", "y", 18, axes=axes, keepdims=0)
    m = make_model([node], [vi("a", cdtype, list(rows.shape))], [vi("y", cdtype, None)], inits)
    check(m, {"a": rows}, cdtype, target=target)


def test_sqrt_and_log_of_infinite_parts(cdtype):
    inf = np.inf
    values = [_c(inf, 0), _c(-inf, 1), _c(1, inf), _c(-1, -inf), _c(inf, -2)]
    values += [_c(inf, inf), _c(-inf, inf), _c(inf, -inf), _c(-inf, -inf)]
    values = np.array(values, cdtype)
    for op in ("Sqrt", "Log"):
        check(single(op, cdtype, shape=[len(values)]), {"a": values}, cdtype)


def _both_sides_of_every_cut(cdtype) -> np.ndarray:
    """Every (x, y) of a grid of magnitudes on and off both axes, each part of either
    sign: the real axis past +-1 (asin, acos, atanh), the imaginary axis past +-i (asinh,
    atan), the negative real axis (log, sqrt) and the real axis below 1 (acosh), each
    approached from both sides by the sign of a zero part, up to 1e20, whose square
    overflows float32."""
    magnitudes = [0.0, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 7.0, 1e20]
    return np.array(
        [complex(sx * x, sy * y) for x in magnitudes for y in magnitudes
         for sx in (1, -1) for sy in (1, -1)],
        dtype=cdtype,
    )  # fmt: skip


@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_signed_zeros_of_each_function_match_numpy(op, cdtype):
    """Where numpy's result has a zero part, the rewrite's is the same zero, sign and
    all: the sign picks the side of a cut where the result feeds another function
    (acos(atan(x + 0i)) is the conjugate of acos(atan(x - 0i)))."""
    values = _both_sides_of_every_cut(cdtype)
    model = single(op, cdtype, shape=[len(values)])
    with np.errstate(all="ignore"):
        expected = ReferenceEvaluator(model).run(None, {"a": values})[0]
    out, _ = decomplex(model)
    real = values.real.dtype
    (got,) = run_ort(out, {"a": np.stack([values.real, values.imag], -1).astype(real)})
    for k, part in enumerate(("real", "imaginary")):
        want = expected.imag if k else expected.real
        zero = want == 0
        assert np.all(got[..., k][zero] == 0), f"{op}: a zero {part} part is not zero"
        wrong = zero & (np.signbit(got[..., k]) != np.signbit(want))
        assert not wrong.any(), f"{op} {part} part's zero sign differs at {values[wrong]}"


def _infinities_and_nans(cdtype) -> np.ndarray:
    """Every (x, y) with each part one of +-0, +-inf, NaN and a few finite values: where
    C99's Annex G gives each function its special values (numpy's follow glibc's)."""
    real = np.dtype(cdtype).char.lower()
    parts = [0.0, -0.0, 0.5, -2.0, 1e20, np.inf, -np.inf, np.nan]
    pairs = np.array([(x, y) for x in parts for y in parts], real)
    return pairs.view(cdtype)[:, 0]


@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_each_function_at_infinities_and_nans_is_numpys(op, cdtype):
    """Where a part is infinite or NaN, each part of the result is numpy's: NaN where
    numpy's is, else the same infinity or zero (sign and all), or a finite value at
    the verdict's tolerance. e^(-inf + inf i) = 0 + 0i, tanh(inf + NaN i) = 1 + 0i,
    sin(NaN + 0i) = NaN + 0i, 1 / (2 + inf i) = 0 - 0i: a NaN where numpy has a value
    would reach the outputs of a model that overflows on the way."""
    values = _infinities_and_nans(cdtype)
    model = single(op, cdtype, shape=[len(values)])
    with np.errstate(all="ignore"):
        expected = ReferenceEvaluator(model).run(None, {"a": values})[0]
    out, _ = decomplex(model)
    (got,) = run_ort(out, {"a": values.view(values.real.dtype).reshape(-1, 2)})
    for k, part in enumerate(("real", "imaginary")):
        want, have = (expected.imag if k else expected.real), got[..., k]
        close = np.isclose(have, want, rtol=RTOL[cdtype], atol=0.0, equal_nan=True)
        same = close & (np.signbit(have) == np.signbit(want)) | np.isnan(want) & np.isnan(have)
        finite = np.isfinite(want) & (want != 0) & close
        wrong = ~(same | finite)
        assert not wrong.any(), f"{op} {part} part differs at {values[wrong]}: {have[wrong]}"


@pytest.mark.parametrize("op", ["Atanh", "Atan"])
def test_atanh_within_a_subnormal_of_one(op, cdtype):
    """atanh(1 - 3e-39i) is 44.7 - 0.785i in complex64: 4x / |1 - a|^2 overflows there,
    and its logarithm does not (atan alike at +-i)."""
    real = np.finfo(np.dtype(cdtype).char.lower())
    tiny = [float(real.smallest_subnormal), 2.5 * float(real.tiny), 1e-30]
    values = np.array([complex(s, t) for s in (1, -1) for t in tiny + [-t for t in tiny]], cdtype)
    if op == "Atan":
        values = values * 1j
    check(single(op, cdtype, shape=[len(values)]), {"a": values}, cdtype)


@pytest.mark.parametrize("op", ["Sin", "Cos", "Tan", "Exp", "Sinh", "Cosh", "Tanh"])
def test_float64_functions_near_the_zeros_of_sine_and_cosine(op):
    """cos(fl(pi/2)) is 6.1e-17, and tan(fl(pi/2)) 1.6e16: in complex128, at the
    multiples of pi/2 on either axis, each result is numpy's to float64's relative
    tolerance, where onnxruntime's own float64 Cos gives -0 there."""
    turns = [k * (np.pi / 2) for k in (1, 2, 3, 4, 5, -1, -2, -7, 1001)]
    values = [complex(t, y) for t in turns for y in (0.0, -0.0, 0.5)]
    values += [complex(y, t) for t in turns for y in (0.0, 0.5)]
    values = np.array(values, np.complex128)
    check(single(op, np.complex128, shape=[len(values)]), {"a": values}, np.complex128)


def _overflowing_rows(cdtype, rows: int, width: int) -> np.ndarray:
    """Rows whose products overflow, meet 0 times inf, or pass near the largest float:
    each element a random pick of 0, +-inf, the largest floats, 1e20, the least normal,
    and ordinary values."""
    real = np.finfo(np.dtype(cdtype).char.lower())
    pool = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 0.9 * float(real.max), -0.9 * float(real.max),
            float(real.tiny), 1e20, 1e-30, np.inf, -np.inf]  # fmt: skip
    rng = np.random.default_rng(7)
    re, im = (rng.choice(pool, size=(rows, width)) for _ in range(2))
    ordinary = rng.random((rows, width)) < 0.4
    re[ordinary], im[ordinary] = (rng.standard_normal(ordinary.sum()) for _ in range(2))
    z = np.empty((rows, width), cdtype)
    z.real, z.imag = re, im
    return z


@pytest.mark.parametrize("width", [3, 20], ids=["written out", "loop"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_a_product_overflows_as_numpys(cdtype, width, dynamic):
    """ReduceProd is numpy's fold from 1 + 0i: a finite product whose modulus overflows
    (1.7e308 - 1.7e308i), an overflow later multiplied by 0 (NaN on both sides) and a
    0 before it (0) all come out as numpy's. Then Abs, Cast and Sub, as the fuzzer's
    graph has them."""
    z = _overflowing_rows(cdtype, 400, width)
    real = z.real.dtype
    nodes = [helper.make_node("ReduceProd", ["a", "axes"], ["p"], keepdims=0),
             helper.make_node("Abs", ["p"], ["m"]),
             helper.make_node("Cast", ["m"], ["c"], to=onnx_of(cdtype)),
             helper.make_node("Sub", ["k", "c"], ["d"])]  # fmt: skip
    dims = ["rows", "width"] if dynamic else list(z.shape)
    inits = [init("axes", np.array([1], np.int64)), init("k", np.array(0.5 + 0.25j, cdtype))]
    outputs = [vi("p", cdtype, None), vi("d", cdtype, None)]
    m = make_model(nodes, [vi("a", cdtype, dims)], outputs, inits)
    with np.errstate(all="ignore"):
        expected = evaluator(m).run(None, {"a": z})
    out, _ = decomplex(m)
    got = run_ort(out, {"a": np.stack([z.real, z.imag], -1).astype(real)})
    for want, have in zip(expected, got, strict=True):
        for part, w in ((have[..., 0], want.real), (have[..., 1], want.imag)):
            np.testing.assert_array_equal(np.isnan(part), np.isnan(w))
            np.testing.assert_array_equal(np.isinf(part), np.isinf(w))
            finite = np.isfinite(w)
            np.testing.assert_allclose(part[finite], w[finite], rtol=RTOL[cdtype], atol=0)


def test_the_log_of_a_sum_of_negative_zeros_is_the_references(cdtype):
    """Sum(x, x) at x = -0 + 0i: the reference's sum starts from 0, so it is +0 + 0i, whose
    log has angle 0 (not pi, which -0 + 0i would give)."""
    nodes = [helper.make_node("Sum", ["a", "a"], ["s"]), helper.make_node("Log", ["s"], ["y"])]
    m = make_model(nodes, [vi("a", cdtype, [4])], [vi("y", cdtype, [4])])
    values = np.array([complex(-0.0, 0.0), complex(-0.0, -0.0), 1 + 1j, complex(-2, -0.0)], cdtype)
    with np.errstate(all="ignore"):
        expected = evaluator(m).run(None, {"a": values})[0]
    out, _ = decomplex(m)
    (got,) = run_ort(out, {"a": np.stack([values.real, values.imag], -1)})
    np.testing.assert_allclose(got[..., 1], expected.imag, rtol=RTOL[cdtype])
    np.testing.assert_array_equal(got[..., 1] == 0, expected.imag == 0)


@pytest.mark.parametrize("op", ["Atan", "Atanh"])
def test_atan_and_atanh_at_infinite_parts(op, cdtype):
    """atan(+-inf + iy) = +-pi/2 + 0i and atanh(+-inf + iy) = +-0 + i pi/2, as numpy's,
    signed zeros included: not the 3 pi / 8 an angle of (-inf, inf) would give."""
    magnitudes = [0.0, 0.5, 2.0, 1e20, np.inf]
    values = np.array([complex(sx * x, sy * y) for x in magnitudes for y in magnitudes
                       for sx in (1, -1) for sy in (1, -1)], cdtype)  # fmt: skip
    model = single(op, cdtype, shape=[len(values)])
    with np.errstate(all="ignore"):
        expected = ReferenceEvaluator(model).run(None, {"a": values})[0]
    (got,) = run_ort(decomplex(model)[0], {"a": np.stack([values.real, values.imag], -1)})
    for k, want in enumerate((expected.real, expected.imag)):
        np.testing.assert_allclose(got[..., k], want, rtol=RTOL[cdtype], atol=0)
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[..., k][zero]), np.signbit(want[zero]))


def test_float64_angles_are_within_a_few_ulps():
    """complex128's atan corrects float32's to second order (`cmath.atan_unit_refined`):
    one Newton step left float32's error squared, 13 to 46 ulps of arg(1 + ti) from
    t = 0.5 on; what is left is the rounding, 0.6 ulps on average and 4 at most over 1M
    values of t. And tan(acos(+-0 +- 0i)) is then numpy's 1.6e16 at tan's pole, where
    acos 13 ulps off made it -3.5e14."""
    t = np.linspace(0, 1, 10001)
    z = (1 + 1j * t).astype(np.complex128)
    out, _ = decomplex(single("Log", np.complex128, shape=[len(z)]))
    (got,) = run_ort(out, {"a": np.stack([z.real, z.imag], -1)})
    ulps = np.abs(got[:, 1] - np.angle(z)) / np.spacing(np.maximum(np.angle(z), 1e-300))
    assert ulps.mean() < 1 and ulps.max() <= 8, (ulps.mean(), ulps.max())
    nodes = [helper.make_node("Acos", ["a"], ["c"]), helper.make_node("Tan", ["c"], ["y"])]
    model = make_model(nodes, [vi("a", np.complex128, [4])], [vi("y", np.complex128, [4])])
    zeros = np.array([complex(s, u) for s in (0.0, -0.0) for u in (0.0, -0.0)], np.complex128)
    out, _ = decomplex(model)
    (got,) = run_ort(out, {"a": np.stack([zeros.real, zeros.imag], -1)})
    np.testing.assert_allclose(got[:, 0], np.tan(np.arccos(zeros)).real, rtol=1e-6)
