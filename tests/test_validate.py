"""Validation can fail: wrong numbers, wrong shapes, and bad shape overrides are caught."""

import io

import numpy as np
import onnxruntime as ort
import pytest
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.errors import DecomplexError, OptionError
from onnx_decomplex.validate import (
    EDGE_VALUES,
    npz_bytes,
    replay_outputs,
    resolve_providers,
    resolve_shapes,
)
from onnx_decomplex.validate.judge import compare_output as _compare


def _mul_model():
    return make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", np.complex64, ["n", 3]), vi("b", np.complex64, ["n", 3])],
        [vi("y", np.complex64, ["n", 3])],
    )


def test_a_wrong_rewrite_fails():
    original = _mul_model()
    out, _ = decomplex(original)
    # Break the rewrite: the imaginary part's Add becomes a Sub.
    add = next(n for n in out.graph.node if n.op_type == "Add")
    add.op_type = "Sub"
    result = validate(original, out)
    assert not result.passed
    assert result.outputs[0].max_abs > 0.1


def test_imaginary_part_alone_is_checked():
    expected = np.array([1 + 1j, 2 - 1j], np.complex64)
    actual = expected.copy()
    actual[1] = 2 - 1.01j
    packed = actual.reshape(2, 1).view(np.float32)
    assert not _compare("y", expected, packed, 1e-5, 1e-4).passed
    assert _compare("y", expected, expected.reshape(2, 1).view(np.float32), 0, 0).passed


def test_shape_mismatch_fails_with_note():
    r = _compare("y", np.zeros((2, 3), np.complex64), np.zeros((3, 2, 2), np.float32), 1, 1)
    assert not r.passed and "expected (2, 3, 2)" in r.note


def test_nan_matches_nan_only():
    e = np.array([np.nan, 1.0], np.float32)
    assert _compare("y", e, e.copy(), 0, 0).passed
    assert not _compare("y", e, np.array([0.0, 1.0], np.float32), 0, 0).passed


def test_infinities_are_matched_exactly():
    e = np.array([np.inf, -np.inf + 1j, 1.0], np.complex64)
    packed = e.reshape(3, 1).view(np.float32)
    assert _compare("y", e, packed, 1e-5, 1e-4).passed
    for wrong in ([-160.0, 0.0], [np.inf, 0.0], [-np.inf, 1.5]):
        actual = packed.copy()
        actual[1] = wrong
        assert not _compare("y", e, actual, 1e-5, 1e-4).passed, wrong


def test_symbolic_dims_follow_overrides():
    shapes = resolve_shapes(_mul_model(), {"a": (5, 3)})
    assert shapes == {"a": (5, 3), "b": (5, 3)}
    assert resolve_shapes(_mul_model()) == {"a": (2, 3), "b": (2, 3)}


@pytest.mark.parametrize(
    "overrides, message",
    [({"nope": (1,)}, "not an input"), ({"a": (1, 2, 3)}, "gives 3 dims for 'a', which has 2")],
)
def test_bad_overrides(overrides, message):
    with pytest.raises(DecomplexError, match=message):
        resolve_shapes(_mul_model(), overrides)


def _table_model():
    """z [batch, 8, 6] times a table; w shares z's batch."""
    return make_model(
        [helper.make_node("Mul", ["z", "w"], ["y"])],
        [vi("z", np.complex64, ["batch", 8, 6]), vi("w", np.complex64, ["batch", 1, 1])],
        [vi("y", np.complex64, ["batch", 8, 6])],
    )


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"z": (4, 8, 7)}, "--input-shapes gives 7 for dim 2 of 'z', which is fixed at 6"),
        ({"z": (4, 0, 6)}, "--input-shapes gives 0 for dim 1 of 'z', which is fixed at 8"),
        ({"z": (0, 8, 6)}, "gives 0 for dim 0 ('batch') of 'z': validation on an empty input"),
        ({"z": (4, 8, 6), "w": (3, 1, 1)}, "dim 0 ('batch') of 'w' the size 3, and 'z' gives it 4"),
        ({"q": (4, 8, 6)}, "--input-shapes names 'q', which is not an input; inputs: w, z"),
    ],
)
def test_overrides_that_do_not_fit_the_model_name_the_input_and_dim(overrides, message):
    with pytest.raises(OptionError) as info:
        resolve_shapes(_table_model(), overrides)
    assert message in str(info.value)


def test_overrides_name_the_option_they_came_from():
    with pytest.raises(OptionError, match="--trt-opt-shapes gives 7 for dim 2"):
        resolve_shapes(_table_model(), {"z": (4, 8, 7)}, "--trt-opt-shapes")


