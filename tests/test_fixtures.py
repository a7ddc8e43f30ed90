"""The shipped fixtures: up to date with their generator, and each one converts."""

import make_fixtures as GEN
import numpy as np
import onnx
import pytest
from conftest import ROOT
from helpers import assert_rewrites
from onnx import numpy_helper

from onnx_decomplex import UnsupportedError, decomplex


def _without_weights(model: onnx.ModelProto) -> tuple[bytes, dict[str, np.ndarray]]:
    """The model with its initializers' values taken out, and those values.

    Values are compared with a tolerance: the generator computes tables with libm,
    whose last bit differs from one CPU to the next."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    values = {}
    for t in model.graph.initializer:
        values[t.name] = numpy_helper.to_array(t)
        t.CopyFrom(onnx.TensorProto(name=t.name, data_type=t.data_type, dims=t.dims))
    return model.SerializeToString(), values


@pytest.mark.parametrize("name", sorted(GEN.FIXTURES))
def test_committed_fixture_matches_generator(name):
    built, built_values = _without_weights(GEN.FIXTURES[name]())
    shipped, shipped_values = _without_weights(onnx.load(ROOT / "fixtures" / name))
    assert shipped == built, "run `make fixtures`"
    assert shipped_values.keys() == built_values.keys()
    for key, value in built_values.items():
        assert shipped_values[key].dtype == value.dtype, key
        np.testing.assert_allclose(shipped_values[key], value, rtol=1e-6, atol=1e-7, err_msg=key)


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
