"""`--target tensorrt` (implied by `--build-engine`): what TensorRT's ONNX parser takes.
Its result is linted against the parser table (`trt.lint`) and built by `trt.engine`."""

from __future__ import annotations

from ..common.lowering import LOWERINGS
from ..shared import NARROW, ROTATION
from ..target import Target, TargetForm, lowers
from . import parser  # noqa: F401  (it registers its lowerings)

TENSORRT = Target(
    name="tensorrt",
    summary="also lower what TensorRT's parser lacks (DFT/STFT to MatMul, Compress to "
    "Gather), narrow float64 to float32, and lint the result; implied by --build-engine",
    runtime="onnxruntime",
    runs_on="TensorRT",
    narrows=True,
    lints=True,
    forms=(
        ROTATION,
        TargetForm(
            "parser gaps",
            "what TensorRT's parser lacks, in ops it takes: DFT and STFT as the accurate "
            "MatMul forms (`common.transforms`), Compress as a Gather (`parser`), NonZero "
            "of a float, an Einsum of two operands as one MatMul; a node that cannot be "
            "lowered (a transform of dynamic length) is an error",
            lowers(frozenset(LOWERINGS), refuse_as="cannot lower for TensorRT"),
            every_model=True,
        ),
        NARROW,
    ),
)
