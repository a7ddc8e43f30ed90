"""A precision's noise floor: how far its arithmetic alone may move each output.

An output that fails its tolerance while the model computes in float32 is judged
again against the model run in float64 (`precision.upcast`), and one of a model that
computes in float64 against its own run, with float64's unit roundoff in place of
float32's below. How far a float32 computation may land from that depends on the
computation, not on a fixed multiple of anything: a product of ordinary values stays
within a few units of roundoff, while a DFT's bin is off by roundoff times the whole
signal's size, and a log of a bin that nearly cancels, or a sum of such logs that
cancels again (an MFCC), is off by far more than its own size would say.

`floors` measures that per element, by Monte Carlo arithmetic at node granularity:
the float64 model runs `RUNS` times, and each node's outputs are moved up or down,
at seeded random, by one float32 unit roundoff relative to

- the value itself, for an elementwise node; for a complex value, its modulus, on
  each part, which bounds the error of a product's `ac - bd` too;
- the sum of its terms' sizes, for a node that accumulates (`ACCUMULATING`: the node
  run again on its operands' absolute values), where a sum may cancel far below its
  terms; every bin of one DFT has its whole signal's terms, and at least its largest
  element (per transform, never across the batch), and every bin of one STFT frame
  that frame's.

Nodes that only move or select values (`EXACT`) are not moved, nor are graph inputs
and initializers: float32 gives them exactly, and both sides read the same values. The
noise then flows through every later node as float32's rounding would. An element's
floor is the furthest any run lands from the unperturbed one; the rewrite passes there
when it is within its tolerance plus `FACTOR` floors.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from .. import cmath
from ..graphs import dft_axis
from ..reference import evaluator, quietly

RUNS = 3
"""Perturbed runs per judgement: each is one float64 reference run."""

FACTOR = 4.0
"""How many floors an element's error may add to its tolerance."""

ACCUMULATING = frozenset(
    {"MatMul", "Gemm", "Einsum", "Conv", "ConvTranspose", "CumSum", "DFT", "STFT",
     "ReduceSum", "ReduceMean", "ReduceL1", "ReduceSumSquare", "ReduceL2", "Sum", "Mean"}
)  # fmt: skip
"""Ops whose output is a sum: its rounding is relative to the terms, not the sum. Each
run on its operands' absolute values gives the terms' size (ReduceL2: sqrt(sum |x|^2),
which bounds |sqrt(sum x^2)|). Softmax, LogSoftmax and ReduceLogSumExp sum too, but
their terms are exponentials of the operands, which that run does not give: they are
not here."""

TRANSFORMS = frozenset({"DFT", "STFT"})
"""Sums whose bins each take a whole transform's (or frame's) terms."""

EXACT = frozenset(
    {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split",
     "Slice", "Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements",
     "Compress", "Expand", "Tile", "Pad", "Where", "Trilu", "Constant", "ConstantOfShape",
     "EyeLike", "Shape", "Size", "Neg", "DepthToSpace", "SpaceToDepth"}
)  # fmt: skip
"""Ops that move or select values, or flip a sign: float32 gives them exactly, and they
are not moved."""


def _sizes(x, signal: bool):
    """The terms' sizes: |x| for a product's operands; |re| + i |im| for a signal, which
    keeps its complex layout (a DFT reads a real signal's layout otherwise)."""
    if not isinstance(x, np.ndarray) or x.dtype.kind not in "fc":
        return x
    if signal and x.dtype.kind == "c":
        return np.abs(x.real) + 1j * np.abs(x.imag)
    return np.abs(x)


def _moduli(v: np.ndarray) -> np.ndarray:
    """|v| per element of a complex array; per row of the last axis of a real signal
    (re alone, or packed (re, im))."""
    return np.abs(v) if v.dtype.kind == "c" else np.linalg.norm(v, axis=-1)


