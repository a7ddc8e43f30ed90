"""`--target onnx`, the default: standard ops only, for any runtime."""

from __future__ import annotations

from .shared import ROTATION, TRANSFORMS
from .target import Target

ONNX = Target(
    name="onnx",
    summary="standard ops only, for any runtime, a DFT of static length as MatMuls "
    "accurate at float32's level and an Einsum of two operands as one MatMul",
    runtime="onnxruntime",
    forms=(ROTATION, TRANSFORMS),
)
