"""Reductions of complex values, axes as attributes (old opsets) or inputs (new)."""

import numpy as np
import pytest
from helpers import (
    SQUARE,
    Ops,
    assert_rewrites,
    at,
    crandn,
    init,
    make_model,
    on_parts,
    packed_or_parts,
    single,
    vi,
)
from onnx import helper

OPS = [
    "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
    "ReduceLogSum", "ReduceLogSumExp",
]  # fmt: skip

HYPOT = Ops(Abs=2, Max=2, Min=2, Div=1, Mul=2, Add=1, Sqrt=1)
"""|z| = m sqrt(1 + (n / m)^2), m = max(|zr|, |zi|), n = min(|zr|, |zi|)."""
LOG = Ops(Abs=4, Add=4, Atan=1, Cast=3, Div=4, IsInf=3, Less=3, Log=2, Max=4, Min=5,
          Mul=5, Sqrt=1, Sub=5, Where=2, Or=1)  # fmt: skip
"""log z = log|z| + i arg z (as the Log rule emits it)."""
ON_PARTS = {
    # sum z^2, per part
    "ReduceSumSquare": SQUARE + Ops(ReduceSum=2),
    # sum |z|, a real value typed complex: (sum, 0)
    "ReduceL1": HYPOT + Ops(IsInf=2, Or=1, Where=1, ReduceSum=1, Shape=1, ConstantOfShape=1),
    # sqrt(sum z^2)
    "ReduceL2": Ops(Abs=4, Add=6, Cast=2, Div=6, IsInf=2, Less=2, Max=4, Min=6, Mul=7,
                    ReduceSum=2, Sqrt=3, Sub=3, Where=4, Equal=2, Or=1, IsNaN=1, And=1),
    # log(sum z)
    "ReduceLogSum": LOG + Ops(ReduceSum=2),
    # m + log(sum e^(z - m)), m the lexicographic maximum (two more ReduceMax
    # without keepdims)
    "ReduceLogSumExp": Ops(Abs=4, Add=7, Atan=1, Cast=6, Cos=1, Div=4, Equal=3, Exp=1,
                           IsInf=4, Less=5, Log=2, Max=4, Min=5, Mul=11, ReduceMax=2,
                           ReduceSum=2, Sin=1, Sqrt=1, Sub=11, Where=5, And=3, IsNaN=2,
                           Or=1),
}  # fmt: skip
"""What each reduction that cannot run on the packed tensor emits on the parts of a
complex64 value (complex128: `at`). ReduceSum and ReduceMean act on both parts alike."""


def _prod_ops(shape, axes, keepdims) -> Ops:
    """ReduceProd as numpy takes it (`rules.reduce.prod`): each part's reduced axes moved
    first and flattened to [L, R] rows, (1 + 0i) times each row in turn (written out up to
    8 rows, else a Loop), then reshaped back."""
    rank = len(shape)
    axes = sorted({a % rank for a in axes}) if axes else list(range(rank))
    kept = [a for a in range(rank) if a not in axes]
    count = int(np.prod([shape[a] for a in axes]))
    ops = Ops(Flatten=2, Reshape=2) + (
        Ops(Transpose=2) if axes + kept != list(range(rank)) else Ops()
    )
    if count <= 8:  # (1 + 0i) z_0 is two products and two sums; each z_k after, six
        ops += Ops(Gather=2 * count, Mul=2, Sub=1, Add=1) + Ops(
            Mul=4 * (count - 1), Sub=count - 1, Add=count - 1
        )
    else:  # (1, 0) as wide as a row, the row count, the Loop
        ops += Ops(Shape=2, Slice=1, ConstantOfShape=1, Add=1, Gather=1, Loop=1)
    return ops + (Ops(Unsqueeze=2) if keepdims else Ops())


def _reduce_ops(op, cdtype, keepdims, pair=False, axes=None):
    if op == "ReduceProd":
        return at(cdtype, on_parts(_prod_ops((2, 3, 4), axes, keepdims), pair))
    if op not in ON_PARTS:
        return packed_or_parts(op, pair)
    ops = ON_PARTS[op]
    if op == "ReduceLogSumExp" and not keepdims:
        ops = ops + Ops(ReduceMax=2)
    return at(cdtype, on_parts(ops, pair))


def _reduce(op, cdtype, opset, axes, keepdims, pair=False):
    input_axes = opset >= (13 if op == "ReduceSum" else 18)
    attrs = {"keepdims": keepdims}
    inputs, inits = ["a"], []
    if axes is not None and input_axes:
        inputs, inits = ["a", "axes"], [init("axes", np.array(axes, np.int64))]
    elif axes is not None:
        attrs["axes"] = axes
    return single(op, cdtype, opset, shape=(2, 3, 4), attrs=attrs, inputs=inputs, inits=inits,
                  pair=pair)  # fmt: skip


@pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])
@pytest.mark.parametrize("axes", [None, [1], [-1], [0, -1]])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("op", OPS)
# opset 11 differs from 13 in ReduceSum's axes alone (an attribute, not an input)
@pytest.mark.parametrize(
    "opset", [pytest.param(11, marks=pytest.mark.slow), 13, 18], ids=lambda o: f"opset{o}"
)
def test_reduce(op, opset, cdtype, axes, keepdims, pair):
    feeds = None
    if pair and op == "ReduceLogSumExp":
        # Without edge values: (1e20 + 1e20i)^2 overflows its imaginary part. numpy's
        # product (fused multiply-add) makes the real part -inf, whose exp is 0, and
        # a finite log-sum-exp; without it, as in onnxruntime, exp(x + inf i) is NaN.
        feeds = {"a": crandn(np.random.default_rng(0), (2, 3, 4), cdtype)}
    ops = _reduce_ops(op, cdtype, keepdims, pair, axes)
    assert_rewrites(_reduce(op, cdtype, opset, axes, keepdims, pair), ops=ops, feeds=feeds)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean"])
def test_sum_and_mean_are_one_node_on_the_packed_tensor(op, cdtype):
    assert_rewrites(_reduce(op, cdtype, 18, [0, -1], 0), ops={op: 1})


def test_prod_is_a_complex_product(cdtype):
    # Channel-wise it would be prod(re) + i prod(im); here (1+i)(1-i)(2i) = 4i.
    z = np.array([1 + 1j, 1 - 1j, 2j], cdtype).reshape(1, 3, 1)
    feeds = {"a": np.tile(z, (2, 1, 4))}
    ops = _reduce_ops("ReduceProd", cdtype, 0, axes=[1])
    assert_rewrites(_reduce("ReduceProd", cdtype, 18, [1], 0), ops=ops, feeds=feeds)


def test_runtime_axes(cdtype):
    m = single(
        "ReduceSum", cdtype, 18, shape=(2, 3, 4), inputs=["a", "ax"],
        extra=[vi("ax", np.int64, [1])],
    )  # fmt: skip
    # Only the rank is known (keepdims); a graph output needs at least that.
    m.graph.output[0].CopyFrom(vi("y", cdtype, ["d0", "d1", "d2"]))
    feeds = {"a": np.ones((2, 3, 4), cdtype) * (1 + 2j), "ax": np.array([-2], np.int64)}
    # Negative axes moved past the packed last axis at run time: Where(ax < 0, ax - 1, ax)
    assert_rewrites(m, ops=Ops(Less=1, Sub=1, Where=1, ReduceSum=1), feeds=feeds)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_ordering_reductions_are_refused(op):
    from onnx_decomplex import UnsupportedError, decomplex

    with pytest.raises(UnsupportedError, match="complex numbers are not ordered"):
        decomplex(single(op, np.complex64))


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_softmax(op, opset, cdtype, axis):
    if opset < 13 and axis == 0:
        pytest.skip("before opset 13, an inner axis is refused (tested below)")
    m = single(op, cdtype, opset, shape=(2, 2), attrs={} if axis is None else {"axis": axis})
    # e^(z - max zr) over the sum of the same: e^zr (cos zi, sin zi) and a complex division.
    ops = Ops(Add=2, Cos=1, Div=2, Equal=2, Exp=1, Mul=10, ReduceMax=1, ReduceSum=2,
              Sin=1, Sub=5, Where=3, IsInf=1, And=3, IsNaN=2, Less=2, Cast=2)  # fmt: skip
    if op == "LogSoftmax":  # z - m - log(sum e^(z - m)), m lexicographic, arg wrapped
        ops = Ops(Abs=4, Add=5, Atan=1, Cast=6, Ceil=1, Cos=1, Div=5, Equal=3, Exp=1,
                  IsInf=4, Less=5, Log=2, Max=4, Min=5, Mul=12, ReduceMax=2, ReduceSum=2,
                  Sin=1, Sqrt=1, Sub=15, Where=5, And=3, IsNaN=2, Or=1)  # fmt: skip
    ops = at(cdtype, on_parts(ops))
    assert_rewrites(m, ops=ops)
    # A real part of 95: without the shift, e^z overflows float32.
    big = np.array([[95, 1], [-3, 3]]) + 1j * np.array([[2, -1], [0.5, 3]])
    assert_rewrites(m, ops=ops, feeds={"a": big.astype(cdtype)})


