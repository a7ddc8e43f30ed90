"""Real torch.onnx (dynamo) exports of modules with complex values inside
(fixtures/torch, made by make_torch.py). The exporter lowers every complex value to
packed real itself, so each one passes through unchanged, reported as holding no
complex value, and still matches PyTorch's own outputs."""

from pathlib import Path

import onnx
import pytest

from onnx_decomplex.check import find_complex
from onnx_decomplex.pipeline import Files, convert_file

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "torch"
NAMES = sorted(p.stem for p in CORPUS.glob("*.onnx"))


def test_the_corpus_is_there():
    assert len(NAMES) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_export_passes_through_and_matches_torch(name, tmp_path):
    src = CORPUS / f"{name}.onnx"
    out = tmp_path / f"{name}.onnx"
    result = convert_file(src, out, files=Files(inputs=CORPUS / f"{name}.npz",
                                             expected=CORPUS / f"{name}.expected.npz"))  # fmt: skip
    assert not result.report.has_complex and not result.report.changed
    assert result.validation is None  # nothing was rewritten: nothing to compare with
    assert result.framework.passed and result.framework.outputs, result.framework.outputs
    assert out.read_bytes() == src.read_bytes()
    assert find_complex(onnx.load(out)) == []
