"""Real tf2onnx exports (fixtures/tf2onnx, made by make_tf2onnx.py), with TensorFlow's
own outputs saved beside them.

tf2onnx copies complex dtypes onto standard ONNX ops where it has a converter. Where it
has none, it writes TensorFlow's own op (`Complex`, `RFFT`, `ComplexAbs`, ...) in the
default domain, which is no ONNX op, and sometimes converts the ops around it for its
own packed layout. Each export converts, runs in onnxruntime and matches TensorFlow.
"""

from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner
from onnx_decomplex.cli.main import EXIT_VALIDATION, main

from onnx_decomplex.check import find_complex
from onnx_decomplex.pipeline import convert_file

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "tf2onnx"
NAMES = sorted(p.stem for p in CORPUS.glob("*.onnx"))

RAW = {
    "abs": "ComplexAbs", "angle": "Angle", "complex": "Complex", "conj": "Conj",
    "conj_product": "Conj", "fft": "FFT", "fft2d": "FFT2D", "fft_abs": "FFT", "ifft": "IFFT",
    "imag": "Imag", "irfft": "IRFFT", "irfft_length": "IRFFT", "real": "Real", "rfft": "RFFT",
    "rfft_cropped": "RFFT", "rfft_padded": "RFFT", "rope": "Complex", "spectral_filter": "RFFT",
    "ifft2d": "IFFT2D", "fft3d": "FFT3D", "ifft3d": "IFFT3D", "rfft2d": "RFFT2D",
    "rfft2d_length": "RFFT2D", "irfft2d": "IRFFT2D", "rfft3d": "RFFT3D", "irfft3d": "IRFFT3D",
}  # fmt: skip
"""Exports that hold a TensorFlow op tf2onnx had no converter for, by that op."""

HALF_CONVERTED = {"fft_abs": "Pow"}
"""Exports where tf2onnx converted the ops around a raw one for its own reading: the
magnitude of a raw FFT (its pair on a leading axis, a 2+0j exponent)."""

WRONG = {"irfft_length"}
"""Exports that compute something else than TensorFlow: tf2onnx pads the complex
spectrum between a Cast to float and one back, and a Cast to a real type keeps the real
part. Converted faithfully, they fail against TensorFlow's outputs."""


def _files(name):
    return CORPUS / f"{name}.onnx", CORPUS / f"{name}.npz", CORPUS / f"{name}.expected.npz"


def test_the_corpus_is_there():
    assert len(NAMES) >= 35 and set(RAW) < set(NAMES)


@pytest.mark.parametrize("name", sorted(set(NAMES) - WRONG))
def test_export_converts_and_matches_tensorflow(name, tmp_path):
    src, inputs, expected = _files(name)
    out = tmp_path / f"{name}.onnx"
    result = convert_file(src, out, inputs_file=inputs, expected_file=expected)
    assert result.report.has_complex
    assert result.validation.passed and result.framework.passed, result.framework.outputs
    model = onnx.load(out)
    assert find_complex(model) == []
    onnx.checker.check_model(model, full_check=True)
    readings = " ".join(result.report.readings)
    if name in RAW:
        assert f"({RAW[name]}): TensorFlow's {RAW[name]}" in readings
    else:
        assert result.report.normalized is None
    if name in HALF_CONVERTED:
        assert f"({HALF_CONVERTED[name]})" in readings


def test_the_cli_names_what_it_read_with_v(tmp_path):
    src, inputs, expected = _files("spectral_filter")
    result = CliRunner().invoke(main, [str(src), str(tmp_path / "o.onnx"), "-v", "--load-inputs",
                                       str(inputs), "--expected-outputs", str(expected)])  # fmt: skip
    assert result.exit_code == 0
    assert "(RFFT): TensorFlow's RFFT" in result.output and "(IRFFT)" in result.output
    assert result.output.count("PASSED") == 2


@pytest.mark.parametrize("name", sorted(WRONG))
def test_export_that_computes_something_else_fails_against_tensorflow(name, tmp_path):
    src, inputs, expected = _files(name)
    result = CliRunner().invoke(main, [str(src), str(tmp_path / "o.onnx"), "--load-inputs",
                                       str(inputs), "--expected-outputs", str(expected)])  # fmt: skip
    assert result.exit_code == EXIT_VALIDATION
    assert "against expected outputs" in result.stderr
