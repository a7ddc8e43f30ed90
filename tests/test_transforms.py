"""Every transform the tool writes is accurate at float32's level: against an exact
float64 FFT, its error is at most twice TensorFlow's own float32 FFT's on the same
signal (fixtures/transforms/errors.json, made by make_errors.py there), at every length
and kind, on the onnxruntime and tensorrt targets, which write their own transforms.
onnxruntime's own float32 DFT, which the default target keeps, misses that by 4
(powers of two) to thousands of times (long primes)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex import decomplex

FOLDER = Path(__file__).resolve().parent.parent / "fixtures" / "transforms"
TENSORFLOW = json.loads((FOLDER / "errors.json").read_text())
spec = importlib.util.spec_from_file_location("make_errors", FOLDER / "make_errors.py")
CASES = importlib.util.module_from_spec(spec)
spec.loader.exec_module(CASES)  # its signals and exact results; it imports TensorFlow late


def _model(kind: str, length: int, n_in: int, parts: int):
    """One DFT-20 of the packed signal's axis 1, as the tool writes TensorFlow's."""
    inverse, onesided = kind in ("ifft", "irfft"), kind in ("rfft", "irfft")
    inits = [helper.make_tensor("axis", 7, [], [1]), helper.make_tensor("n", 7, [], [length])]
    node = helper.make_node("DFT", ["x", "n", "axis"], ["y"], inverse=int(inverse),
                            onesided=int(onesided))  # fmt: skip
    return make_model([node], [vi("x", np.float32, [CASES.ROWS, n_in, parts])],
                      [vi("y", np.float32, None)], inits, opset=20)  # fmt: skip


def _packed(x: np.ndarray) -> np.ndarray:
    if np.iscomplexobj(x):
        return np.stack([x.real, x.imag], -1).astype(np.float32)
    return x[..., None].astype(np.float32)


def _unpacked(y: np.ndarray) -> np.ndarray:
    return y[..., 0] + 1j * y[..., 1] if y.shape[-1] == 2 else y[..., 0]


def _cases() -> list:
    """Every case on every target; lengths past 1024 (Bluestein's at 4099 takes seconds)
    are slow, and the tensorrt target, whose forms are the others', takes none of them."""
    cases = []
    for case in sorted(TENSORFLOW, key=lambda c: int(c.split("_")[1])):
        long = int(case.split("_")[1]) > 1024
        for target in ["onnxruntime", *(["tensorrt"] if not long else [])]:
            cases.append(pytest.param(case, target, marks=[pytest.mark.slow] if long else []))
    return cases


@pytest.mark.parametrize(("case", "target"), _cases())
def test_a_transform_is_at_most_twice_as_far_from_exact_as_tensorflows(case, target):
    kind, length = case.split("_")[0], int(case.split("_")[1])
    x = CASES.signal(kind, length)
    packed = _packed(x)
    out, report = decomplex(_model(kind, length, packed.shape[1], packed.shape[2]), target=target)
    assert report.lowered == {"DFT": 1}, report.lowering_notes
    session = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": packed})
    error = CASES.error(_unpacked(y), CASES.exact(kind, x, length))
    assert error <= 2 * TENSORFLOW[case], (error / TENSORFLOW[case], report.lowering_notes)
