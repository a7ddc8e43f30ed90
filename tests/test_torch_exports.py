"""Real torch.onnx (dynamo) exports of modules with complex values inside
(fixtures/torch, made by make_torch.py). The exporter lowers every complex value to
packed real itself. An export with a DFT or an STFT (complex values in ONNX's own packed
layout) takes the default target's forms, its transforms as accurate MatMuls, and is
checked against the reference; any other passes through unchanged, reported as holding
no complex value. Both still match PyTorch's own outputs."""

from pathlib import Path

import onnx
import pytest

from onnx_decomplex.check import find_complex
from onnx_decomplex.pipeline import Files, convert_file
from onnx_decomplex.targets.common.lowering import holds
from onnx_decomplex.targets.common.transforms import TRANSFORM_OPS

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "torch"
NAMES = sorted(p.stem for p in CORPUS.glob("*.onnx"))
TRANSFORMED = {"circular_conv", "fft_abs", "fnet_fft2", "fnet_two_fft", "rfft_view_as_real",
               "spectral_filter"}  # fmt: skip
"""The exports that hold a DFT or an STFT."""


def test_the_corpus_is_there():
    assert len(NAMES) >= 10
    held = {n for n in NAMES if holds(onnx.load(CORPUS / f"{n}.onnx"), TRANSFORM_OPS)}
    assert held == TRANSFORMED


@pytest.mark.parametrize("name", NAMES)
def test_export_matches_torch(name, tmp_path):
    src = CORPUS / f"{name}.onnx"
    out = tmp_path / f"{name}.onnx"
    result = convert_file(src, out, files=Files(inputs=CORPUS / f"{name}.npz",
                                             expected=CORPUS / f"{name}.expected.npz"))  # fmt: skip
    assert not result.report.has_complex
    assert result.framework.passed and result.framework.outputs, result.framework.outputs
    if name in TRANSFORMED:
        assert result.report.changed and result.validation.passed, result.validation
        assert not holds(onnx.load(out), TRANSFORM_OPS)
    else:
        assert not result.report.changed
        assert result.validation is None  # nothing was rewritten: nothing to compare with
        assert out.read_bytes() == src.read_bytes()
    assert find_complex(onnx.load(out)) == []
