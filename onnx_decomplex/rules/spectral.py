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

For the onnxruntime target, a spectral filter of a real signal by a constant w is one
product by its matrices (see `_filter`):

    DFT(Mul(DFT(Cast(x)), w), inverse=1)  -> x M^T,  M = F^-1 diag(w) F
"""

from __future__ import annotations

import numpy as np
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
    if _filter(ctx, node):
        return
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


FILTER_MAX_LENGTH = 128
"""The longest signal `_filter` takes: its products cost n^2 a signal, against n log n
for onnxruntime's DFTs. For 64 channels, one thread, the block takes 0.24 of the one
with DFT nodes at 128, 1.00 at 256 and 3.92 at 512."""

FILTER_MAX_BYTES = 64 << 20
"""The largest set of filter matrices `_filter` builds (one n x n per channel)."""


def _last_axis(ctx, node, rank: int) -> bool:
    """Whether a DFT transforms the last axis of its signal of logical rank `rank`, at
    the signal's own length."""
    given = [t for t in node.inputs[1:] if t.name]
    if ctx.opset >= 20:
        return not given  # no dft_length or axis of its own: the default, -2 of packed
    return not given and int(node.attrs.get("axis", 1)) in (-2, rank - 1)


def _filter(ctx, node) -> bool:
    """A spectral filter, IDFT(DFT(x) w) of a real signal x by a constant w, as two
    real products by the filter's matrices, on the onnxruntime target:

        IDFT(DFT(x) w) = M x,   M = F^-1 diag(w) F   (one n x n per channel of w)
        (Re, Im) = (x Re(M)^T, x Im(M)^T)             # a real output drops Im's product

    Both transforms run along the last axis, two-sided, at the signal's length.
    """
    if not ctx.contrib or node.op != "DFT" or not node.attrs.get("inverse", 0):
        return False
    g, y = node.inputs[0], node.outputs[0]
    product = g.inputs[0] if len(g.inputs) == 1 else None
    if product is None or product.op != "Mul":
        return False
    for f, w in (product.inputs, reversed(product.inputs)):
        forward = f.inputs[0] if len(f.inputs) == 1 else None
        value = ctx.constant(w)
        if value is None or forward is None or forward.op != "DFT":
            continue
        if forward.attrs.get("inverse", 0) or _onesided(forward, ctx.opset):
            continue
        signal, shape = forward.inputs[0], ctx.shape(forward.inputs[0])
        if shape is None or not isinstance(shape[-1], int) or not ctx.has_known_zero(signal):
            continue
        if not (_last_axis(ctx, forward, len(shape)) and _last_axis(ctx, node, len(shape))):
            continue
        x, im = ctx.known_zero_parts(signal)
        if im is not None or x is None or not ctx.broadcasts_into(w, signal):
            continue
        n = shape[-1]
        w_shape = [1] * (len(shape) - value.ndim) + list(value.shape)
        if w_shape[-1] != n or n > FILTER_MAX_LENGTH:
            continue
        dtype = ctx.real_dtype(y)
        if int(np.prod(w_shape[:-1])) * n * n * np.dtype(dtype).itemsize > FILTER_MAX_BYTES:
            continue
        eye = np.eye(n)
        matrix = np.fft.ifft(eye, axis=0) @ (
            value.reshape(w_shape)[..., :, None] * np.fft.fft(eye, axis=0)
        )
        rows = ctx.unsqueeze(x, [-2])  # [..., 1, n]: one row per signal
        parts = [ctx.squeeze(ctx.emit("MatMul", [rows, np.swapaxes(p, -1, -2).astype(dtype)]), [-2])
                 for p in (matrix.real, matrix.imag)]  # fmt: skip
        ctx.set_pair(y, *parts)
        ctx.explain(f"a spectral filter, IDFT(DFT(x) w): products by F^-1 diag(w) F, {n}x{n}")
        return True
    return False
