"""A chain that frames a signal, or overlaps frames and adds them, read as one product
by blocks of the hop (`common.framing`): its hops, widths and starts, the signal's ends
padded with zeros, and what is no framing left to the other forms."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import assert_rewrites, convert_export, init, make_model, op_counts, vi
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper

from onnx_decomplex import decomplex
from onnx_decomplex.targets.common.framing import MAX_BLOCKS, read_framed

CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "models"
F32 = np.float32


def _frames(length: int, width: int, hop: int, start: int) -> np.ndarray:
    """The frames' places: [T, W] indices of the signal, from `start`, T as many as fit
    up to its end."""
    count = (length - start - width) // hop + 1
    return start + np.arange(count)[:, None] * hop + np.arange(width)


def _framing_map(frames: int, f: int, length: int, hop: int, start: int, width: int):
    """M [T F, L] of y[t] = K x[start + t hop : ... + W], cut at the signal's ends, and K."""
    kernel = np.random.default_rng(width * hop).standard_normal((f, width))
    m = np.zeros((frames, f, length))
    for t in range(frames):
        for s in range(width):
            if 0 <= start + t * hop + s < length:
                m[t, :, start + t * hop + s] = kernel[:, s]
    return m.reshape(frames * f, length)


def _apply(form, x: np.ndarray) -> np.ndarray:
    """The form on one row of x, in numpy, as `replace_framed` writes it: the signal's
    blocks of the hop through K' and summed along the frames, or the frames through K'
    and each hop added where it lands."""
    hop, k, frames = form.hop, form.blocks, form.frames
    if not form.overlap:
        padded = np.zeros(form.span)
        lo, hi = max(form.start, 0), min(form.start + form.span, form.length)
        padded[lo - form.start : hi - form.start] = x[lo:hi]
        blocks = padded.reshape(-1, hop)
        return sum(blocks[j : j + frames] @ form.kernel[:, j * hop : (j + 1) * hop].T
                   for j in range(k)).reshape(-1)  # fmt: skip
    p = (x.reshape(frames, -1) @ form.kernel).reshape(frames, k, hop)
    out = np.zeros((frames - 1 + k, hop))
    for j in range(k):
        out[j : j + frames] += p[:, j]
    flat = np.zeros(form.length)
    lo, hi = max(form.start, 0), min(form.start + form.span, form.length)
    flat[lo:hi] = out.reshape(-1)[lo - form.start : hi - form.start]
    return flat


@pytest.mark.parametrize(
    "hop, width, start",
    [(8, 16, 0), (6, 16, 0), (5, 12, 3), (4, 12, -6), (16, 16, 0), (7, 9, -2)],
)
def test_a_framing_map_is_read_at_its_hop_and_start(hop, width, start):
    frames, f, length = 7, 5, 128
    m = _framing_map(frames, f, length, hop, start, width)
    form = read_framed(m, [length], [frames, f])
    assert form is not None and not form.overlap and form.hop == hop
    assert form.start % hop == 0 and form.start <= start
    x = np.random.default_rng(0).standard_normal(length)
    np.testing.assert_allclose(_apply(form, x), m @ x, atol=1e-10)
    # Its transpose is the frames overlapped and added.
    back = read_framed(m.T, [frames, f], [length])
    assert back is not None and back.overlap and back.hop == hop
    z = np.random.default_rng(1).standard_normal(frames * f)
    np.testing.assert_allclose(_apply(back, z), m.T @ z, atol=1e-10)


