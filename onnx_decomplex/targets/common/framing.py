"""An affine chain that frames a signal, or overlaps frames and adds them, run as one
product by blocks of the hop: a short-time transform as an expert writes it.

An STFT cuts x [L] into T frames of W samples, hop h apart, and maps each frame alone
(a window and a DFT, say): y's frame t is K [F, W] times x[a + t h : a + t h + W],
the same K for every frame. Its inverse maps each frame back and adds the frames where
they overlap. Either is one chain affine in x (`fusion`), but M ([T F, L], or its
transpose) is dense in neither case, and too large to factor: it is zero past each
frame's W columns, a strided convolution. With the frame's start moved back to a
multiple of the hop, and its kernel padded to k hops (K' [F, k h]):

    frames:   X = x as [L / h, h],  P = X [K'_0^T | ... | K'_{k-1}^T],
              y[t] = sum_j P[t + j, j-th block of F]
    overlap:  P = x [T, F] K' as [T, k, h],  y's block u = sum_j P[u - j, j]

one product and k shifted sums, where the chain gathers the frames (or scatters them)
and runs its transforms: tf.signal's STFT and inverse STFT around a mask, frames of 256
by 128, run in 0.51 of their time (onnxruntime, one thread).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .chains import Placed

TOLERANCE = 1e-5
"""How far the framing may be from M, as a share of M's largest entry: M is read in
float32 arithmetic, which leaves about 1e-7 of it elsewhere."""

MAX_BLOCKS = 8
"""The most hops a frame may span: each is a Slice (and a Pad) of its own, whose
dispatch the form's cost does not count, so a filter of many taps at a hop of 1 (a
Toeplitz M, a linear convolution) is left to the other forms."""


@dataclass
class Framed:
    """y's frames of x (`overlap` False), or x's frames overlapped and added into y.

    Attributes:
        overlap: Whether x holds the frames and y the signal.
        frames: T.
        hop: h.
        start: Where the first frame starts in the signal, a multiple of h (negative
            where it starts before it: the signal is padded with zeros).
        kernel: K', [F, k h]: a frame's map (frames), or its transpose's (overlap).
        length: L, the signal's length.
        cost: Multiply-adds per row of x.
    """

    overlap: bool
    frames: int
    hop: int
    start: int
    kernel: np.ndarray
    length: int
    cost: float

    @property
    def blocks(self) -> int:
        """k: the hops a frame spans."""
        return self.kernel.shape[1] // self.hop

    @property
    def nodes(self) -> int:
        """About the nodes `replace_framed` puts in, besides b: the window's Slice or
        Pad, a Reshape and the product, then each hop's Slice (and Pad) and their Sum."""
        k = self.blocks
        return 3 + (k > 1) * ((2 * k if self.overlap else k) + 1 + self.overlap)

    @property
    def span(self) -> int:
        """The signal's samples the frames cover, from `start`: T - 1 + k hops."""
        return (self.frames - 1 + self.blocks) * self.hop


def read_framed(m: np.ndarray, tail: list[int], tail_y: list[int]) -> Framed | None:
    """M ([N', N], x's `tail` axes flattened to N and y's `tail_y` to N') as frames of a
    signal: x's tail is the signal [L] and y's its frames [T, ...] (frames), or the other
    way (overlap); None where it is neither."""
    if len(tail) == 1 and len(tail_y) >= 1 and tail_y[0] >= 2:
        frames, length, overlap = tail_y[0], tail[0], False
        t = m.reshape(frames, -1, length)
    elif len(tail_y) == 1 and len(tail) >= 1 and tail[0] >= 2:
        frames, length, overlap = tail[0], tail_y[0], True
        t = m.T.reshape(frames, -1, length)
    else:
        return None
    found = _framing(t)
    if found is None:
        return None
    hop, start, kernel = found
    k = kernel.shape[1] // hop
    if k > MAX_BLOCKS:
        return None
    f = kernel.shape[0]
    if overlap:  # one product, then k slices of [T, h] padded into T - 1 + k
        cost = frames * f * k * hop + 3 * k * (frames - 1 + k) * hop
    else:  # one product of T - 1 + k blocks, then k slices of [T, F] summed
        cost = (frames - 1 + k) * hop * k * f + (k + 1) * frames * f
    return Framed(overlap, frames, hop, start, kernel, length, float(cost))


