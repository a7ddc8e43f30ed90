"""Pass `lint`: for the tensorrt target, what TensorRT's parser would get, checked
against the parser table (`onnx_decomplex.trt.lint`); TensorRT is not needed."""

from __future__ import annotations

from ..options import Options
from ..trt.lint import lint
from .state import State


def run(state: State, options: Options) -> State:
    if options.target.target == "tensorrt":
        state.lint = lint(state.model)
    return state
