"""Every transform the tool writes is accurate at float32's level: against an exact
float64 FFT, its error is at most twice TensorFlow's own float32 FFT's on the same
signal (fixtures/transforms/errors.json, made by make_errors.py there), at every length
and kind, on every target. onnxruntime's own float32 DFT misses that by 4 (powers of
two) to thousands of times (long primes)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from helpers import init, make_model, vi
from onnx import helper

from onnx_decomplex import decomplex

FOLDER = Path(__file__).resolve().parents[3] / "fixtures" / "transforms"
TENSORFLOW = json.loads((FOLDER / "errors.json").read_text())
spec = importlib.util.spec_from_file_location("make_errors", FOLDER / "make_errors.py")
CASES = importlib.util.module_from_spec(spec)
spec.loader.exec_module(CASES)  # its signals and exact results; it imports TensorFlow late


def _model(kind: str, x: np.ndarray, length: int):
    """TensorFlow's raw op of `kind` on `x`, as tf2onnx leaves it."""
    op, inits, inputs = kind.upper(), [], ["x"]
    if kind in ("rfft", "irfft"):
        inits, inputs = [init("n", np.array([length], np.int32))], ["x", "n"]
    out = np.float32 if kind == "irfft" else np.complex64
    node = helper.make_node(op, inputs, ["y"])
    return make_model([node], [vi("x", x.dtype, list(x.shape))], [vi("y", out, None)], inits)


def _packed(x: np.ndarray) -> np.ndarray:
    return np.stack([x.real, x.imag], -1).astype(np.float32) if np.iscomplexobj(x) else x


def _unpacked(y: np.ndarray, kind: str) -> np.ndarray:
    return y if kind == "irfft" else y[..., 0] + 1j * y[..., 1]


OTHER_TARGETS = {50, 97}
"""The lengths also run on the onnxruntime and tensorrt targets, whose forms are the
default target's: one four-step, one Bluestein's."""


def _cases() -> list:
    """Every case on the default target, lengths past 1024 slow (Bluestein's at 4099
    takes seconds); some on the other targets too."""
    cases = []
    for case in sorted(TENSORFLOW, key=lambda c: int(c.split("_")[1])):
        length = int(case.split("_")[1])
        marks = [pytest.mark.slow] if length > 1024 else []
        for target in ["onnx", *(["onnxruntime", "tensorrt"] if length in OTHER_TARGETS else [])]:
            cases.append(pytest.param(case, target, marks=marks))
    return cases


@pytest.mark.parametrize(("case", "target"), _cases())
def test_a_transform_is_at_most_twice_as_far_from_exact_as_tensorflows(case, target):
    kind, length = case.split("_")[0], int(case.split("_")[1])
    x = CASES.signal(kind, length)
    out, report = decomplex(_model(kind, x, length), target=target)
    # (onnxruntime's target may read the whole chain as one product instead)
    assert "DFT" not in {n.op_type for n in out.graph.node}, report.lowering_notes
    session = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": _packed(x)})
    error = CASES.error(_unpacked(y, kind), CASES.exact(kind, x, length))
    assert error <= 2 * TENSORFLOW[case], (error / TENSORFLOW[case], report.lowering_notes)
