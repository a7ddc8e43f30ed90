"""What validation reports, and the outputs `--save-outputs` writes."""

import numpy as np
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.validate import (
    OutputResult,
    ValidationResult,
    load_saved,
    npz_bytes,
    replay_outputs,
)


def test_a_result_passes_when_every_output_does():
    ok, bad = OutputResult("y", True, 0.0, 0.0), OutputResult("q", False, 1.0, 1.0)
    assert ValidationResult([ok, ok]).passed and not ValidationResult([ok, bad]).passed
    assert ValidationResult().passed, "no output fails"


def test_replay_outputs_are_complex_by_output_name_with_the_expected_beside(tmp_path):
    original = make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"]), helper.make_node("Abs", ["a"], ["r"])],
        [vi("a", np.complex64, ["n", 3]), vi("b", np.complex64, ["n", 3])],
        [vi("y", np.complex64, ["n", 3]), vi("r", np.float32, ["n", 3])],
    )
    out, _ = decomplex(original)
    result = validate(original, out)
    arrays = replay_outputs(result)
    assert sorted(arrays) == ["expected:r", "expected:y", "r", "y"]
    assert arrays["y"].dtype == np.complex64 and arrays["y"].shape == (2, 3)
    assert arrays["r"].dtype == np.float32 and arrays["r"].shape == (2, 3)
    np.testing.assert_allclose(arrays["y"], arrays["expected:y"], rtol=1e-5, atol=1e-6)
    # As a file beside the inputs, it is what --load-inputs reads as saved outputs.
    path = tmp_path / "run.npz"
    path.write_bytes(npz_bytes({**arrays, "a": np.zeros((2, 3), np.complex64),
                                "b": np.zeros((2, 3), np.complex64)}))  # fmt: skip
    _, saved = load_saved(str(path), original)
    np.testing.assert_array_equal(saved[0], result.expected[0])


def test_an_output_of_the_wrong_shape_is_replayed_as_the_runtime_gave_it():
    wrong = np.zeros((3, 2), np.float32)  # not the [2, 2] packed layout of a complex [2]
    result = ValidationResult([OutputResult("y", False, np.inf, np.inf)],
                              expected=[np.zeros(2, np.complex64)], actual=[wrong])  # fmt: skip
    assert replay_outputs(result)["y"] is wrong
