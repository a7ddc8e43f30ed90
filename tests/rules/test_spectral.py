"""DFT and STFT fed a native complex signal."""

import numpy as np
import pytest
from helpers import (
    DENSE_DFT,
    FOUR_STEP_DFT,
    REAL_PART,
    Ops,
    assert_rewrites,
    crandn,
    init,
    make_model,
    single,
    vi,
)
from onnx import helper

from onnx_decomplex import UnsupportedError, decomplex
from onnx_decomplex.validate import run_reference


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("inverse", [0, 1])
@pytest.mark.parametrize("axis", [1, 2])
def test_dft_of_a_complex_signal(cdtype, opset, inverse, axis):
    attrs = {"inverse": inverse}
    inputs, inits = ["a"], []
    if opset >= 20:
        inputs, inits = ["a", "", "ax"], [init("ax", np.array(axis, np.int64))]
    else:
        attrs["axis"] = axis
    m = single("DFT", cdtype, opset, shape=(2, 8, 4), attrs=attrs, inputs=inputs, inits=inits)
    # The packed tensor is DFT's own complex layout; the DFT then takes its accurate form.
    assert_rewrites(m, ops=DENSE_DFT + Ops(Transpose=2 if axis == 1 else 0))


def test_dft_meaning_is_numpy_fft(cdtype):
    # The packed signal's DFT is numpy's FFT of the complex signal.
    m = single("DFT", cdtype, 17, shape=(2, 8), attrs={"axis": 1})
    z = crandn(np.random.default_rng(0), (2, 8), cdtype)
    (ref,) = run_reference(m, {"a": z})
    np.testing.assert_allclose(ref, np.fft.fft(z, axis=1), rtol=1e-4, atol=1e-4)


def test_dft_then_complex_math(cdtype, unfused):
    # A filter in the frequency domain: DFT, multiply by a complex table, inverse DFT.
    table = crandn(np.random.default_rng(1), (8,), cdtype)
    m = make_model(
        [
            helper.make_node("DFT", ["a"], ["f"], axis=1),
            helper.make_node("Mul", ["f", "h"], ["g"]),
            helper.make_node("DFT", ["g"], ["y"], axis=1, inverse=1),
        ],
        [vi("a", cdtype, [2, 8])],
        [vi("y", cdtype, None)],
        [init("h", table)],
        opset=17,
    )
    # f (hr, hr) + (-fi, fr) (hi, hi) between the two transforms, all packed.
    assert_rewrites(m, ops=2 * DENSE_DFT + Ops(Split=1, Concat=1, Mul=2, Add=1))


