"""Pass `lower`: the target's forms, in the order its module lists them
(`targets`; target options). Each form applies to a model the rewrite made or one that
holds a DFT or an STFT (complex values in ONNX's own packed layout), and some to every
model (what the runtime cannot run as written)."""

from __future__ import annotations

from ..options import Options
from ..targets import Lowering
from ..targets.common.lowering import holds
from ..targets.common.transforms import TRANSFORM_OPS
from .state import State
from .tidy import fill_output_shapes


def run(state: State, options: Options) -> State:
    target, report = options.target.chosen, state.report
    report.target = target.name
    step = target.lower(
        Lowering(
            state.model, state.opset, state.rewritten,
            transforms=holds(state.model, TRANSFORM_OPS),
            keep_double=options.target.keep_double, external_dir=state.external_dir,
        )
    )  # fmt: skip
    report.lowered, report.lowering_notes = step.ops, step.notes
    report.matrix_bytes = step.matrix_bytes
    report.narrowed += step.narrowed
    report.clamped += step.clamped
    if step.model is not state.model or step.notes:
        fill_output_shapes(step.model)
        state.model = step.model
    return state
