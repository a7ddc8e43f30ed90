"""M and b of an affine chain y = x M^T + b (`chains`), read off the chain itself: run
in onnxruntime on basis signals (`probe`), or in a basis of M's range where M is too
large to read whole (`probe_range`), then checked on random signals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper

from ...graphs import default_opset
from .chains import Chain

MAX_PROBES = 4096
"""The most runs of the chain that reading M may take."""

MAX_PROBE_BYTES = 256 << 20
"""The most memory reading M may take: M for every row of x's but its first axis's,
in float64 (for a map onto as many values as it reads)."""

MAX_PROBE_READS = 1 << 32
"""The most bytes of the chain's weights that reading M may read, over all its runs
(each run reads every weight): forty products by 1024 x 1024 weights, read a column a
run, would read 172 GB (54 s, one thread); the chains of `fixtures/models/` read at most
11 MB."""

MAX_AMPLITUDE = 2.0**100
"""The largest signal M is read on (`amplitude`): float32 holds it, and M's entries up to
2^28 times it. A chain whose offset is larger is not read."""

RANK_TOL = 1e-6
"""Singular values below this share of the largest count as zero: float32's rounding
of an M of low rank leaves about 1e-7 there."""


@dataclass
class Affine:
    """y = x M^T + b along the last axis: `m` is [..., N', N] and `b` [..., N'], each
    broadcast over x's leading axes (size 1 where they do not change along one). Where
    M was read in a basis of its range (`probe_range`), `m` is None and M = q r: q
    [..., N', r] with orthonormal columns, r [..., r, N]."""

    m: np.ndarray | None
    b: np.ndarray
    q: np.ndarray | None = None
    r: np.ndarray | None = None

    def times(self, x: np.ndarray) -> np.ndarray:
        """x M^T, in float64."""
        if self.m is not None:
            return np.einsum("...n,...kn->...k", x, self.m)
        return np.einsum("...r,...kr->...k", np.einsum("...n,...rn->...r", x, self.r), self.q)

    def bound(self, x: np.ndarray) -> np.ndarray:
        """|x| |M|^T, or a bound on it: the size of the terms each output sums."""
        if self.m is not None:
            return np.einsum("...n,...kn->...k", np.abs(x), np.abs(self.m))
        inner = np.einsum("...n,...rn->...r", np.abs(x), np.abs(self.r))
        return np.einsum("...r,...kr->...k", inner, np.abs(self.q))


def chain_model(model: onnx.ModelProto, chain: Chain, elem: int, dims: list, more=(), given=()):
    """The chain as a model of its own, x (its static `dims` kept, the others free) and
    the graph inputs named `given` -> y, and then the values named `more` (what a cost
    model reads); None where it reads another graph input."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    used = {name for n in chain.nodes for name in n.input}
    inputs = {i.name: i for i in graph.input}
    if used & (inputs.keys() - {chain.x, *given}):
        return None
    free = [d if isinstance(d, int) else f"d{i}" for i, d in enumerate(dims)]
    x_info = helper.make_tensor_value_info(chain.x, elem, free)
    outputs = [helper.make_empty_tensor_value_info(name) for name in [chain.y, *more]]
    sub = helper.make_graph(
        chain.nodes, "chain", [x_info, *(inputs[name] for name in given)], outputs,
        [inits[name] for name in sorted(used & inits.keys())],
    )  # fmt: skip
    out = helper.make_model(sub, opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    return out


def reads_too_much(model: onnx.ModelProto, chain: Chain, shape: list[int]) -> bool:
    """Whether reading M on signals of `shape` (as `probe`, a run per shape[0] of M's
    columns) would read more than `MAX_PROBE_READS` bytes of the chain's weights."""
    weights = {t.name: t for t in model.graph.initializer}
    names = {name for node in chain.nodes for name in node.input if name in weights}
    size = sum(
        math.prod(weights[name].dims)
        * helper.tensor_dtype_to_np_dtype(weights[name].data_type).itemsize
        for name in names
    )
    rows = shape[0] if len(shape) > 1 else 1
    return math.ceil(shape[-1] / rows) * size > MAX_PROBE_READS


def probe(run, shape: list[int], dtype, flexible: list[int]) -> Affine | None:
    """Reads M and b off `run` (the chain, x -> y) on basis signals of `shape`: at
    each index of x's first axis, a different unit vector, so that each run reads
    shape[0] of M's columns; the map must not change along that axis, which the check
    on random signals (with another size on each `flexible` axis) confirms."""
    n, rows = shape[-1], shape[0] if len(shape) > 1 else 1
    if math.ceil(n / rows) > MAX_PROBES:
        return None
    b = np.asarray(run(np.zeros(shape, dtype)), np.float64)
    size = amplitude(b)
    if b.shape[:-1] != tuple(shape[:-1]) or size is None:
        return None
    if math.prod(shape[1:-1]) * b.shape[-1] * n * 8 > MAX_PROBE_BYTES:
        f = probe_range(run, shape, dtype, b, size)
    else:
        columns = _columns(run, shape, dtype, b, size)
        m = np.stack(list(columns), axis=-1)  # [lead[1:]..., N', N]
        f = Affine(_narrowest(m[None] if len(shape) > 1 else m, 2), b)
    if f is None:
        return None
    f.b = _narrowest(b, 1)
    return f if _checks(run, f, shape, dtype, flexible, size) else None


def amplitude(b: np.ndarray) -> float | None:
    """The size of the signals M is read and checked on: 1, or the power of 2 at or
    above b's largest part. On a unit signal, x M^T is lost in b's rounding where b is
    far larger (y - b is 0 in float32 beside 1e19), and a check within b's rounding
    cannot see it missing; scaled past b, it is read to float32's rounding of itself.
    None past `MAX_AMPLITUDE`, or where b is not finite."""
    largest = float(np.max(np.abs(b), initial=0.0))
    if not math.isfinite(largest):
        return None
    size = 2.0 ** max(0, math.ceil(math.log2(largest))) if largest > 1 else 1.0
    return size if size <= MAX_AMPLITUDE else None


def _columns(run, shape: list[int], dtype, b: np.ndarray, size: float):
    """M's columns, x's first axis's size of them a run (signals of `size`, a power of
    2: y - b divided by it is exact): [lead[1:]..., N'] each."""
    n, rows = shape[-1], shape[0] if len(shape) > 1 else 1
    for start in range(0, n, rows):
        basis = np.zeros(shape, dtype)
        ks = range(start, min(n, start + rows))
        for i, k in enumerate(ks):
            basis.reshape(rows, -1, n)[i, :, k] = size
        y = (np.asarray(run(basis), np.float64) - b) / size
        yield from [y] if len(shape) == 1 else (y[i] for i in range(len(ks)))


RANGE_PROBES = 64
"""Random signals per channel that `_probe_range` reads M's range from: M must have
rank well below this."""


def probe_range(run, shape: list[int], dtype, b: np.ndarray, size: float) -> Affine | None:
    """M in a basis of its range, where M itself is too large to read whole (one
    [N', N] per channel): its outputs on `RANGE_PROBES` random signals (of `size`) span
    the range of an M of low rank (a Fourier layer's few kept modes); each column is
    then read in that basis. None where the rank comes near `RANGE_PROBES`."""
    if len(shape) < 2:
        return None
    rows, rng = shape[0], np.random.default_rng(1)
    samples = []
    for _ in range(math.ceil(RANGE_PROBES / rows)):
        x = (rng.standard_normal(shape) * size).astype(dtype)
        y = np.asarray(run(x), np.float64) - b
        samples += [y[i] for i in range(rows)]
    u, s, _ = np.linalg.svd(np.stack(samples, axis=-1), full_matrices=False)  # per channel
    rank = rank_of(s)
    if rank > len(samples) - 8:
        return None
    q = u[..., :, : max(rank, 1)]  # [lead[1:]..., N', r]
    columns = _columns(run, shape, dtype, b, size)
    r = np.stack([np.einsum("...k,...kr->...r", c, q) for c in columns], axis=-1)
    return Affine(None, b, q[None], r[None])


def rank_of(s: np.ndarray) -> int:
    """The largest rank among matrices of singular values `s` (per matrix, largest
    first): how many pass `RANK_TOL` of their matrix's largest."""
    return int(np.max(np.sum(s > RANK_TOL * s[..., :1], axis=-1), initial=0))


def rank_above(m: np.ndarray, rank: int) -> bool:
    """Whether M (or any of a stack of them) has a rank above `rank`: M less its
    projection on the range of M G, for a random G of `rank` + 8 columns, is 10 times
    `RANK_TOL` of M's norm (a matrix of rank `rank` or less leaves only rounding
    there, with probability 1). N N' (`rank` + 8) multiply-adds, where M's SVD takes
    N N' min(N, N')."""
    g = np.random.default_rng(0).standard_normal((m.shape[-1], rank + 8))
    q, _ = np.linalg.qr(m @ g)
    rest = np.linalg.norm(m - q @ (np.swapaxes(q, -1, -2) @ m), axis=(-2, -1))
    return bool(np.any(rest > 10 * RANK_TOL * np.linalg.norm(m, axis=(-2, -1))))


def _narrowest(a: np.ndarray, tail: int) -> np.ndarray:
    """`a` with each axis but the last `tail` cut to size 1 where it does not change
    along it."""
    for axis in range(a.ndim - tail):
        first = np.take(a, [0], axis=axis)
        if np.allclose(a, first, rtol=0, atol=1e-6 * np.max(np.abs(a), initial=0)):
            a = first
    return a


def apply(f: Affine, x: np.ndarray) -> np.ndarray:
    """x M^T + b, in float64."""
    return f.times(x.astype(np.float64)) + f.b


def _checks(run, f: Affine, shape, dtype, flexible, size: float) -> bool:
    """Whether `f` is the chain on two random signals of `size`, the second with 3 on
    every flexible axis: within float32's rounding of the chain's terms."""
    rng = np.random.default_rng(0)
    for other in (None, 3):
        probe = [other if other and i in flexible else s for i, s in enumerate(shape)]
        x = (rng.standard_normal(probe) * size).astype(dtype)
        try:
            got = np.asarray(run(x), np.float64)
            want = apply(f, x)
        except ValueError:
            return False
        if got.shape != want.shape:
            return False
        scale = f.bound(x.astype(np.float64))
        if not np.all(np.abs(got - want) <= 1e-4 * (scale + np.abs(f.b) + 1e-30)):
            return False
    return True


def runner(model: onnx.ModelProto, chain: Chain, elem: int, dims: list, more=(), given=()):
    """The chain run in onnxruntime on one thread, (x, {a `given` input: its value}) ->
    [y, the values named `more`]; None where `chain_model` refuses it, or onnxruntime is
    not installed or cannot load it."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None

    from .lowering import lower
    from .transforms import ACCURATE

    sub = chain_model(model, chain, elem, dims, more, given)
    if sub is None:
        return None
    # M is read off the chain's DFTs in their accurate forms, not onnxruntime's own
    # (docs/transforms.md): its columns are then as exact as float32 makes them.
    sub = lower(sub, default_opset(sub) or 1, ACCURATE)[0]
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    try:
        session = ort.InferenceSession(sub.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])  # fmt: skip
    except Exception:  # a chain onnxruntime cannot load on its own: left as it is
        return None
    return lambda a, feeds=None: session.run(None, {chain.x: a, **(feeds or {})})
