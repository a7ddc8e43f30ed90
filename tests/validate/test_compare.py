"""`validate`: both sides run on the same inputs, every output compared."""

import importlib

import numpy as np
import pytest
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.validate import Settings

C64 = np.complex64


def _mul_model():
    return make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", C64, ["n", 3]), vi("b", C64, ["n", 3])],
        [vi("y", C64, ["n", 3])],
    )


def test_a_settings_object_and_keywords_make_the_same_call():
    model = _mul_model()
    out, _ = decomplex(model)
    by_keywords = validate(model, out, atol=0.5, seed=3, input_shapes={"a": (4, 3)})
    by_object = validate(model, out, None, Settings(atol=0.5, seed=3, input_shapes={"a": (4, 3)}))
    for a, b in zip(by_keywords.expected + by_keywords.actual,
                    by_object.expected + by_object.actual, strict=True):  # fmt: skip
        np.testing.assert_array_equal(a, b)
    assert (by_object.atol, by_object.shapes["a"]) == (0.5, (4, 3))
    # Keywords change the object given.
    assert validate(model, out, None, Settings(atol=0.5), atol=1e-3).atol == 1e-3
    with pytest.raises(TypeError, match="tolerance"):
        validate(model, out, tolerance=1e-3)


def test_the_rewrite_is_run_as_an_object_bytes_or_a_file(tmp_path):
    model = _mul_model()
    out, _ = decomplex(model)
    path = tmp_path / "out.onnx"
    path.write_bytes(out.SerializeToString())
    for rewritten in (out, out.SerializeToString(), path, str(path)):
        result = validate(model, rewritten)
        assert result.passed and result.runtime == "onnxruntime", type(rewritten)
        assert result.reference == "onnx.reference" and result.shapes == {"a": (2, 3), "b": (2, 3)}


def test_saved_outputs_and_a_runner_stand_in_for_either_side():
    model = _mul_model()
    rng = np.random.default_rng(0)
    feeds = {k: (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(C64)
             for k in "ab"}  # fmt: skip
    product = feeds["a"] * feeds["b"]
    seen = []

    def runner(packed):
        seen.append(packed)
        return [product.reshape(2, 3, 1).view(np.float32)]

    result = validate(model, None, feeds, expected=[product], runner=runner, runtime="mine")
    assert result.passed and (result.reference, result.runtime) == ("saved outputs", "mine")
    (packed,) = seen
    assert packed["a"].dtype == np.float32 and packed["a"].shape == (2, 3, 2)
    wrong = validate(model, None, feeds, expected=[product * 2], runner=runner)
    assert not wrong.passed and wrong.outputs[0].note == ""


def test_the_package_exports_what_validation_offers():
    # `onnx_decomplex.validate`, as an attribute, is the function.
    package = importlib.import_module("onnx_decomplex.validate")
    assert set(package.__all__) == {
        "DEFAULT_ATOL", "DEFAULT_DIM", "DEFAULT_RTOL", "DEFAULT_TIMEOUT", "EDGES_BY_DEFAULT",
        "EDGE_VALUES", "EDGE_VALUES_128", "EXPECTED", "PRECISION_FACTOR", "PROVIDERS", "QUIET",
        "REAL_EDGE_VALUES", "RUNTIME_HINT", "Deadline", "EdgeSplit", "OutputResult", "Settings",
        "ValidationResult", "edge_positions", "edge_values", "edges_in", "import_onnxruntime",
        "load_expected", "load_saved", "npz_bytes", "random_inputs", "replay_outputs",
        "resolve_providers", "resolve_shapes", "run_onnxruntime", "run_reference", "upcast",
        "validate", "with_edges", "without_edges", "OPENVINO_CONFIG", "RUNTIMES",
        "choose_runtime", "import_openvino", "import_runtime", "run_openvino",
    }  # fmt: skip
    assert all(hasattr(package, name) for name in package.__all__)
