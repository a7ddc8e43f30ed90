"""A complex value times a position table, as one RotaryEmbedding node: the
standard one from opset 23, or onnxruntime's own (com.microsoft) at any opset when
the target is onnxruntime.

RoPE views each (even, odd) pair of a head vector as a complex number and multiplies
it by a table that varies with position and frequency, not with the head:

    y[b, s, h, k] = z[b, s, h, k] * w[s, k]

RotaryEmbedding with interleaved=1 computes exactly that on the packed layout, which
is already interleaved: (x1 cos - x2 sin, x1 sin + x2 cos) with cos = Re w and
sin = Im w. Nothing in it requires |w| = 1, so any complex table of that shape
qualifies, constant or not.

The node takes X as [B, S, H*D] (with num_heads) or [B, H, S, D], and cos/sin caches
of [B, S, D/2] when it is given no position ids. Those 3-D caches are the table
broadcast to [B, S, D/2]: that covers whatever the table broadcasts over (batch,
sequence, frequency). The op has no double type, so only complex64 is rewritten so.

onnxruntime's com.microsoft.RotaryEmbedding takes X as [B, S, H*D] (with num_heads)
or [B, H, S, D], a position offset, and 2-D caches of [positions, D/2]: the table
at positions 0, 1, ..., S - 1. It serves tables that do not vary with the batch.
Below opset 23 with the onnxruntime target it is the node; from 23 the standard one
is, which onnxruntime 1.32 runs faster on the CPU (see `bench/`).
"""

from __future__ import annotations

import numpy as np

from ..shapes import static

ROTARY_OPSET = 23
CONTRIB = "com.microsoft"


def _layout(z_shape: list, w_shape: list) -> tuple[int, int | None] | None:
    """(sequence axis, head axis) of z for the node's layouts, or None.

    z is [B, S, D/2] (one head), [B, S, H, D/2] or [B, H, S, D/2]; the table must
    not vary along the head axis.
    """
    rank = len(z_shape)
    if rank not in (3, 4) or len(w_shape) > rank:
        return None
    w = [1] * (rank - len(w_shape)) + list(w_shape)
    if rank == 3:
        return 1, None
    if w[2] == 1:
        return 1, 2
    if w[1] == 1:
        return 2, 1
    return None


def _cache_parts(ctx, w, rank: int, head: int | None, dtype):
    """Re w and Im w at [Bw, Sw, Kw]: aligned to z's rank, without the head axis.

    Numpy arrays for a constant table; tensors otherwise. None when a runtime table
    has more than one unknown dim, which one Reshape cannot spell.
    """
    shape = [1] * (rank - len(ctx.shape(w))) + list(ctx.shape(w))
    if head is not None:
        del shape[head]
    value = ctx.constant(w)
    if value is not None:
        value = value.reshape(shape)
        return value.real.astype(dtype), value.imag.astype(dtype)
    unknown = [d for d in shape if not isinstance(d, int)]
    if len(unknown) > 1:
        return None
    dims = np.array([d if isinstance(d, int) else -1 for d in shape], np.int64)
    return tuple(ctx.emit("Reshape", [p, dims]) for p in ctx.pair(w, dtype))


def _fits(ctx, z, w, dtype):
    """(z's shape, the table's shape aligned to z's rank, sequence axis, head axis)
    when y = z w can be one rotary node at all; else why not (a string), or None when
    w is no position table of z (it varies along the heads, or widens the product)."""
    z_shape, w_shape = ctx.shape(z), ctx.shape(w)
    if z_shape is None or w_shape is None or not ctx.broadcasts_into(w, z):
        return None
    layout = _layout(z_shape, w_shape)
    if layout is None:
        return None
    aligned = [1] * (len(z_shape) - len(w_shape)) + list(w_shape)
    if np.dtype(dtype) != np.float32:
        return "the node has no double type"
    if not ctx.has_packed(z) or ctx.prefers_pair(z):
        return "the value is in (re, im) form, and the node reads the packed one"
    if 0 in z_shape:
        return "the value has no elements"  # Reshape(0, 0, -1) cannot infer -1 from none
    return z_shape, aligned, *layout


def rotate(ctx, y, z, w, dtype) -> bool:
    """y = z w as a RotaryEmbedding node, when the opset (or the target), the precision
    and the shapes allow; where they do not though w is a position table of z, says
    why (`-v`).

    z must already be packed (the node reads the interleaved layout), and w must
    broadcast into z without widening it.
    """
    standard = ctx.opset >= ROTARY_OPSET
    if not (standard or ctx.contrib):
        return False
    fits = _fits(ctx, z, w, dtype)
    if fits is None:
        return False
    why = (
        fits
        if isinstance(fits, str)
        else (_standard if standard else _contrib)(ctx, y, z, w, dtype, *fits)
    )
    if why is None:
        return True
    # A table broadcast into z, or a constant one; else a product of two values alike.
    if ctx.shape(w) != ctx.shape(z) or ctx.constant(w) is not None:
        node = "RotaryEmbedding" if standard else f"{CONTRIB}.RotaryEmbedding"
        ctx.explain(f"complex times a position table, not one {node}: {why}")
    return False


