"""Reductions of complex values, axes as attributes (old opsets) or inputs (new)."""

import numpy as np
import pytest
from helpers import assert_rewrites, crandn, init, op_types, single, vi

OPS = [
    "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
    "ReduceLogSum", "ReduceLogSumExp",
]  # fmt: skip


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
def test_reduce(op, opset, cdtype, axes, keepdims, pair):
    feeds = None
    if pair and op == "ReduceLogSumExp":
        # Without edge values: (1e20 + 1e20i)^2 overflows its imaginary part. numpy's
        # product (fused multiply-add) makes the real part -inf, whose exp is 0, and
        # a finite log-sum-exp; without it, as in onnxruntime, exp(x + inf i) is NaN.
        feeds = {"a": crandn(np.random.default_rng(0), (2, 3, 4), cdtype)}
    assert_rewrites(_reduce(op, cdtype, opset, axes, keepdims, pair), feeds=feeds)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean"])
def test_sum_and_mean_are_one_node_on_the_packed_tensor(op, cdtype):
    out = assert_rewrites(_reduce(op, cdtype, 18, [0, -1], 0))
    assert op_types(out) == [op]


def test_prod_is_a_complex_product(cdtype):
    # Channel-wise it would be prod(re) + i prod(im); here (1+i)(1-i)(2i) = 4i.
    z = np.array([1 + 1j, 1 - 1j, 2j], cdtype).reshape(1, 3, 1)
    feeds = {"a": np.tile(z, (2, 1, 4))}
    assert_rewrites(_reduce("ReduceProd", cdtype, 18, [1], 0), feeds=feeds)


def test_runtime_axes(cdtype):
    m = single(
        "ReduceSum", cdtype, 18, shape=(2, 3, 4), inputs=["a", "ax"],
        extra=[vi("ax", np.int64, [1])],
    )  # fmt: skip
    # Only the rank is known (keepdims); a graph output needs at least that.
    m.graph.output[0].CopyFrom(vi("y", cdtype, ["d0", "d1", "d2"]))
    feeds = {"a": np.ones((2, 3, 4), cdtype) * (1 + 2j), "ax": np.array([-2], np.int64)}
    assert_rewrites(m, feeds=feeds)


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
    assert_rewrites(m)
    # A real part of 95: without the shift, e^z overflows float32.
    big = np.array([[95, 1], [-3, 3]]) + 1j * np.array([[2, -1], [0.5, 3]])
    assert_rewrites(m, feeds={"a": big.astype(cdtype)})


def test_old_softmax_over_an_inner_axis_is_refused():
    from onnx_decomplex import DecomplexError, decomplex

    with pytest.raises(DecomplexError, match="before opset 13 .* last axis only"):
        decomplex(single("Softmax", np.complex64, 11, shape=(2, 3, 4), attrs={"axis": 1}))


def test_log_sum_exp_takes_the_reference_branch(cdtype):
    # The reference adds back the lexicographic maximum: Im y is arg(sum) + 5, past pi.
    z = np.array([[1 + 5j, 0.5 + 4j, 1 - 6j], [-2 + 3j, -2 + 3.5j, -7j]], cdtype)
    m = single("ReduceLogSumExp", cdtype, 18, shape=(2, 3), attrs={"keepdims": 0},
               inputs=["a", "axes"], inits=[init("axes", np.array([1], np.int64))])  # fmt: skip
    assert_rewrites(m, feeds={"a": z})


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean"])
def test_sum_and_mean_of_a_rank_0_value_are_the_value(op, cdtype):
    m = single(op, cdtype, 18, shape=(), attrs={"keepdims": 0})
    out = assert_rewrites(m, feeds={"a": np.array(1.5 - 2j, cdtype)})
    assert op_types(out) == ["Identity"]


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
    assert_rewrites(m, feeds={"a": np.zeros((0, 3), cdtype)})
