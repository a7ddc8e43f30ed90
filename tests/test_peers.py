"""Test cases other projects wrote (fixtures/peers, made by make_peers.py there):
tf2onnx's own FFT and complex tests and OpenVINO's TensorFlow layer tests for complex
ops, each exported with tf2onnx as a user would, with TensorFlow's inputs and outputs.

Each converts as a user's first command converts it (default validation, no inputs
given), and its output matches TensorFlow's on TensorFlow's inputs at rtol 1e-4,
atol 1e-5; with TensorFlow's inputs and outputs handed over, it converts too. The
exceptions are `KNOWN`, each with what happens instead and why.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.pipeline import Files, convert_file

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "peers"
NAMES = sorted(p.stem for p in CORPUS.glob("*.onnx"))

MISCOMPILED = {
    **{f"openvino_equal_{s}": "tf2onnx's complex Equal compares real parts cast to int32"
       for s in ("1x3", "2x3x4", "3x4x5x6")},
    **{f"openvino_pad_{s}": "tf2onnx's complex Pad drops the imaginary part"
       for s in ("1x50", "1x5x10x3", "2x20x10")},
    **{f"openvino_padv2_{s}": "tf2onnx's complex PadV2 drops the imaginary parts, the pad "
       "value's too" for s in ("1x50_c10", "1x5x10x3_c12", "2x20x10_c01")},
}  # fmt: skip
"""tf2onnx's own miscompiles: converted as written with a warning, and refused against
TensorFlow's outputs."""

REFUSED = {
    **{f"openvino_biasadd_{s}_nchw": "tf2onnx adds an NCHW bias on the last axis: its "
       "shapes do not broadcast" for s in ("3x2x7x10", "7x6x4x5")},
}  # fmt: skip
"""Exports that are no valid model: refused in one line, naming the node."""

KNOWN = {
    "openvino_fft3d_1x1x50x30x2": "a 3000-point transform whose bins reach 209: the tool's "
    "and TensorFlow's float32 results are 4.6e-5 (2.2e-7 of the largest) apart, past atol 1e-5 "
    "at a small bin",
}
"""Open: what fails, and why."""


def _files(name: str):
    return CORPUS / f"{name}.onnx", CORPUS / f"{name}.npz", CORPUS / f"{name}.expected.npz"


def _run(path: Path, inputs: Path) -> list[np.ndarray]:
    """The written model on TensorFlow's inputs, packed, and its outputs unpacked."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {}
    with np.load(inputs) as given:
        for i in session.get_inputs():
            x = given[i.name]
            feeds[i.name] = np.stack([x.real, x.imag], -1) if np.iscomplexobj(x) else x
    return session.run(None, feeds)


def _matches(outputs: list[np.ndarray], expected: Path) -> bool:
    with np.load(expected) as want:
        for got, name in zip(outputs, want.files, strict=True):
            w = want[name]
            if np.iscomplexobj(w):
                got = got[..., 0] + 1j * got[..., 1]
            if not np.allclose(got, w, rtol=1e-4, atol=1e-5, equal_nan=True):
                return False
    return True


def test_the_corpus_is_there():
    assert len(NAMES) >= 400
    assert set(MISCOMPILED) | set(REFUSED) | set(KNOWN) <= set(NAMES)


def _convert(src: Path, out: Path, **files):
    """The conversion's result, or the error it refused with."""
    try:
        return convert_file(src, out, files=Files(**files) if files else None)
    except DecomplexError as e:
        return e


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_users_first_command_converts_and_matches_tensorflow(name, tmp_path):
    src, inputs, expected = _files(name)
    alone = tmp_path / "alone" / src.name
    alone.parent.mkdir()
    alone.write_bytes(src.read_bytes())  # no inputs beside it
    out = tmp_path / "out.onnx"
    result = _convert(alone, out)
    if name in REFUSED:
        assert isinstance(result, DecomplexError) and result.node, result
        return
    if name in KNOWN and (isinstance(result, DecomplexError) or not result.ok):
        return
    assert not isinstance(result, DecomplexError), result
    assert result.ok, [o for v in result.validations for o in v.outputs if not o.passed]
    matches = _matches(_run(out, inputs), expected)
    if name in MISCOMPILED:
        assert result.report.warnings and not matches
    elif name not in KNOWN:
        assert matches


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_with_tensorflows_inputs_and_outputs_it_converts_or_says_why_not(name, tmp_path):
    src, inputs, expected = _files(name)
    result = _convert(src, tmp_path / "out.onnx", inputs=inputs, expected=expected)
    if name in REFUSED:
        assert isinstance(result, DecomplexError) and result.node, result
    elif name in MISCOMPILED:
        assert not isinstance(result, DecomplexError) and result.report.warnings
        assert not result.framework.passed
    elif name not in KNOWN:
        assert not isinstance(result, DecomplexError), result
        assert result.ok, [o for v in result.validations for o in v.outputs if not o.passed]