def test_an_input_of_unknown_rank_takes_any_override():
    m = make_model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [vi("x", np.float32, None)],
        [vi("y", np.float32, None)],
    )
    assert resolve_shapes(m, {"x": (2, 5)}) == {"x": (2, 5)}


def test_providers_by_short_or_full_name_in_any_case():
    assert resolve_providers("cpu") == ["CPUExecutionProvider"]
    assert resolve_providers(["CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert resolve_providers("Cpu") == ["CPUExecutionProvider"]


def test_providers_onnxruntime_lacks_are_refused_with_what_it_has():
    available = ort.get_available_providers()
    if "CUDAExecutionProvider" in available:
        assert resolve_providers("cuda,cpu") == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    else:
        with pytest.raises(OptionError) as info:
            resolve_providers("cuda,cpu")
        text = str(info.value)
        assert "no CUDAExecutionProvider; it has " + ", ".join(available) in text
        assert "onnx-decomplex[gpu]" in text
    with pytest.raises(OptionError, match="unknown execution provider 'gpu'"):
        resolve_providers("gpu")
    with pytest.raises(OptionError, match="'CPU' is given twice"):
        resolve_providers("cpu,CPU")


def test_validation_runs_on_the_providers_asked_for():
    original = _mul_model()
    out, _ = decomplex(original)
    result = validate(original, out, providers=["CPUExecutionProvider"])
    assert result.passed and result.runtime == "onnxruntime (CPUExecutionProvider)"


@pytest.mark.skipif(
    "CUDAExecutionProvider" in ort.get_available_providers(), reason="CUDA is available here"
)
def test_a_provider_that_does_not_load_is_an_error_not_a_fallback():
    # onnxruntime, asked for a provider it lacks, runs on the CPU with a warning.
    original = _mul_model()
    out, _ = decomplex(original)
    with pytest.raises(DecomplexError, match="could not use CUDAExecutionProvider"):
        validate(original, out, providers=["CUDAExecutionProvider"])


def test_replay_outputs_are_complex_by_output_name_with_the_expected_beside():
    original = _mul_model()
    out, _ = decomplex(original)
    result = validate(original, out)
    arrays = replay_outputs(result)
    assert sorted(arrays) == ["expected:y", "y"]
    assert arrays["y"].dtype == np.complex64 and arrays["y"].shape == (2, 3)
    np.testing.assert_allclose(arrays["y"], arrays["expected:y"], rtol=1e-5, atol=1e-6)
    # As a file, it is what --load-inputs reads as saved outputs.
    with np.load(io.BytesIO(npz_bytes({**arrays, "file": np.zeros(1)}))) as saved:
        assert sorted(saved.files) == ["expected:y", "file", "y"]
        np.testing.assert_array_equal(saved["y"], arrays["y"])


def _product_model():
    """y = z * w, elementwise: each output element depends on one element of each."""
    return make_model(
        [helper.make_node("Mul", ["z", "w"], ["y"])],
        [vi("z", np.complex64, [4, 8]), vi("w", np.complex64, [4, 8])],
        [vi("y", np.complex64, [4, 8])],
    )


def test_the_errors_split_by_what_depends_on_edge_values():
    model = _product_model()
    out, _ = decomplex(model)
    (o,) = validate(model, out).outputs
    assert o.passed and o.edges is not None
    # Each input holds 12 edge values at the same spread positions: 12 elements meet them.
    assert o.edges.elements == len(EDGE_VALUES)
    assert o.edges.ordinary_max_tol < 0.01 and o.edges.ordinary_max_rel < 1e-6
    assert o.edges.not_finite >= 1  # 1e20 * 1e20 overflows float32 in the reference
    # Given inputs that hold no edge values, there is nothing to split.
    rng = np.random.default_rng(0)
    feeds = {k: (rng.standard_normal((4, 8)) + 1j * rng.standard_normal((4, 8))).astype(
        np.complex64) for k in ("z", "w")}  # fmt: skip
    (plain,) = validate(model, out, feeds).outputs
    assert plain.edges is None


def test_a_wrong_ordinary_element_shows_beside_edge_values():
    model = _product_model()
    out, _ = decomplex(model)
    for node in out.graph.node:
        if node.op_type == "Sub":  # re = zr wr - zi wi: swapped, a sign a buggy rule flips
            node.input[0], node.input[1] = node.input[1], node.input[0]
            break
    (o,) = validate(model, out).outputs
    assert not o.passed and o.edges is not None
    assert o.edges.ordinary_max_tol > 1  # the ordinary elements show it
