"""Gather and scatter ops on packed tensors and on pairs."""

import numpy as np
import pytest
from helpers import (
    assert_ops,
    assert_rewrites,
    crandn,
    init,
    on_parts,
    packed_or_parts,
    run_ort,
    single,
    vi,
)

from onnx_decomplex import UnsupportedError, decomplex
from onnx_decomplex.cmath import pack, unpack

PAIR = pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])


@PAIR
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_gather(opset, cdtype, axis, pair):
    m = single(
        "Gather", cdtype, opset, shape=(3, 4), attrs={"axis": axis}, inputs=["a", "i"],
        inits=[init("i", np.array([[2, 0], [1, 1]], np.int64))], pair=pair,
    )  # fmt: skip
    assert_rewrites(m, ops=packed_or_parts("Gather", pair))


@PAIR
@pytest.mark.parametrize("axis", [0, 1])
def test_gather_elements(opset, cdtype, axis, pair):
    # Indices match the data's shape except along the axis.
    idx = np.array([[0, 2, 1, 0], [2, 2, 0, 1]], np.int64)
    m = single(
        "GatherElements", cdtype, opset, shape=(3, 4), attrs={"axis": axis},
        inputs=["a", "i"], inits=[init("i", idx if axis == 0 else np.vstack([idx[0, :2] + 1] * 3))],
        pair=pair,
    )  # fmt: skip
    # The indices would need a last axis of their own on the packed tensor: per part.
    assert_rewrites(m, ops=on_parts({"GatherElements": 2}, pair))


def test_gather_elements_negative_axis_against_numpy(cdtype):
    # The reference evaluator fails on a negative GatherElements axis ("Except for
    # dimension -1, ..."), so numpy's take_along_axis is the meaning here.
    idx = np.array([[1, 3], [0, 0], [2, 1]], np.int64)
    m = single(
        "GatherElements", cdtype, shape=(3, 4), attrs={"axis": -1}, inputs=["a", "i"],
        inits=[init("i", idx)],
    )  # fmt: skip
    out, _ = decomplex(m)
    assert_ops(out, on_parts({"GatherElements": 2}))
    z = crandn(np.random.default_rng(0), (3, 4), cdtype)
    (got,) = run_ort(out, {"a": pack(z)})
    np.testing.assert_allclose(unpack(got), np.take_along_axis(z, idx, axis=-1))


@PAIR
@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd(opset, cdtype, batch_dims, pair):
    if batch_dims and opset < 12:
        pytest.skip("batch_dims is opset 12+")
    idx = np.array([[1, 2], [0, 3]], np.int64) if batch_dims == 0 else np.array([[1], [2]])
    m = single(
        "GatherND", cdtype, opset, shape=(2, 4), attrs={"batch_dims": batch_dims} if batch_dims else {},
        inputs=["a", "i"], inits=[init("i", idx.astype(np.int64))], pair=pair,
    )  # fmt: skip
    assert_rewrites(m, ops=packed_or_parts("GatherND", pair))


@PAIR
@pytest.mark.parametrize("reduction", [None, "add"])
def test_scatter_nd(opset, cdtype, reduction, pair):
    if reduction and opset < 16:
        pytest.skip("ScatterND reduction is opset 16+")
    m = single(
        "ScatterND", cdtype, opset, shape=(3, 4), inputs=["a", "i", "u"],
        attrs={"reduction": reduction} if reduction else {},
        extra=[vi("u", cdtype, [2, 4])], inits=[init("i", np.array([[2], [0]], np.int64))],
        pair=pair,
    )  # fmt: skip
    # Packed updates take the packed data's trailing axis; after a pair, u is unpacked.
    assert_rewrites(m, ops=packed_or_parts("ScatterND", pair, others=int(pair)))


@PAIR
@pytest.mark.parametrize("axis", [0, -1])
def test_scatter_elements(opset, cdtype, axis, pair):
    m = single(
        "ScatterElements", cdtype, opset, shape=(3, 4), inputs=["a", "i", "u"],
        attrs={"axis": axis}, extra=[vi("u", cdtype, [2, 2])],
        inits=[init("i", np.array([[2, 0], [1, 2]], np.int64))], pair=pair,
    )  # fmt: skip
    assert_rewrites(m, ops=on_parts({"ScatterElements": 2}, pair, others=1))


@pytest.mark.parametrize("op", ["ScatterElements", "ScatterND"])
@pytest.mark.parametrize("reduction", ["mul", "max"])
def test_scatter_reductions_without_meaning_are_refused(op, reduction):
    idx = np.array([[2], [0]], np.int64)
    m = single(
        op, np.complex64, 18, shape=(3, 4), inputs=["a", "i", "u"],
        attrs={"reduction": reduction}, extra=[vi("u", np.complex64, [2, 4])],
        inits=[init("i", idx if op == "ScatterND" else np.tile(idx, (1, 4)))],
    )  # fmt: skip
    with pytest.raises(UnsupportedError, match=f"reduction '{reduction}'"):
        decomplex(m)
