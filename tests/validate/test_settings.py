"""What one `validate` call is asked to do."""

import dataclasses
import time

import numpy as np
import pytest

from onnx_decomplex.options import ValidateOptions
from onnx_decomplex.validate import Deadline, Settings


def test_the_defaults_are_the_command_lines():
    settings, flags = Settings(), ValidateOptions()
    assert (settings.atol, settings.rtol, settings.seed) == (flags.atol, flags.rtol, flags.seed)
    assert settings.timeout == flags.timeout and settings.random_edges == flags.edge_values


def test_what_the_report_names():
    assert Settings().reference_name == "onnx.reference"
    assert Settings(expected=[np.zeros(1)]).reference_name == "saved outputs"
    named = Settings(expected=[np.zeros(1)], reference="expected outputs y.npz")
    assert named.reference_name == "expected outputs y.npz"
    assert Settings(providers=["CPUExecutionProvider"]).runtime_name == (
        "onnxruntime (CPUExecutionProvider)")  # fmt: skip
    engine = Settings(providers=["CPUExecutionProvider"], runner=len, runtime="TensorRT 10.1")
    assert engine.runtime_name == "TensorRT 10.1", "a runner is not onnxruntime"


def test_a_deadline_given_is_shared_and_seconds_start_a_new_one():
    shared = Deadline(5.0)
    settings = Settings(timeout=shared)
    assert settings.deadline() is shared and settings.deadline() is shared
    fresh = Settings(timeout=5.0)
    first = fresh.deadline()
    time.sleep(0.01)
    assert fresh.deadline().end > first.end
    assert Settings(timeout=None).deadline().left() is None


def test_settings_are_frozen_and_compare_without_their_arrays():
    settings = Settings(expected=[np.zeros(2)])
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.atol = 1.0
    assert settings == Settings(expected=[np.ones(2)])
    assert settings != Settings(atol=1.0)
    assert not Settings(edges=False).random_edges
