"""Every fixture converts for every target, and matches the reference and its framework:
what a target emits for speed (RotaryEmbedding nodes, affine chains as products, DFTs and
Einsums as MatMuls, TensorRT's lowerings) means what the default rewrite means."""

import warnings
from pathlib import Path

import pytest
from conftest import not_peers

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.passes.state import Files
from onnx_decomplex.pipeline import convert_file, siblings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MODELS = not_peers(sorted(FIXTURES.glob("**/*.onnx")))


def _convert(path: Path, out: Path, target: str):
    inputs, expected = siblings(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return convert_file(path, out, files=Files(inputs=inputs, expected=expected), target=target)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["onnxruntime", "tensorrt"])
@pytest.mark.parametrize("path", MODELS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_converts_for_every_target(path, target, tmp_path):
    try:
        default = _convert(path, tmp_path / "default.onnx", "onnx")
    except DecomplexError:
        pytest.skip("refused at the default target (tested elsewhere)")
    if not default.ok:
        pytest.skip("the export computes something else than its framework (tested elsewhere)")
    try:
        result = _convert(path, tmp_path / f"{target}.onnx", target)
    except DecomplexError as e:
        if target == "tensorrt" and "cannot lower for TensorRT" in str(e):
            pytest.skip(f"TensorRT's parser cannot take it: {e}")
        raise
    assert result.ok
    assert result.validation is None or result.validation.passed, result.validation.outputs
    assert result.framework is None or result.framework.passed, result.framework.outputs
