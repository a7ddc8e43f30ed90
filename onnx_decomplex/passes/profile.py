"""Pass `profile`: with `--build-engine`, the TensorRT shape profile, then TensorRT and
a GPU, checked before any work (a bad profile is refused where TensorRT is missing
too). The target becomes "tensorrt", and validation takes the profile's opt shapes
unless `input_shapes` says otherwise."""

from __future__ import annotations

from ..options import Options
from ..targets.tensorrt import TENSORRT
from ..trt.engine import preflight
from ..trt.profiles import build_profile
from ..validate import resolve_shapes
from .state import State


def run(state: State, options: Options) -> State:
    if state.engine is None:
        return state
    model, shapes = state.model, options.validate.input_shapes
    state.profile = build_profile(model, state.engine.shapes)
    if not shapes:
        shapes = state.profile.logical("opt")
        resolve_shapes(model, shapes, "--trt-opt-shapes")
    else:
        state.profile.check_within(resolve_shapes(model, shapes))
    state.options = options.replace(target=TENSORRT.name, input_shapes=shapes)
    state.toolkit = preflight(state.engine.fp16)  # before any work: nothing to undo
    return state