def test_log_softmax_of_one_element_is_exactly_zero(cdtype):
    """The reference's e^(z - m) is exactly 1 there, so its log is 0 and the Reciprocal of
    it is NaN; shifted by the real part alone, the rewrite's is log|e^(i Im z)| = 1e-8."""
    nodes = [helper.make_node("LogSoftmax", ["a"], ["l"], axis=0),
             helper.make_node("Reciprocal", ["l"], ["y"])]  # fmt: skip
    m = make_model(nodes, [vi("a", cdtype, [1])], [vi("y", cdtype, [1])])
    # LogSoftmax's ops, and the Reciprocal's two bounded divisions and its signed zeros
    # beside an infinite part.
    ops = Ops(Abs=8, Add=6, Atan=1, Cast=6, Ceil=1, Cos=1, Div=13, Equal=3, Exp=1,
              IsInf=6, Less=5, Log=2, Max=9, Min=8, Mul=16, Neg=2, ReduceMax=2,
              ReduceSum=2, Sin=1, Sqrt=1, Sub=15, Where=8, And=3, IsNaN=2, Or=1, Xor=1)  # fmt: skip
    assert_rewrites(
        m, ops=at(cdtype, on_parts(ops)), feeds={"a": np.array([0.652 + 0.4735j], cdtype)}
    )


def test_old_softmax_over_an_inner_axis_is_refused():
    from onnx_decomplex import DecomplexError, decomplex

    with pytest.raises(DecomplexError, match="before opset 13 .* last axis only"):
        decomplex(single("Softmax", np.complex64, 11, shape=(2, 3, 4), attrs={"axis": 1}))


def test_log_sum_exp_takes_the_reference_branch(cdtype):
    # The reference adds back the lexicographic maximum: Im y is arg(sum) + 5, past pi.
    z = np.array([[1 + 5j, 0.5 + 4j, 1 - 6j], [-2 + 3j, -2 + 3.5j, -7j]], cdtype)
    m = single("ReduceLogSumExp", cdtype, 18, shape=(2, 3), attrs={"keepdims": 0},
               inputs=["a", "axes"], inits=[init("axes", np.array([1], np.int64))])  # fmt: skip
    assert_rewrites(m, ops=_reduce_ops("ReduceLogSumExp", cdtype, 0), feeds={"a": z})


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean"])
def test_sum_and_mean_of_a_rank_0_value_are_the_value(op, cdtype):
    m = single(op, cdtype, 18, shape=(), attrs={"keepdims": 0})
    assert_rewrites(m, ops={"Identity": 1}, feeds={"a": np.array(1.5 - 2j, cdtype)})


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])
@pytest.mark.parametrize("axes", [None, [0], [0, -1]], ids=str)
def test_mean_over_a_zero_size_axis_is_nan(cdtype, axes, pair):
    # numpy's mean of nothing is NaN; onnxruntime's ReduceMean alone gives 0.
    attrs = {"keepdims": 0}
    inputs, inits = ["a"], []
    if axes is not None:
        inputs, inits = ["a", "axes"], [init("axes", np.array(axes, np.int64))]
    m = single("ReduceMean", cdtype, 18, shape=(0, 3), attrs=attrs, inputs=inputs,
               inits=inits, pair=pair)  # fmt: skip
    # ReduceSum over the count, which is 0 (so NaN) for no elements.
    ops = on_parts({"ReduceSum": 2, "Div": 2}, pair) if pair else Ops(ReduceSum=1, Div=1)
    assert_rewrites(m, ops=ops, feeds={"a": np.zeros((0, 3), cdtype)})


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("shape, axis", [((0, 3), 1), ((2, 0, 3), 0), ((0, 3), 0)])
def test_reduce_prod_of_an_empty_tensor(cdtype, shape, axis, keepdims):
    """An empty result is an empty constant (the output an Identity of it); a product
    over an empty axis is 1 + 0i, as numpy's: ones of a row's shape."""
    node = helper.make_node("ReduceProd", ["a", "axes"], ["y"], keepdims=keepdims)
    m = make_model([node], [vi("a", cdtype, list(shape))], [vi("y", cdtype, None)],
                   [init("axes", np.array([axis]))])  # fmt: skip
    ones = Ops(Split=1, Squeeze=1, Flatten=1, Shape=1, Slice=1, ConstantOfShape=1, Add=1,
               Reshape=2, Unsqueeze=2 + 2 * keepdims, Concat=1)  # fmt: skip
    ops = (
        ones if shape[axis] == 0 and 0 not in shape[:axis] + shape[axis + 1 :] else Ops(Identity=1)
    )
    assert_rewrites(m, ops=ops, feeds={"a": np.zeros(shape, cdtype)})


@pytest.mark.parametrize("rows", [0, 3])
def test_reduce_mean_over_a_dim_known_at_run_time(cdtype, rows):
    """The sum over the count the input has: NaN where it has no rows, as numpy's mean of
    nothing, where onnxruntime's ReduceMean gives 0."""
    node = helper.make_node("ReduceMean", ["a", "axes"], ["y"], keepdims=0)
    m = make_model([node], [vi("a", cdtype, ["n", 2])], [vi("y", cdtype, None)],
                   [init("axes", np.array([0]))])  # fmt: skip
    ops = Ops(ReduceSum=1, Shape=1, Gather=1, ReduceProd=1, Cast=1, Div=1)
    z = (np.arange(rows * 2) + 1j).reshape(rows, 2).astype(cdtype)
    assert_rewrites(m, ops=ops, feeds={"a": z})
