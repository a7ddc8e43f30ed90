"""Pass `lint`: for a target that lints (tensorrt), what TensorRT's parser would get, checked
against the parser table (`onnx_decomplex.trt.lint`); TensorRT is not needed."""

from __future__ import annotations

from ..options import Options
from ..trt.lint import lint
from .state import State


def run(state: State, options: Options) -> State:
    if options.target.chosen.lints:
        state.lint = lint(state.model)
    return state
