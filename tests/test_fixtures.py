"""The shipped fixtures: up to date with their generator, and each one converts."""

import make_fixtures as GEN
import onnx
import pytest
from conftest import ROOT
from helpers import assert_rewrites

from onnx_decomplex import UnsupportedError, decomplex


@pytest.mark.parametrize("name", sorted(GEN.FIXTURES))
def test_committed_fixture_matches_generator(name):
    built = GEN.FIXTURES[name]().SerializeToString()
    assert (ROOT / "fixtures" / name).read_bytes() == built, "run `make fixtures`"


REFUSED = "complex_relu.onnx"


@pytest.mark.parametrize(
    "name", sorted(n for n in GEN.FIXTURES if n not in ("no_complex.onnx", REFUSED))
)
def test_fixture_validates(name):
    assert_rewrites(onnx.load(ROOT / "fixtures" / name))


def test_refused_fixture_is_refused():
    with pytest.raises(UnsupportedError, match="'relu' \\(Relu.*not ordered"):
        decomplex(onnx.load(ROOT / "fixtures" / REFUSED))


def test_rope_symbolic_dims_are_kept():
    out = assert_rewrites(
        onnx.load(ROOT / "fixtures" / "rope_freqs_input.onnx"), input_shapes={"xq": (2, 5, 4, 32)}
    )
    freqs = next(i for i in out.graph.input if i.name == "freqs_cis")
    assert [d.dim_param or d.dim_value for d in freqs.type.tensor_type.shape.dim] == ["seq", 16, 2]


def test_no_complex_fixture_passes_through():
    model = onnx.load(ROOT / "fixtures" / "no_complex.onnx")
    out, report = decomplex(model)
    assert out is model and not report.has_complex
