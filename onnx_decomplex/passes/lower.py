"""Pass `lower`: ops the target runs slowly, inaccurately, or not at all, in other ops
(target options).

- every target, in a model the rewrite makes: a DFT of static length becomes MatMuls by
  matrices computed in float64 and rounded once (dense up to length 12, four-step where
  the length factors, else Bluestein's chirp-z), since onnxruntime's own float32 DFT is
  far less accurate than a float32 FFT (docs/transforms.md); but for tensorrt, one of
  dynamic length stays, with a note.
- tensorrt: what TensorRT's parser lacks is lowered (DFT and STFT to MatMul, Compress
  to Gather), and float64 narrowed to float32 unless `keep_double`.
- onnxruntime: a rotation by a position table, however written, becomes one
  RotaryEmbedding node (`rotation`); a chain affine in one real signal that holds a DFT,
  or is long and small (an unrolled recurrence), becomes one product where cheaper
  (`affine`); an STFT of frames up to `MATMUL_DFT_MAX_LENGTH` becomes a Gather of its
  frames and a MatMul (0.51 of the STFT's time at 256); a longer one, or one whose
  length is not static, stays as it is; an Einsum of two operands becomes one MatMul,
  with the Transposes and Reshapes that place its letters.
- onnx: from opset 23, a rotation by a position table becomes the standard
  RotaryEmbedding node.
"""

from __future__ import annotations

from ..affine import fuse
from ..options import Options
from ..rotation import rotations
from ..trt.lower import Lowered, lower, lower_for_tensorrt
from ..trt.narrow import Narrowed, narrow_double
from .state import State
from .tidy import fill_output_shapes

FASTER_ON_ONNXRUNTIME = {"DFT", "STFT", "Einsum"}
"""The lowerings measured faster than the op itself on onnxruntime's CPU."""

ACCURATE = {"DFT"}
"""What the default target lowers, for accuracy alone (`trt.lower`)."""

MATMUL_DFT_MAX_LENGTH = 256
"""The longest STFT frame the onnxruntime target runs as a MatMul. Over 2^20 real
values, one thread, the dense MatMul takes 0.06 (length 8), 0.30 (64), 0.48 (128) and
0.75 (256) of onnxruntime's DFT, and 1.31 at 512."""


def run(state: State, options: Options) -> State:
    target, report = options.target.target, state.report
    report.target = target
    # Found by what they compute, on a model the rewrite made (one it left alone stays so).
    found = rotations(state.model, contrib=target == "onnxruntime") if state.rewritten else []
    narrowed = Narrowed()
    if target == "onnxruntime":
        if state.rewritten:
            found += fuse(state.model, MATMUL_DFT_MAX_LENGTH)
        out, lowered = lower(state.model, state.opset, FASTER_ON_ONNXRUNTIME, strict=False,
                             max_length=MATMUL_DFT_MAX_LENGTH)  # fmt: skip
    elif target == "tensorrt":
        out, lowered = lower_for_tensorrt(state.model, state.opset)
        if not options.target.keep_double:
            out, narrowed = narrow_double(out, state.external_dir)
    elif state.rewritten:
        out, lowered = lower(state.model, state.opset, ACCURATE, strict=False)
    else:
        out, lowered = state.model, Lowered()
    report.lowered, report.lowering_notes = lowered.ops, [*found, *lowered.notes]
    report.matrix_bytes = lowered.matrix_bytes
    report.narrowed, report.clamped = narrowed.places, narrowed.clamped
    if out is not state.model or found:
        fill_output_shapes(out)
        state.model = out
    return state
