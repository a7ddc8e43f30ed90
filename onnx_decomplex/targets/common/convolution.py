"""An affine chain that is a convolution along some of x's axes, run as an expert
writes a Fourier layer: restricted to the frequencies where it filters.

A Fourier neural operator's spectral convolution, its pointwise channel mix beside it,
and any spectral filter are, together, one convolution over x's spatial axes, circular
(`fusion` reads M off the chain, `common.probe`): each frequency f of y's channels is a
channel matrix K(f) times x's at f. Most such layers keep a few modes, so K(f) is one
matrix K0 at every frequency but a few (0 where the filter drops them, the pointwise mix
where it is added):

    y = K0 x + Q C Q^T x

where Q [S, r] is an orthonormal real basis of the r frequencies where K(f) differs from
K0, and C [O r, I r] mixes their channels. In onnxruntime that is five products on x's
own layout (one restricted transform, one channel mix, one restricted inverse, and K0),
where the dense M costs (I S)(O S) multiply-adds per row: 0.1 of that for FNO-1D's
layer (16 channels, 64 points, 8 modes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .chains import Placed

TOLERANCE = 1e-5
"""Where K(f) differs from K0: past this share of K's largest entry. M is read in
float32 arithmetic, which leaves about 1e-7 of it elsewhere."""


@dataclass
class Convolution:
    """y = K0 x + Q C Q^T x over one block of x's last axes, the spatial ones (S
    values), beside one block of channels (I in, O out).

    Attributes:
        channels_first: Whether x's channels come before its spatial axes.
        channels: I and O.
        basis: Q, [S, r].
        core: C, as the product on x's layout: [I r, O r] channels first (x's rows
            [I, r]), else [r I, r O].
        constant: K0, [O, I]; None where it is 0.
        cost: Multiply-adds per row of x.
        rank: M's rank (the sum of K(f)'s over the frequencies), for what a product
            by M's factors would cost.
        mix: Where each channel is filtered alone, then the channels mixed (GFNet's
            global filter, then its LayerNorm's mean over the channels): the mix [O, I]
            (None: none), `core` each channel's [S, S] map transposed, [I, S, S], and
            `basis` empty.
    """

    channels_first: bool
    channels: tuple[int, int]
    basis: np.ndarray
    core: np.ndarray
    constant: np.ndarray | None
    cost: float
    rank: int
    mix: np.ndarray | None = None

    @property
    def per_channel(self) -> bool:
        return self.basis.shape[1] == 0 and self.core.ndim == 3

    @property
    def nodes(self) -> int:
        """The nodes `replace_convolution` puts in, besides x's and y's reshapes and b."""
        if self.per_channel:
            return 3 + (self.mix is not None) + 2 * (not self.channels_first)
        r = self.basis.shape[1]
        return 5 * (r > 0) + (self.constant is not None) * (1 + (r > 0))


BATCHED = 2.5
"""What a product costs a multiply-add where each channel's matrix takes one row
(`fusion.COST["batched"]`)."""


def read_convolution(m: np.ndarray, tail: list[int], tail_y: list[int]) -> Convolution | None:
    """The cheapest `Convolution` that is M ([N', N], x's `tail` axes flattened to N and
    y's `tail_y` to N'), over every split of the tail into one block of channels and one
    of spatial axes; None where M is a convolution over none. Where x or y has one
    channel, its axis of 1 may stand anywhere: a lifting (x [H, W, 1]) into a Fourier
    layer (y [8, H, W]) is read as from x [1, H, W]."""
    found = []
    for tail_x, tail_out in _layouts(tail, tail_y):
        found += _convolutions(m, tail_x, tail_out)
    return min(found, key=lambda form: form.cost, default=None)


def _layouts(tail: list[int], tail_y: list[int]):
    """x's and y's tails as given, where they have as many axes, then with an axis of 1
    moved first or last, where the two then have as many: the same values in the same
    order, so M reads the same (`replace_convolution` reshapes by the blocks' sizes). A
    block of channels stands at one end; an axis of 1 between others reads as it does at
    the end of their block."""

    def moved(t: list[int], rank: int) -> list[list[int]]:
        rest = [d for d in t if d != 1]
        ends = [[1, *rest], [*rest, 1]] if rest else [[1]]
        return [u for u in ends if len(u) == rank and u != t]

    pairs = [(tail, tail_y)] if len(tail) == len(tail_y) else []
    pairs += [(t, tail_y) for t in moved(tail, len(tail_y))]
    return pairs + [(tail, t) for t in moved(tail_y, len(tail))]


def _convolutions(m: np.ndarray, tail: list[int], tail_y: list[int]) -> list[Convolution]:
    """Every `Convolution` that is M over one split of tails of as many axes."""
    found = []
    for split in range(len(tail)):
        for channels_first in (True, False):
            if not channels_first and split == len(tail) - 1:
                continue  # all spatial: as channels first with none
            spatial = list(range(split, len(tail))) if channels_first else list(range(split + 1))
            if any(tail[a] != tail_y[a] or tail[a] < 2 for a in spatial):
                continue
            form = _convolution(m, tail, tail_y, spatial, channels_first)
            if form is not None:
                found.append(form)
    return found


def _convolution(m, tail, tail_y, spatial, channels_first) -> Convolution | None:
    chans = [a for a in range(len(tail)) if a not in spatial]
    sizes = [tail[a] for a in spatial]
    n_in, n_out = math.prod(tail[a] for a in chans), math.prod(tail_y[a] for a in chans)
    s = math.prod(sizes)
    t = _arranged(m, tail, tail_y, chans, spatial)  # [O, I, S, S']
    kernel = _kernel(t.reshape(n_out, n_in, *sizes, *sizes))
    if kernel is None:
        return None
    spectrum = np.fft.fftn(kernel, axes=range(2, kernel.ndim))  # K(f): [O, I, *S]
    scale = TOLERANCE * float(np.max(np.abs(spectrum)))
    each = np.linalg.svd(np.moveaxis(spectrum.reshape(n_out, n_in, s), -1, 0), compute_uv=False)
    forms = []
    for constant in _constants(spectrum, sizes, scale):
        pointwise = constant.reshape(*constant.shape, *[1] * len(sizes))
        differs = np.max(np.abs(spectrum - pointwise), axis=(0, 1)) > scale
        differs |= differs[np.ix_(*[-np.arange(d) % d for d in sizes])]  # and at -f
        basis = _basis(differs, sizes)
        r = basis.shape[1]
        cost = r * s * (n_in + n_out) + r * r * n_in * n_out + s * n_in * n_out * constant.any()
        forms.append((cost, constant, basis))
    cost, constant, basis = min(forms, key=lambda form: form[0])
    rank = int(np.sum(each > scale))
    alone = _per_channel_maps(t, channels_first, rank)
    if alone is not None and alone.cost < cost:
        return alone
    rest = t - np.einsum("oi,np->oinp", constant, np.eye(s))
    core = basis.T @ rest @ basis  # [O, I, r, r]
    if np.max(np.abs(basis @ core @ basis.T - rest)) > 10 * TOLERANCE * np.max(np.abs(t)):
        return None
    r = basis.shape[1]
    if not r and not constant.any():
        return None  # M is 0
    if channels_first:  # x's rows [I, r] onto y's [O, r]
        product = core.transpose(1, 3, 0, 2).reshape(n_in * r, n_out * r)
    else:
        product = core.transpose(3, 1, 2, 0).reshape(r * n_in, r * n_out)
    return Convolution(
        channels_first, (n_in, n_out), basis, product,
        constant if constant.any() else None, float(cost), rank,
    )  # fmt: skip


def _per_channel_maps(t: np.ndarray, channels_first: bool, rank: int) -> Convolution | None:
    """t ([O, I, S, S']) as each of x's channels through a map of its own, then the
    channels mixed by P [O, I]: t[o, i] = P[o, i] M_i, each [O, S S'] slice of rank 1."""
    n_out, n_in, s = t.shape[:3]
    if n_in < 2:
        return None
    maps, mix = np.empty((n_in, s, s)), np.empty((n_out, n_in))
    for i in range(n_in):
        u, sv, vt = np.linalg.svd(t[:, i].reshape(n_out, s * s), full_matrices=False)
        if sv[0] == 0 or (len(sv) > 1 and sv[1] > TOLERANCE * sv[0]):
            return None
        mix[:, i], maps[i] = u[:, 0], sv[0] * vt[0].reshape(s, s).T
    if np.max(np.abs(np.einsum("oi,inp->oipn", mix, maps) - t)) > 10 * TOLERANCE * np.max(
        np.abs(t)
    ):
        return None
    alone = n_out == n_in and np.allclose(mix, np.diag(np.diag(mix)), rtol=0, atol=1e-12)
    if alone:  # no mix: its diagonal into the maps
        maps, mix = maps * np.diag(mix)[:, None, None], None
    moves = 0 if channels_first else 2 * s * (n_in + n_out)
    cost = BATCHED * n_in * s * s + (s * n_in * n_out if mix is not None else 0) + moves
    empty = np.zeros((s, 0))
    return Convolution(channels_first, (n_in, n_out), empty, maps, None, cost, rank, mix)


def _arranged(m: np.ndarray, tail, tail_y, chans: list[int], spatial: list[int]) -> np.ndarray:
    """M ([N', N]) as [O, I, S, S']: y's channels, x's, y's places, x's."""
    k = len(tail)
    t = m.reshape(*tail_y, *tail).transpose(
        *chans, *(k + a for a in chans), *spatial, *(k + a for a in spatial)
    )
    n_out, n_in = math.prod(tail_y[a] for a in chans), math.prod(tail[a] for a in chans)
    s = math.prod(tail[a] for a in spatial)
    return t.reshape(n_out, n_in, s, s)


def _kernel(t: np.ndarray) -> np.ndarray | None:
    """K [O, I, *S] where `t` ([O, I, *S, *S']) is circular over the spatial axes:
    t[..., n, n'] = K[..., n - n'] (mod S); else None."""
    d = (t.ndim - 2) // 2
    sizes = t.shape[2 : 2 + d]
    kernel = t[(..., *[0] * d)]  # y at every place, x at the origin
    places = np.ix_(*[np.arange(n) for n in sizes], *[np.arange(n) for n in sizes])
    shifts = tuple((places[i] - places[d + i]) % n for i, n in enumerate(sizes))
    largest = float(np.max(np.abs(t), initial=0.0))
    if largest == 0 or np.max(np.abs(kernel[(..., *shifts)] - t)) > TOLERANCE * largest:
        return None
    return kernel


def _constants(spectrum: np.ndarray, sizes: list[int], scale: float):
    """K0's candidates: 0, and K at the highest frequency (where a layer that keeps a
    few modes has only its pointwise mix), where that is real."""
    yield np.zeros(spectrum.shape[:2])
    highest = spectrum[(slice(None), slice(None), *(d // 2 for d in sizes))]
    if np.max(np.abs(highest.imag)) <= scale:
        yield highest.real


def _basis(differs: np.ndarray, sizes: list[int]) -> np.ndarray:
    """An orthonormal real basis [S, r] of the signals at the frequencies `differs`
    marks (a set closed under negation, so r is their count)."""
    freqs = np.argwhere(differs)
    if not len(freqs):
        return np.zeros((math.prod(sizes), 0))
    grid = np.stack(np.meshgrid(*[np.arange(d) for d in sizes], indexing="ij"), -1)
    phase = 2 * np.pi * np.einsum("...a,fa->...f", grid / np.array(sizes), freqs)
    waves = np.concatenate([np.cos(phase), np.sin(phase)], -1).reshape(-1, 2 * len(freqs))
    u, sv, _ = np.linalg.svd(waves, full_matrices=False)
    return u[:, : int(np.sum(sv > 1e-8 * sv[0]))]


def replace_convolution(
    model, chain, form: Convolution, b: np.ndarray, dtype, lead: int, tails: tuple[list, list]
) -> None:
    """Computes chain.y as `form` of chain.x (plus b), in the place of the chain's last
    node. x and y have `lead` leading axes, then the `tails` the map acts on, x's and
    y's: each is reshaped to one block of channels and one of spatial axes, where it has
    other axes."""
    put = Placed(model.graph, chain.y, lead)
    n_in, n_out = form.channels
    r = form.basis.shape[1]

    def const(stem: str, value: np.ndarray) -> str:
        return put.constant(stem, np.ascontiguousarray(value).astype(dtype))

    def blocks(tail: list[int], n: int) -> tuple[list[int], bool]:
        """The tail as [channels, spatial] (or the other way), and whether it is so."""
        shape = [n, math.prod(tail) // n]
        shape = shape if form.channels_first else shape[::-1]
        return shape, list(tail) == shape

    (x_shape, x_is), (y_shape, y_is) = blocks(tails[0], n_in), blocks(tails[1], n_out)
    x = chain.x if x_is else put.reshape(chain.x, x_shape)
    if form.per_channel:
        y = _each_channel(put, x, form, const)
        if np.any(b != 0):
            y = put.node("Add", [y, const("bias", b.reshape(*b.shape[:-1], *y_shape))])
        if not y_is:
            put.reshape(y, tails[1])
        put.done()
        return
    parts = []
    if r:
        if form.channels_first:
            z = put.node("MatMul", [x, const("basis", form.basis)])
            z = put.node("MatMul", [put.reshape(z, [-1]), const("mix", form.core)])
            parts.append(
                put.node("MatMul", [put.reshape(z, [n_out, r]), const("inverse", form.basis.T)])
            )
        else:
            z = put.node("MatMul", [const("basis", form.basis.T), x])
            z = put.node("MatMul", [put.reshape(z, [-1]), const("mix", form.core)])
            parts.append(
                put.node("MatMul", [const("inverse", form.basis), put.reshape(z, [r, n_out])])
            )
    if form.constant is not None:
        if form.channels_first:
            parts.append(put.node("MatMul", [const("pointwise", form.constant), x]))
        else:
            parts.append(put.node("MatMul", [x, const("pointwise", form.constant.T)]))
    y = parts[0] if len(parts) == 1 else put.node("Add", parts)
    if np.any(b != 0):
        y = put.node("Add", [y, const("bias", b.reshape(*b.shape[:-1], *y_shape))])
    if not y_is:
        put.reshape(y, tails[1])
    put.done()


def _each_channel(put: Placed, x: str, form: Convolution, const) -> str:
    """x's rows through each channel's map, one row and channel at a time ([I, 1, S]
    times [I, S, S]), then the mix; channels moved before the places and back where
    they are last."""
    n_in, s = form.core.shape[:2]
    swap = [*range(put.lead), put.lead + 1, put.lead]
    rows = x if form.channels_first else put.node("Transpose", [x], perm=swap)
    y = put.node("MatMul", [put.reshape(rows, [n_in, 1, s]), const("maps", form.core)])
    y = put.reshape(y, [n_in, s])
    if form.mix is not None:
        y = put.node("MatMul", [const("mix", form.mix), y])
    return y if form.channels_first else put.node("Transpose", [y], perm=swap)
