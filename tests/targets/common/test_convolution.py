"""A map that is a convolution over some of x's axes, read as the few frequencies where
it filters and the mix it adds at every one (`common.convolution`), in both layouts of
channels; and Fourier layers of every exporter run so, in onnxruntime, against their
expected outputs."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import convert_export, op_counts

from onnx_decomplex.targets.common.convolution import read_convolution

CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "models"


def _circulant(kernel: np.ndarray) -> np.ndarray:
    """M [O S, I S] of y[o] = sum_i kernel[o, i] (*) x[i], circular over the spatial axes,
    for `kernel` [O, I, *S]; x and y [channels, *S] flattened."""
    n_out, n_in, *sizes = kernel.shape
    m = np.zeros((n_out, *sizes, n_in, *sizes))
    for at in np.ndindex(*sizes):  # x's place
        shifted = np.roll(kernel, at, axis=tuple(range(2, 2 + len(sizes))))
        m[(slice(None), *[slice(None)] * len(sizes), slice(None), *at)] = np.moveaxis(
            shifted, 1, -1
        )
    return m.reshape(n_out * np.prod(sizes), n_in * np.prod(sizes))


def _band_limited(rng, n_out, n_in, sizes, modes, pointwise) -> np.ndarray:
    """A real kernel whose spectrum is `pointwise` at every frequency but those below
    `modes` on every axis (and their negatives), where it is random."""
    spectrum = np.broadcast_to(
        pointwise.reshape(n_out, n_in, *[1] * len(sizes)), (n_out, n_in, *sizes)
    ).astype(complex)
    kept = tuple(slice(0, modes) for _ in sizes)
    spectrum[(slice(None), slice(None), *kept)] += rng.standard_normal(
        (n_out, n_in, *[modes] * len(sizes))
    ) + 1j * rng.standard_normal((n_out, n_in, *[modes] * len(sizes)))
    kernel = np.fft.ifftn(spectrum, axes=range(2, 2 + len(sizes)))
    return kernel.real  # the real part: the spectrum made Hermitian, the modes' negatives in


def _run(form, x: np.ndarray) -> np.ndarray:
    """The form on one row of x, its tail flattened to [channels, S] or [S, channels]."""
    q, (n_in, n_out) = form.basis, form.channels
    r = q.shape[1]
    if form.channels_first:
        x = x.reshape(n_in, -1)
        y = (((x @ q).reshape(-1) @ form.core).reshape(n_out, r)) @ q.T
        return y + (form.constant @ x if form.constant is not None else 0)
    x = x.reshape(-1, n_in)
    y = q @ ((q.T @ x).reshape(-1) @ form.core).reshape(r, n_out)
    return y + (x @ form.constant.T if form.constant is not None else 0)


@pytest.mark.parametrize("pointwise", [True, False])
def test_a_fourier_layer_is_its_kept_modes_and_its_pointwise_mix(pointwise):
    """3 channels in, 4 out, 32 points, 3 modes kept: 5 real frequencies (0, +-1, +-2)."""
    rng = np.random.default_rng(0)
    mix = rng.standard_normal((4, 3)) if pointwise else np.zeros((4, 3))
    m = _circulant(_band_limited(rng, 4, 3, [32], 3, mix))
    form = read_convolution(m, [3, 32], [4, 32])
    assert form.channels_first and form.basis.shape == (32, 5)
    if pointwise:
        np.testing.assert_allclose(form.constant, mix, atol=1e-12)
    else:
        assert form.constant is None
    x = rng.standard_normal(3 * 32)
    np.testing.assert_allclose(_run(form, x).reshape(-1), m @ x, atol=1e-10)
    assert form.cost < m.size / 4


def test_channels_after_two_spatial_axes():
    """[H, W, C] as Keras and GFNet lay it out: the convolution over (H, W), its
    channels last. Filtering 2 x 2 frequencies, with the negatives of those not 0
    on both axes (0, -1), (-1, 0) and (-1, -1), is 7 of 48."""
    rng = np.random.default_rng(1)
    kernel = _band_limited(rng, 2, 2, [8, 6], 2, rng.standard_normal((2, 2)))
    m = _circulant(kernel)  # [O H W, I H W]: move the channels last on both sides
    m = m.reshape(2, 48, 2, 48).transpose(1, 0, 3, 2).reshape(96, 96)
    form = read_convolution(m, [8, 6, 2], [8, 6, 2])
    assert not form.channels_first and form.basis.shape == (48, 7)
    x = rng.standard_normal(96)
    np.testing.assert_allclose(_run(form, x).reshape(-1), m @ x, atol=1e-10)


@pytest.mark.parametrize("tail", [[8, 6, 1], [8, 6]], ids=["channel last", "no channel"])
def test_a_lifting_of_one_channel_is_read_where_ys_channels_stand(tail):
    """A lifting into a Fourier layer: x has one channel, last or no axis at all, and y
    [O, H, W] has its channels first. Read with x as [1, H, W], the same values in the
    same order: a convolution over (H, W), not the dense M."""
    rng = np.random.default_rng(4)
    kernel = _band_limited(rng, 3, 1, [8, 6], 2, rng.standard_normal((3, 1)))
    m = _circulant(kernel)  # [O H W, H W]
    form = read_convolution(m, tail, [3, 8, 6])
    assert form is not None and form.channels == (1, 3)
    assert form.channels_first and form.basis.shape == (48, 7)
    x = rng.standard_normal(48)
    np.testing.assert_allclose(_run(form, x).reshape(-1), m @ x, atol=1e-10)
    assert form.cost < m.size / 2


def test_a_map_that_is_no_convolution_is_none():
    m = np.random.default_rng(2).standard_normal((64, 64))
    assert read_convolution(m, [4, 16], [4, 16]) is None


@pytest.mark.parametrize(
    ("name", "frequencies", "target"),
    [("jax2onnx/fno1d", "15 of 64", "onnx"), ("tf2onnx/fno", "15 of 64", "onnxruntime"),
     ("torch/fno1d_cfloat", "15 of 64", "onnxruntime"), ("torch/fno1d_reim", "15 of 64", "onnx"),
     *(pytest.param(*case, marks=pytest.mark.slow) for case in [
         ("jax2onnx/fno1d_nnx", "15 of 64", "onnxruntime"), ("jax2onnx/fno2d", "57 of 256", "onnx"),
         ("torch/fno1d_reim", "15 of 64", "onnxruntime")])],
)  # fmt: skip
def test_every_exporters_fourier_layer_is_its_kept_modes(name, frequencies, target, tmp_path):
    """The layer after the first is a convolution over its kept modes (FNO-2D keeps
    8 x 4, 57 frequencies with the ones its irfft folds in), in standard ops, on both
    targets; the outputs match the framework's. torch's exports hold no complex type,
    but their DFTs compute complex values: the default target takes them on too.
    FNO-2D's lifting into its first layer is a convolution too, over one of its axes
    (`test_fno2ds_lifting_...`)."""
    src = CORPUS / f"{name}.onnx"
    result = convert_export(src, tmp_path / src.name, target)
    notes = result.report.lowering_notes
    assert any(f"a convolution over {frequencies} frequencies" in note for note in notes), notes
    out = onnx.load(tmp_path / src.name)
    assert not {"DFT", "ScatterND", "Gather", "Einsum"} & set(op_counts(out))


def test_each_channel_filtered_alone_then_mixed():
    """GFNet's global filter, then its LayerNorm's mean over the channels: K(f) = P
    diag(d(f)), every frequency filtered, so no few modes: each channel through its own
    [S, S] map, then the mix P, at a fraction of the dense channel mix's cost."""
    rng = np.random.default_rng(3)
    n, s = 6, 16
    mix = np.eye(n) - 1 / n
    kernel = mix[:, :, None] * rng.standard_normal((1, n, s))  # K[o, i] = P[o, i] k_i
    m = _circulant(kernel)
    form = read_convolution(m, [n, s], [n, s])
    assert form.per_channel and form.mix is not None and form.channels_first
    x = rng.standard_normal(n * s).reshape(n, s)
    each = np.einsum("ip,ipn->in", x, form.core)  # x_i M_i^T
    np.testing.assert_allclose((form.mix @ each).reshape(-1), m @ x.reshape(-1), atol=1e-10)


def test_gfnets_filter_runs_channel_by_channel(tmp_path):
    result = convert_export(CORPUS / "jax2onnx" / "gfnet_block.onnx", tmp_path / "out.onnx")
    assert result.validation.passed
    notes = result.report.lowering_notes
    assert any("each of 16 channels by its own [64, 64] map then a channel mix" in n for n in notes)


@pytest.mark.slow  # the model's conversion and validation, 7 s
def test_fno2ds_lifting_into_its_first_layer_is_a_convolution(tmp_path):
    """x [1, 16, 16, 1] lifted to 8 channels and through a Fourier layer into [1, 8, 16,
    16]: an axis of 1 moved, not one product by the dense 256 x 2048 M (2 MB a call)."""
    src = CORPUS / "jax2onnx" / "fno2d.onnx"
    result = convert_export(src, tmp_path / src.name, "onnxruntime")
    assert result.validation.passed
    lifting = [n for n in result.report.lowering_notes if n.startswith("add_out_2:")]
    assert len(lifting) == 1 and "a convolution over" in lifting[0], lifting
    out = onnx.load(tmp_path / src.name)
    assert all(sorted(t.dims)[-2:] != [256, 2048] for t in out.graph.initializer)