@settings(max_examples=80, deadline=None)
@given(
    hop=st.integers(1, 9), width=st.integers(1, 20), start=st.integers(-12, 12),
    frames=st.integers(2, 8), f=st.integers(1, 3),
)  # fmt: skip
def test_any_framing_is_read_right_or_not_at_all(hop, width, start, frames, f):
    """A framing the signal's ends cut, or of more hops a frame than the form takes, is
    read or refused, never misread; any other is read."""
    length = 48
    m = _framing_map(frames, f, length, hop, start, width)
    inside = start >= 0 and start + (frames - 1) * hop + width <= length
    inside &= -(-(start % hop + width) // hop) <= MAX_BLOCKS
    x, z = np.random.default_rng(2).standard_normal(length), np.ones(frames * f)
    for form, a, got in ((read_framed(m, [length], [frames, f]), m, x),
                         (read_framed(m.T, [frames, f], [length]), m.T, z)):  # fmt: skip
        assert form is not None or not inside
        if form is not None:
            np.testing.assert_allclose(_apply(form, got), a @ got, atol=1e-9)


def test_a_map_that_is_no_framing_is_none():
    rng = np.random.default_rng(1)
    assert read_framed(rng.standard_normal((7 * 5, 64)), [64], [7, 5]) is None
    m = _framing_map(7, 5, 64, 8, 0, 16)
    m[3 * 5, 40] = 1.0  # a frame that reads past its width
    assert read_framed(m, [64], [7, 5]) is None
    assert read_framed(m, [64], [35]) is None  # one frame: nothing moves
    # A filter of 16 taps at a hop of 1 (a linear convolution): 16 slices, not taken.
    assert read_framed(_framing_map(40, 1, 64, 1, 0, 16), [64], [40]) is None
    assert read_framed(_framing_map(8, 1, 64, 2, 0, 16), [64], [8]) is not None


def _stft(length: int, width: int, hop: int, pads: tuple[int, int]) -> onnx.ModelProto:
    """x [2, L], padded with zeros, cut into frames, windowed, and each frame's DFT."""
    idx = _frames(length + sum(pads), width, hop, 0)
    window = np.hanning(width + 1)[:width].astype(F32)
    return make_model(
        [helper.make_node("Pad", ["x", "pads"], ["xp"]),
         helper.make_node("Gather", ["xp", "idx"], ["fr"], axis=1),
         helper.make_node("Mul", ["fr", "window"], ["w"]),
         helper.make_node("Cast", ["w"], ["wc"], to=onnx.TensorProto.COMPLEX64),
         helper.make_node("DFT", ["wc"], ["y"], axis=2)],
        [vi("x", F32, [2, length])],
        [vi("y", np.complex64, [2, len(idx), width])],
        [init("pads", np.array([0, pads[0], 0, pads[1]], np.int64)), init("idx", idx),
         init("window", window)],
        opset=18,
    )  # fmt: skip


def _istft(frames: int, width: int, hop: int, start: int, length: int) -> onnx.ModelProto:
    """z [2, T, W]: each frame's inverse DFT, its real part windowed, and the frames added
    where they overlap (from `start`, cut to `length`), as one product by 0s and 1s."""
    scatter = np.zeros((frames * width, length), F32)
    for t in range(frames):
        for s in range(width):
            if 0 <= start + t * hop + s < length:
                scatter[t * width + s, start + t * hop + s] = 1
    return make_model(
        [helper.make_node("DFT", ["z"], ["f"], axis=2, inverse=1),
         helper.make_node("Cast", ["f"], ["re"], to=onnx.TensorProto.FLOAT),
         helper.make_node("Mul", ["re", "window"], ["w"]),
         helper.make_node("Reshape", ["w", "flat"], ["row"]),
         helper.make_node("MatMul", ["row", "scatter"], ["y"])],
        [vi("z", np.complex64, [2, frames, width])],
        [vi("y", F32, [2, length])],
        [init("window", np.hanning(width + 1)[:width].astype(F32)),
         init("flat", np.array([0, -1], np.int64)), init("scatter", scatter)],
        opset=18,
    )  # fmt: skip


def _noted(report, word: str) -> list[str]:
    return [note for note in report.lowering_notes if word in note]


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
@pytest.mark.parametrize(
    "length, width, hop, pads",
    [(256, 32, 16, (0, 0)), (250, 32, 12, (0, 0)), (240, 24, 8, (12, 12))],
)
def test_an_stft_is_one_product_by_blocks_of_its_hop(target, length, width, hop, pads):
    model = _stft(length, width, hop, pads)
    out, report = decomplex(model, target=target)
    assert _noted(report, "framed"), report.lowering_notes
    assert not {"Gather", "DFT"} & set(op_counts(out))
    assert op_counts(out)["MatMul"] == 1
    assert_rewrites(model, target=target)


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
@pytest.mark.parametrize(
    "frames, width, hop, start, length",
    [(15, 32, 16, 0, 256), (16, 32, 12, 0, 212), (20, 24, 8, -12, 160), (16, 20, 9, 5, 150)],
)
def test_frames_overlapped_and_added_are_one_product(target, frames, width, hop, start, length):
    """Frames of three or four hops each are framed where the signal is long enough
    that their nodes cost less than the dense product (`test_a_short_signal_...`)."""
    model = _istft(frames, width, hop, start, length)
    out, report = decomplex(model, target=target)
    assert _noted(report, "overlapped and added"), report.lowering_notes
    assert not {"DFT"} & set(op_counts(out))
    assert op_counts(out)["MatMul"] == 1
    assert_rewrites(model, target=target)


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_a_short_signal_overlapped_and_added_is_the_dense_product(target):
    """9 frames of 3 hops into 128 samples: the overlap-add's 11 nodes cost more than one
    product by the dense [576, 128] M (0.72 of their time, measured)."""
    model = _istft(9, 32, 12, 0, 128)
    out, report = decomplex(model, target=target)
    assert _noted(report, "products by 576x128"), report.lowering_notes
    assert op_counts(out)["MatMul"] == 1
    assert_rewrites(model, target=target)


@pytest.mark.parametrize(
    "name", ["stft_mask_enhance", pytest.param("stft_mask_enhance_batch3", marks=pytest.mark.slow)]
)
def test_tensorflows_stft_and_its_inverse_are_framed(name, tmp_path):
    """tf.signal's STFT (frames of 256 by 128, a Hann window, an rfft) and its inverse
    (an irfft, the window, overlap_and_add) around a mask: two products, no Gather of
    the frames and no transform left; the outputs match TensorFlow's."""
    out_path = tmp_path / f"{name}.onnx"
    result = convert_export(CORPUS / "tf2onnx" / f"{name}.onnx", out_path)
    notes = result.report.lowering_notes
    assert len(_noted(result.report, "15 frames of 2 x 128 framed")) == 1, notes
    assert len(_noted(result.report, "15 frames of 2 x 128 overlapped and added")) == 1, notes
    counts = op_counts(onnx.load(out_path))
    assert not {"Gather", "DFT", "Transpose"} & set(counts)
    assert counts["MatMul"] == 4  # the two frames' products, the mask network's two