def _restored(ctx, zp, z_shape: list, three_d: bool, shape=None):
    """The target that gives the node's output back z's packed shape: a constant where
    z's dims are static past those the node keeps in place (B, S; or B, H, S), which it
    copies with 0; else zp's Shape (`shape`, where the caller made it already). A
    constant lets the cleanup merge what follows."""
    kept = 2 if three_d else 3
    if static(z_shape):
        return np.array([*z_shape, 2], np.int64)
    if static(z_shape[kept:]):
        return np.array([0] * kept + [*z_shape[kept:], 2], np.int64)
    return shape if shape is not None else ctx.emit("Shape", [zp])


def _standard(ctx, y, z, w, dtype, z_shape, aligned, seq, head) -> str | None:
    """The opset-23 node, with [B, S, D/2] caches; None when it is made, else why not."""
    rank = len(z_shape)
    heads = 1 if rank == 3 else z_shape[head]
    three_d = rank == 3 or head == 2
    if three_d and not isinstance(heads, int):
        return "the number of heads is not known"
    parts = _cache_parts(ctx, w, rank, head, dtype)
    if parts is None:
        return "the table has more than one unknown dim, which one Reshape cannot spell"

    zp = ctx.packed(z, dtype)
    target = [z_shape[0], z_shape[seq], z_shape[-1]]
    fixed = static(z_shape)
    if fixed:
        shape, to = None, np.array(target, np.int64)
    else:
        shape = ctx.emit("Shape", [zp])
        to = ctx.emit("Gather", [shape, np.array([0, seq, rank - 1], np.int64)])
    caches = []
    for part in parts:
        if fixed and isinstance(part, np.ndarray):
            caches.append(np.ascontiguousarray(np.broadcast_to(part, target)))
        else:
            caches.append(ctx.emit("Expand", [part, to]))
    x = ctx.emit("Reshape", [zp, np.array([0, 0, -1] if three_d else [0, 0, 0, -1], np.int64)])
    attrs = {"interleaved": 1, **({"num_heads": heads} if three_d else {})}
    rotated = ctx.emit("RotaryEmbedding", [x, *caches], attrs)
    back = _restored(ctx, zp, z_shape, three_d, shape)
    ctx.set_packed(y, ctx.emit("Reshape", [rotated, back]))
    ctx.explain(
        f"complex times a position table: one RotaryEmbedding ({'3-D' if three_d else '4-D'})"
    )
    return None


def _contrib(ctx, y, z, w, dtype, z_shape, aligned, seq, head) -> str | None:
    """onnxruntime's node, with [S, D/2] caches read from position 0; None when it is
    made, else why not."""
    rank = len(z_shape)
    if aligned[0] != 1:
        return "the table varies with the batch, and the node's caches with position only"
    heads = 1 if rank == 3 else z_shape[head]
    three_d = rank == 3 or head == 2
    if three_d and not isinstance(heads, int):
        return "the number of heads is not known"
    rows, cols = z_shape[seq], z_shape[-1]
    zp = ctx.packed(z, dtype)
    value = ctx.constant(w)
    if value is not None:
        if not (isinstance(rows, int) and isinstance(cols, int)):
            return "a constant table needs the sequence's length known, to fill the caches"
        table = np.broadcast_to(value.reshape(aligned[seq], aligned[-1]), (rows, cols))
        caches = [np.ascontiguousarray(p.astype(dtype)) for p in (table.real, table.imag)]
    else:
        unknown = [d for d in (aligned[seq], aligned[-1]) if not isinstance(d, int)]
        if len(unknown) > 1:
            return "the table has more than one unknown dim, which one Reshape cannot spell"
        dims = np.array([d if isinstance(d, int) else -1 for d in (aligned[seq], aligned[-1])])
        to = ctx.emit("Gather", [ctx.emit("Shape", [zp]), np.array([seq, rank - 1], np.int64)])
        caches = [
            ctx.emit("Expand", [ctx.emit("Reshape", [p, dims.astype(np.int64)]), to])
            for p in ctx.pair(w, dtype)
        ]
    x = ctx.emit("Reshape", [zp, np.array([0, 0, -1] if three_d else [0, 0, 0, -1], np.int64)])
    position = np.array([0], np.int64)
    attrs = {"interleaved": 1, **({"num_heads": heads} if three_d else {})}
    rotated = ctx.emit("RotaryEmbedding", [x, position, *caches], attrs, domain=CONTRIB)
    ctx.set_packed(y, ctx.emit("Reshape", [rotated, _restored(ctx, zp, z_shape, three_d)]))
    ctx.explain(
        f"complex times a position table: one com.microsoft.RotaryEmbedding "
        f"({'3-D' if three_d else '4-D'})"
    )
    return None
