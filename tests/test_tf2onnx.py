"""Real tf2onnx exports (fixtures/tf2onnx, made by make_tf2onnx.py), with TensorFlow's
own outputs saved beside them.

tf2onnx copies complex dtypes onto standard ONNX ops where it has a converter: those
exports convert and match TensorFlow. Where it has none, it writes TensorFlow's own op
(`Complex`, `RFFT`, `ComplexAbs`, ...) in the default domain, which is no ONNX op:
those are refused in one line naming the node, and nothing is written.
"""

from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner
from onnx_decomplex.cli.main import main

from onnx_decomplex.check import find_complex
from onnx_decomplex.pipeline import convert_file

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "tf2onnx"
NAMES = sorted(p.stem for p in CORPUS.glob("*.onnx"))

RAW = {
    "abs": "ComplexAbs", "angle": "Angle", "complex": "Complex", "conj": "Conj",
    "conj_product": "Conj", "fft": "FFT", "fft2d": "FFT2D", "fft_abs": "FFT", "ifft": "IFFT",
    "imag": "Imag", "irfft": "IRFFT", "irfft_length": "IRFFT", "real": "Real", "rfft": "RFFT",
    "rfft_cropped": "RFFT", "rfft_padded": "RFFT", "rope": "Complex", "spectral_filter": "RFFT",
}  # fmt: skip
"""Exports that hold a TensorFlow op tf2onnx had no converter for, by that op."""


def _files(name):
    return CORPUS / f"{name}.onnx", CORPUS / f"{name}.npz", CORPUS / f"{name}.expected.npz"


def test_the_corpus_is_there():
    assert len(NAMES) >= 25 and set(RAW) < set(NAMES)


@pytest.mark.parametrize("name", sorted(set(NAMES) - set(RAW)))
def test_native_complex_export_converts_and_matches_tensorflow(name, tmp_path):
    src, inputs, expected = _files(name)
    out = tmp_path / f"{name}.onnx"
    result = convert_file(src, out, inputs_file=inputs, expected_file=expected)
    assert result.report.has_complex and result.report.normalized is None
    assert result.validation.passed and result.framework.passed, result.framework.outputs
    model = onnx.load(out)
    assert find_complex(model) == []
    onnx.checker.check_model(model, full_check=True)


@pytest.mark.parametrize("name", sorted(RAW))
def test_raw_tensorflow_op_is_refused_in_one_line(name, tmp_path):
    src, inputs, expected = _files(name)
    result = CliRunner().invoke(main, [str(src), str(tmp_path / "o.onnx"), "--load-inputs",
                                       str(inputs), "--expected-outputs", str(expected)])  # fmt: skip
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert str(src) in line and f"OpType: {RAW[name]}" in line
    assert list(tmp_path.iterdir()) == []