def _per_transform(node, args, terms: np.ndarray) -> np.ndarray:
    """A transform's scale, one per transform (broadcast along its bins): for a DFT, the
    sum of its terms' sizes (bin 0 of the transform of their sizes) or, where larger,
    its largest element, which an inverse transform's kernel rounds before it divides by
    N; for an STFT, each frame's sum (its bins are axis 2: [batch, frames, bins])."""
    if node.op_type == "STFT":
        scale = np.max(_moduli(terms), axis=2, keepdims=True)
    else:
        signal = args[0]
        # The reference's DFT-17 holds its axis as an attribute; DFT-20 takes an input.
        # The signal's rank counts the (re, im) axis a complex signal does not have.
        attribute = getattr(node, "axis", None)
        rank = signal.ndim + (signal.dtype.kind == "c")
        axis = dft_axis(20 if attribute is None else 17, rank, args[2] if len(args) > 2 else None,
                        attribute)  # fmt: skip
        scale = np.maximum(np.max(_moduli(terms), axis=axis, keepdims=True),
                           np.max(_moduli(signal), axis=axis, keepdims=True))  # fmt: skip
    return scale if terms.dtype.kind == "c" else scale[..., None]


def _scale(node, run: Callable, args, kwargs, shape) -> np.ndarray | float:
    """The size the rounding of one output of `node` is relative to, besides its own: for
    a sum, the sum of its terms' sizes."""
    if node.op_type not in ACCUMULATING:
        return 0.0
    transform = node.op_type in TRANSFORMS
    (terms, *_) = run(*(_sizes(a, transform) for a in args), **kwargs)
    if transform:
        return _per_transform(node, args, terms)
    return np.abs(terms) if terms.shape == shape else 0.0


def _jitter(value, scale, rng: np.random.Generator, eps: float):
    """`value` moved by `eps` times its modulus plus `scale`, up or down by a coin's toss,
    part by part: a unit roundoff rounded either way, so that a floor does not hang on
    how small a uniform draw came out. Without a scale (an elementwise node), a part
    that is exactly zero stays so, its sign too: float32 rounds a zero to itself, and an
    angle turns on that sign. Infinities and NaNs stay as they are."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fc":
        return value
    scale = np.broadcast_to(scale, value.shape)
    size = (np.abs(value) + scale) * eps
    held = ~np.isfinite(size)

    def moved(part):
        noisy = part + rng.choice([-1.0, 1.0], value.shape) * np.where(held, 0.0, size)
        kept = held | ~np.isfinite(part) | ((part == 0) & (scale == 0))
        return np.where(kept, part, noisy)

    if value.dtype.kind == "c":  # part by part: re + 1j im would lose a -0 imaginary part
        return cmath.join(moved(value.real), moved(value.imag), value.dtype)
    return moved(value).astype(value.dtype, copy=False)


def _perturbing(node, rng: np.random.Generator, eps: float) -> Callable:
    """`node.run`, its outputs jittered; the first one, a sum's, relative to its terms."""
    run = node.run

    def perturbed(*args, **kwargs):
        first, *rest = run(*args, **kwargs)
        scale = _scale(node, run, args, kwargs, np.shape(first))
        return (_jitter(first, scale, rng, eps), *(_jitter(o, 0.0, rng, eps) for o in rest))

    return perturbed


def _perturb(run: ReferenceEvaluator, rng: np.random.Generator, eps: float) -> None:
    """Perturbs every node of `run` but the exact ones; a node that runs subgraphs (If,
    Loop, Scan), through theirs: the evaluators it holds."""
    for node in run.rt_nodes_:
        inner = [v for v in vars(node).values() if isinstance(v, ReferenceEvaluator)]
        for body in inner:
            _perturb(body, rng, eps)
        if not inner and node.op_type not in EXACT:
            node.run = _perturbing(node, rng, eps)


def floors(
    model: onnx.ModelProto,
    feeds: dict[str, np.ndarray],
    truth: list[np.ndarray],
    *,
    eps: float = float(np.finfo(np.float32).eps),
    runs: int = RUNS,
    seed: int = 0,
    timeout: float | None = None,
) -> list[np.ndarray]:
    """Per output of `model` (one that computes in float64), per element: the furthest
    `runs` perturbed runs land from `truth`, its unperturbed outputs (see the module).

    Raises:
        ValidationTimeout: The runs went past `timeout` seconds.
        Exception: Whatever the evaluator raises; the caller has run it already.
    """
    furthest = [np.zeros(np.shape(t)) for t in truth]
    rng = np.random.default_rng(seed)
    with quietly(timeout):
        for _ in range(runs):
            run = evaluator(model)
            _perturb(run, rng, eps)
            for i, (p, t) in enumerate(zip(run.run(None, feeds), truth, strict=True)):
                if np.shape(p) == np.shape(t):
                    furthest[i] = np.fmax(furthest[i], np.abs(np.asarray(p) - t))
    return furthest