def test_stft_of_a_complex_signal(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    m = single(
        "STFT", cdtype, 17, shape=(1, 32), inputs=["a", "step", "win"],
        inits=[init("step", np.array(8, np.int64)), init("win", np.hanning(16).astype(real))],
        attrs={"onesided": 0},
    )  # fmt: skip
    # Lowered as every STFT of frames up to 256: one Conv of the frame step, or in
    # float64, which onnxruntime's Conv does not take, the gathered frames' MatMul.
    if cdtype == np.complex64:
        assert_rewrites(m, ops={"Transpose": 2, "Conv": 1, "Reshape": 1})
    else:
        assert_rewrites(m, ops={"Gather": 1, "Reshape": 2, "MatMul": 1})


def test_stft_of_a_complex_signal_is_one_sided_by_default():
    # The spec's default onesided = 1 for STFT: with no attribute, the model means the
    # same as with onesided = 1, which is refused for a complex signal.
    kw = dict(shape=(1, 32), inputs=["a", "step", "win"],
              inits=[init("step", np.array(8, np.int64)), init("win", np.hanning(16).astype(np.float32))])  # fmt: skip
    with pytest.raises(UnsupportedError, match="one-sided transform needs a real signal"):
        decomplex(single("STFT", np.complex64, 17, attrs={"onesided": 1}, **kw))
    with pytest.raises(UnsupportedError, match="one-sided transform needs a real signal"):
        decomplex(single("STFT", np.complex64, 17, **kw))


def test_onesided_dft_of_a_complex_signal_is_refused():
    m = single("DFT", np.complex64, 17, shape=(2, 8), attrs={"axis": 1, "onesided": 1})
    with pytest.raises(UnsupportedError, match="one-sided transform needs a real signal"):
        decomplex(m)


def test_dft_of_a_real_value_cast_to_complex_takes_the_real_signal(cdtype, unfused):
    # FNet: Re(DFT(DFT(Cast(x)))). The op takes a real signal as [..., 1]; the zero
    # imaginary part is never made, and the real part is split off.
    real = np.float32 if cdtype == np.complex64 else np.float64
    m = make_model(
        [
            helper.make_node(
                "Cast", ["x"], ["xc"], to=helper.np_dtype_to_tensor_dtype(np.dtype(cdtype))
            ),
            helper.make_node("DFT", ["xc"], ["f1"], axis=2),
            helper.make_node("DFT", ["f1"], ["f2"], axis=1),
            helper.make_node(
                "Cast", ["f2"], ["y"], to=helper.np_dtype_to_tensor_dtype(np.dtype(real))
            ),
        ],
        [vi("x", real, [2, 4, 6])],
        [vi("y", real, [2, 4, 6])],
        opset=17,
    )
    # x[..., None] is the real signal; Re of the result split off.
    ops = 2 * DENSE_DFT + Ops(Transpose=2, Unsqueeze=1) + REAL_PART
    assert_rewrites(m, ops=ops, atol=1e-4)


def _filter_model(cdtype, real_signal=True, real_out=True, opset=17):
    """IDFT(DFT(x) w) along the last axis of [2, 3, 16], w per channel and frequency."""
    real = np.float32 if cdtype == np.complex64 else np.float64
    axis = {"axis": 2} if opset < 20 else {}
    nodes = [helper.make_node("DFT", ["xc" if real_signal else "x"], ["f"], **axis),
             helper.make_node("Mul", ["f", "w"], ["g"]),
             helper.make_node("DFT", ["g"], ["h"], inverse=1, **axis)]  # fmt: skip
    if real_signal:
        nodes.insert(
            0,
            helper.make_node(
                "Cast", ["x"], ["xc"], to=helper.np_dtype_to_tensor_dtype(np.dtype(cdtype))
            ),
        )
    out = vi("h", cdtype, [2, 3, 16])
    if real_out:
        nodes.append(
            helper.make_node(
                "Cast", ["h"], ["y"], to=helper.np_dtype_to_tensor_dtype(np.dtype(real))
            )
        )
        out = vi("y", real, [2, 3, 16])
    x = vi("x", real if real_signal else cdtype, [2, 3, 16])
    w = init("w", crandn(np.random.default_rng(9), [3, 16], cdtype))
    return make_model(nodes, [x], [out], [w], opset=opset)


# For onnxruntime, each filter is one product (`targets.common.fusion`): Re(IDFT(DFT(x) w)) = x M^T with
# M = Re(F^-1 diag(w) F), one per channel; the batch's rows are moved next to each other
# so that each channel's product is a matrix's.


@pytest.mark.parametrize("opset", [17, 20])
def test_a_spectral_filter_is_one_product_by_its_matrices_for_onnxruntime(cdtype, opset):
    model = _filter_model(cdtype, opset=opset)
    assert_rewrites(model, ops=Ops(Transpose=2, MatMul=1), target="onnxruntime")


def test_a_spectral_filter_with_a_complex_output(cdtype):
    # (re, im) of each bin: M is [32, 16], y made again as [..., 16, 2].
    model = _filter_model(cdtype, real_out=False)
    assert_rewrites(model, ops=Ops(Transpose=2, MatMul=1, Reshape=1), target="onnxruntime")


def test_a_spectral_filter_keeps_its_transforms_without_affine_chains(cdtype, unfused):
    dfts = 2 * FOUR_STEP_DFT + Ops(Unsqueeze=1, Split=1, Mul=2, Concat=1, Add=1)
    assert_rewrites(_filter_model(cdtype), ops=dfts + REAL_PART)


def test_a_spectral_filter_of_a_complex_signal_acts_on_its_pairs(cdtype):
    # The DFT runs along the axis before (re, im): the map is one on both, [32, 32].
    model = _filter_model(cdtype, real_signal=False, real_out=False)
    assert_rewrites(model, ops=Ops(Reshape=2, Transpose=2, MatMul=1), target="onnxruntime")


def test_a_transform_of_a_loops_output_declares_a_shape(cdtype):
    """Inference finds no shape for a DFT of what a Loop carries out; the rewritten
    output still declares one (the checker asks every graph output for a shape)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["z_in"], ["z_out"])],
        "body",
        [vi("i", np.int64, []), vi("cond_in", np.bool_, []), vi("z_in", cdtype, [3])],
        [vi("cond_out", np.bool_, []), vi("z_out", cdtype, [3])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Loop", ["n", "keep", "z"], ["carried"], body=body),
        helper.make_node("Unsqueeze", ["carried", "last"], ["column"]),
        helper.make_node("DFT", ["column"], ["y"], axis=0),
    ]
    inits = [init("n", np.array(1, np.int64)), init("keep", np.array(True)),
             init("last", np.array([1], np.int64))]  # fmt: skip
    model = make_model(nodes, [vi("z", cdtype, [3])], [vi("y", cdtype, [3, 1])], inits, opset=18)
    out = assert_rewrites(model, ops=Ops(Loop=1, Unsqueeze=1, DFT=1))
    assert len(out.graph.output[0].type.tensor_type.shape.dim) == 3