def _framing(t: np.ndarray) -> tuple[int, int, np.ndarray] | None:
    """The hop h, the first frame's start (a multiple of h) and K' ([F, k h]) where
    t[frame, :, s] = K'[:, s - start - frame h] inside the signal and 0 elsewhere;
    None where `t` ([T, F, L]) is not so."""
    frames, _, length = t.shape
    largest = float(np.max(np.abs(t), initial=0.0))
    if largest == 0 or frames < 2:
        return None
    support = np.any(np.abs(t) > TOLERANCE * largest, axis=1)  # [T, L]
    if not support.any(axis=1).all():
        return None  # a frame reads nothing
    first = np.argmax(support, axis=1)
    last = length - np.argmax(support[:, ::-1], axis=1)
    middle = frames // 2  # a frame the signal's ends are least likely to cut
    hop = int(first[middle] - first[middle - 1])
    width = int(last[middle] - first[middle])
    if hop <= 0:
        return None  # not frames that move along the signal
    offset = int(first[middle]) - middle * hop
    start = offset - offset % hop
    k = -(-(offset - start + width) // hop)
    kernel = np.zeros((t.shape[1], k * hop))
    kernel[:, offset - start : offset - start + width] = t[middle, :, first[middle] : last[middle]]
    again = np.zeros_like(t)
    for frame in range(frames):
        lo = start + frame * hop
        inside = slice(max(lo, 0), min(lo + k * hop, length))
        again[frame, :, inside] = kernel[:, inside.start - lo : inside.stop - lo]
    if np.max(np.abs(again - t)) > TOLERANCE * largest:
        return None
    return hop, start, kernel


def replace_framed(
    model, chain, form: Framed, b: np.ndarray, dtype, lead: int, tails: tuple[list, list]
) -> None:
    """Computes chain.y as `form` of chain.x (plus b), in the place of the chain's last
    node. x and y have `lead` leading axes, then the `tails` the map acts on, x's and
    y's."""
    put = Placed(model.graph, chain.y, lead)

    def const(stem: str, value) -> str:
        return put.constant(stem, np.ascontiguousarray(value))

    def ints(*values: int) -> np.ndarray:
        return np.array(values, np.int64)

    def sliced(x: str, starts, ends, axes) -> str:
        return put.node("Slice", [x, const("starts", ints(*starts)), const("ends", ints(*ends)),
                                  const("axes", ints(*axes))])  # fmt: skip

    def padded(x: str, rank: int, axis: int, before: int, after: int) -> str:
        """x (of `rank` axes past the leading ones) with `before` and `after` zeros on
        its `axis` of those."""
        if not before and not after:
            return x
        pads = [0] * (2 * (lead + rank))
        pads[lead + axis], pads[2 * lead + rank + axis] = before, after
        return put.node("Pad", [x, const("pads", ints(*pads))])

    def summed(parts: list[str]) -> str:
        return parts[0] if len(parts) == 1 else put.node("Sum", parts)

    def window(x: str, lo: int, hi: int, length: int) -> str:
        """x's samples [lo, hi) of its last axis (of `length`), zeros outside it."""
        if lo > 0 or hi < length:
            x = sliced(x, [max(lo, 0)], [min(hi, length)], [-1])
        return padded(x, 1, 0, max(-lo, 0), max(hi - length, 0))

    hop, k, frames = form.hop, form.blocks, form.frames
    f = form.kernel.shape[0]
    if not form.overlap:
        x = window(chain.x, form.start, form.start + form.span, form.length)
        x = put.reshape(x, [frames - 1 + k, hop])
        by_block = form.kernel.reshape(f, k, hop).transpose(2, 1, 0).reshape(hop, k * f)
        p = put.node("MatMul", [x, const("kernel", by_block.astype(dtype))])  # [T - 1 + k, k F]
        if k == 1:
            y = p
        else:
            y = summed([sliced(p, [j, j * f], [j + frames, (j + 1) * f], [-2, -1])
                        for j in range(k)])  # fmt: skip
    else:
        x = chain.x if len(tails[0]) == 2 else put.reshape(chain.x, [frames, f])
        p = put.node("MatMul", [x, const("kernel", form.kernel.astype(dtype))])  # [T, k h]
        if k > 1:
            p = put.reshape(p, [frames, k, hop])
            p = summed(
                [padded(sliced(p, [j], [j + 1], [-2]), 3, 0, j, k - 1 - j) for j in range(k)]
            )
        y = window(put.reshape(p, [-1]), -form.start, form.length - form.start, form.span)
    if np.any(b != 0):
        shape = [*b.shape[:-1], *([frames, f] if not form.overlap else [form.length])]
        y = put.node("Add", [y, const("bias", b.reshape(shape).astype(dtype))])
    if not form.overlap and len(tails[1]) != 2:
        put.reshape(y, tails[1])
    put.done()
