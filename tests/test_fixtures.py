"""The shipped fixtures: up to date with their generator, and each one converts."""

import make_fixtures as GEN
import numpy as np
import onnx
import pytest
from conftest import ROOT
from helpers import assert_rewrites
from onnx import numpy_helper

from onnx_decomplex import UnsupportedError, decomplex


def _tensors(graph: onnx.GraphProto, where: str = ""):
    """Every tensor a graph holds, by a path: initializers, tensor attributes (a
    Constant's value, say), and those of subgraphs."""
    for t in graph.initializer:
        yield f"{where}{t.name}", t
    for i, node in enumerate(graph.node):
        for attr in node.attribute:
            at = f"{where}{node.name or i}.{attr.name}"
            if attr.type == onnx.AttributeProto.TENSOR:
                yield at, attr.t
            for k, t in enumerate(attr.tensors):
                yield f"{at}[{k}]", t
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _tensors(attr.g, f"{at}/")
            for k, g in enumerate(attr.graphs):
                yield from _tensors(g, f"{at}[{k}]/")


def _without_values(model: onnx.ModelProto) -> tuple[bytes, dict[str, np.ndarray]]:
    """The model with the values of its tensors taken out, and those values.

    Values are compared with a tolerance: the generator computes tables with libm,
    whose last bit differs from one CPU to the next (AVX-512's exp, say)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    values = {}
    for key, t in _tensors(model.graph):
        values[key] = numpy_helper.to_array(t)
        t.CopyFrom(onnx.TensorProto(name=t.name, data_type=t.data_type, dims=t.dims))
    return model.SerializeToString(), values


def _assert_close(key: str, shipped: np.ndarray, built: np.ndarray) -> None:
    """Exact for integers and booleans; within a few ulps of the tensor's largest
    value for floating and complex ones."""
    assert shipped.dtype == built.dtype and shipped.shape == built.shape, key
    if shipped.dtype.kind not in "fc":
        np.testing.assert_array_equal(shipped, built, err_msg=key)
        return
    eps = float(np.finfo(shipped.dtype).eps)
    scale = max(1.0, float(np.max(np.abs(built), initial=0.0)))
    np.testing.assert_allclose(shipped, built, rtol=8 * eps, atol=8 * eps * scale, err_msg=key)


@pytest.mark.parametrize("name", sorted(GEN.FIXTURES))
def test_committed_fixture_matches_generator(name):
    built, built_values = _without_values(GEN.FIXTURES[name]())
    shipped, shipped_values = _without_values(onnx.load(ROOT / "fixtures" / name))
    assert shipped == built, "run `make fixtures`"
    assert shipped_values.keys() == built_values.keys()
    for key, value in built_values.items():
        _assert_close(key, shipped_values[key], value)


def test_fixture_comparison_allows_one_ulp_only():
    """A table whose exp differs in its last bit still matches; a changed value does not."""
    built = GEN.FIXTURES["rope_complex128.onnx"]()
    _, values = _without_values(built)
    table = values["freqs_cis"]
    nudged = table.view(np.float64).copy()
    nudged[::7] = np.nextafter(nudged[::7], np.inf)
    _assert_close("freqs_cis", nudged.view(np.complex128), table)
    changed = table.copy()
    changed[3, 2] += 1e-9
    with pytest.raises(AssertionError):
        _assert_close("freqs_cis", changed, table)


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
