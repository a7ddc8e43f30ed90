"""DFT and STFT fed a native complex value.

ONNX's DFT and STFT take their signal as a real tensor with a trailing axis of
1 (real) or 2 (re, im), and return (re, im) in a trailing axis of 2: the packed
layout. A complex signal z of shape S is passed as its packed tensor S + [2], and
the result is read as a complex value of the output's shape without its last axis:

    DFT(z, ...)   -> DFT(p, ...), its output packed     # axes count as in DFT's own input
    STFT(z, ...)  -> STFT(p, ...), its output packed
    DFT(Cast(x))  -> DFT(x[..., None], ...)             # a real signal: no zero part made

So a DFT of a complex value means what it would mean had the caller packed it. A
one-sided transform needs a real signal, and is refused for a complex one.

For the onnxruntime target, a spectral filter of a real signal by a constant w, however
it is spelled, becomes one product once rewritten (`affine`):

    DFT(Mul(DFT(Cast(x)), w), inverse=1)  -> x M^T,  M = F^-1 diag(w) F
"""

from __future__ import annotations

import onnx

from .registry import rule


def _signal_complex(node, kinds):
    dtype = kinds[0]
    return [dtype] + [None] * (len(node.outputs) - 1)


def _onesided(node, opset: int) -> bool:
    """The node's `onesided`, or its op's default in the spec (0 for DFT, 1 for STFT)."""
    if "onesided" in node.attrs:
        return bool(node.attrs["onesided"])
    return bool(onnx.defs.get_schema(node.op, opset).attributes["onesided"].default_value.i)


def _refuse(node, kinds, opset):
    if any(k is not None for k in kinds[1:]):
        return "only the signal may be complex"
    if _onesided(node, opset):
        return "a one-sided transform needs a real signal"
    return None


@rule("DFT", "STFT", infer=_signal_complex, refuse=_refuse)
def transform(ctx, node):
    x, y = node.inputs[0], node.outputs[0]
    rest = [t if t.name else None for t in node.inputs[1:]]
    parts = ctx.known_zero_parts(x) if ctx.has_known_zero(x) else None
    if parts is not None and parts[1] is None:
        signal = ctx.unsqueeze(parts[0], [-1])  # the op's own spelling of a real signal
    else:
        signal = ctx.packed(x)
    ctx.set_packed(y, ctx.emit(node.op, [signal, *rest], node.attrs))
    # Shape inference on the original read the signal's last axis as (re, im); the
    # logical shape is re-derived from the rewritten graph instead.
    y.shape = None
    ctx.explain(f"{node.op} of the packed signal; its output is the packed result")
