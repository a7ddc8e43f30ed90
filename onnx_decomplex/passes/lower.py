"""Pass `lower`: for the tensorrt target, what TensorRT's parser lacks is lowered
(DFT and STFT to MatMul, Compress to Gather), and float64 narrowed to float32 unless
`keep_double` (target options)."""

from __future__ import annotations

from ..options import Options
from ..trt.lower import lower_for_tensorrt
from ..trt.narrow import Narrowed, narrow_double
from .state import State
from .tidy import fill_output_shapes


def run(state: State, options: Options) -> State:
    if options.target.target != "tensorrt":
        return state
    report = state.report
    out, lowered = lower_for_tensorrt(state.model, state.opset)
    narrowed = Narrowed()
    if not options.target.keep_double:
        out, narrowed = narrow_double(out, state.external_dir)
    report.lowered, report.lowering_notes = lowered.ops, lowered.notes
    report.matrix_bytes = lowered.matrix_bytes
    report.narrowed, report.clamped = narrowed.places, narrowed.clamped
    if out is not state.model:
        fill_output_shapes(out)
        state.model = out
    return state
