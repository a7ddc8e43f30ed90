"""The TensorRT-compatibility lowering: real ops that TensorRT's ONNX parser lacks.

It runs on the packed-real model (`decomplex(..., target="tensorrt")`), and its
output is an ordinary ONNX model, checked and validated in onnxruntime like any
other rewrite. One lowering per op type, registered with `@lowering`:

    DFT(x, L, axis)       -> Reshape(MatMul(Reshape(x, [..., n*c]), M), [..., K, c']) up
                             to length 12; past it, two MatMuls of the four-step form
                             where L factors, or four of Bluestein's where it does not
                             (accurate at float32's level, docs/transforms.md)
    STFT(x, step, win, L) -> the same on Gather(x, frame indices), the window in M
    Compress(x, cond)     -> Gather(x, nonzero(cond))
    NonZero(x)            -> NonZero(Cast(x, float)), x not float32 or float16
    Einsum(x, w)          -> MatMul, between Transposes and Reshapes (`einsum.plan`)

M is the real block of the DFT matrix (`cmath.dft_coefficients`), built in numpy,
so transform lengths must be static. A transform axis other than the one before
(re, im) is moved there and back with Transpose. float64 is narrowed to float32
afterwards (`narrow.narrow_double`), since TensorRT has no float64.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from .. import cmath
from ..constants import gs_value
from ..emit import Emitter
from ..errors import DecomplexError
from ..graphs import is_default_domain
from ..shapes import declared_dims, infer_shapes
from ..tidy import keep_model_fields
from . import einsum as einsum_plan
from . import registrar

MAX_MATRIX_BYTES = 1 << 30
"""A dense DFT matrix larger than this is refused, when no other form applies: it
grows with the square of the length."""

DENSE_MAX_LENGTH = 12
"""The longest transform taken as one MatMul by its dense matrix. Every form's matrices
are computed in float64 and rounded once, yet a dense product of L terms rounds its sums
the more the longer L: against an exact FFT its float32 error is 1.2 (length 7) to 2.1
(13) and 2 to 5 (31 to 4096) times TensorFlow's own float32 FFT's. The factored forms
below stay within 2 (docs/transforms.md)."""

MAX_FORM_BYTES = 128 << 20
"""A four-step or Bluestein form whose matrices take more than this is refused (kept as
the op where the lowering is a choice). Four-step takes 34 MiB at 16384, and 2.5 GiB at
65536; Bluestein's folds its chirp into a first matrix per row of its own: 96 MiB at the
prime 4099, 384 MiB past 8192."""

MAX_FACTOR = 128
"""A length L = L1 * L2 (L1 <= L2) takes the four-step form while L2 is at most this;
a longer one (a prime, or twice a prime) takes Bluestein's, whose power-of-two length
factors evenly."""

LOWERINGS: dict[str, Callable] = {}
lowering = registrar(LOWERINGS, "lowering")
"""`@lowering("Op")`: registers fn(emitter, node, lowered), which replaces the node's
output with nodes from the emitter and notes what it did in `lowered`, or returns False
where the node needs no lowering."""


@dataclass
class Lowered:
    """What the lowering changed.

    Attributes:
        ops: Nodes lowered, by op type.
        matrix_bytes: Bytes of the DFT matrices it added.
        notes: One line per lowered node.
        max_length: Transforms longer than this are not lowered (None: any length).
    """

    ops: Counter = field(default_factory=Counter)
    matrix_bytes: int = 0
    notes: list[str] = field(default_factory=list)
    max_length: int | None = None


_CANNOT = "cannot lower for TensorRT: "


def _fail(node: gs.Node, message: str, tensor: gs.Tensor | None = None) -> DecomplexError:
    return DecomplexError(
        f"{_CANNOT}{message}",
        node=node.name,
        op_type=node.op,
        tensor=tensor.name if tensor is not None else None,
    )


def _op(e: Emitter, op: str, inputs: list, attrs: dict | None = None, out=None):
    """One node of the running lowering; its output, `out` when given."""
    return (
        e.emit(op, inputs, attrs, outputs=[out])[0]
        if out is not None
        else e.emit(op, inputs, attrs)
    )


def _static(dim) -> int | None:
    return dim if isinstance(dim, int) and dim >= 0 else None


def _scalar(e: Emitter, t: gs.Tensor, what: str) -> int:
    value = gs_value(t)
    if value is None or value.size != 1:
        raise _fail(
            e.node, f"{what} is computed at run time; the MatMul form needs it as a constant", t
        )
    return int(value.reshape(()))


@dataclass(frozen=True)
class _Transform:
    """What a DFT's MatMul form is built from: the signal's length on the transform axis
    (`n_in`), its parts (`channels`: 1 real, 2 (re, im)), the transform's `length`, its
    direction and sides, and the signal's element type."""

    n_in: int
    channels: int
    length: int
    inverse: bool
    onesided: bool
    dtype: np.dtype

    @property
    def out_len(self) -> int:
        return self.length // 2 + 1 if self.onesided and not self.inverse else self.length

    @property
    def out_channels(self) -> int:
        """The one-sided inverse is real: (re) out."""
        return 1 if self.inverse and self.onesided else 2

    def dense_bytes(self) -> int:
        """Bytes of the dense matrix M (`_dft_block`)."""
        cols = self.out_channels * (self.length if self.inverse else self.out_len)
        return self.n_in * self.channels * cols * np.dtype(self.dtype).itemsize


def _factor(length: int) -> tuple[int, int] | None:
    """L = L1 * L2 with L1 the largest divisor up to sqrt(L); None for a prime L."""
    for l1 in range(math.isqrt(length), 1, -1):
        if length % l1 == 0:
            return l1, length // l1
    return None


def _dft_block(e: Emitter, t: _Transform) -> np.ndarray:
    """M with packed y = x @ M, for x's transform axis and (re[, im]) flattened together."""
    _check_bytes(e, t.length, t.dense_bytes(), MAX_MATRIX_BYTES, "a {} MiB DFT matrix")
    m = cmath.interleaved_block(cmath.dft_coefficients(t.n_in, t.length, t.inverse, t.onesided))
    if t.channels == 1:
        m = m[0::2]  # a real signal has no imaginary rows
    if t.inverse and t.onesided:
        m = m[:, 0::2]  # the one-sided inverse is real: (re) out, no imaginary column
    return m.astype(t.dtype)


def _matmul_last_two(
    e: Emitter, lowered: Lowered, x, rank: int, width: int, m: np.ndarray, out_shape, out
):
    """Reshape x's last two axes into one of `width`, times m, then into `out_shape`."""
    keep = [0] * (rank - 2)  # 0 copies a dim, so leading dims may be dynamic
    flat = _op(e, "Reshape", [x, np.array([*keep, width], np.int64)])
    prod = _op(e, "MatMul", [flat, e.constant(np.ascontiguousarray(m), "dft_matrix")])
    lowered.matrix_bytes += m.nbytes
    return _op(e, "Reshape", [prod, np.array([*keep, *out_shape], np.int64)], out=out)


@lowering("DFT")
def dft(e: Emitter, node: gs.Node, lowered: Lowered) -> None:
    x, y = node.inputs[0], node.outputs[0]
    if x.shape is None:
        raise _fail(node, "the signal's rank is unknown", x)
    rank = len(x.shape)
    axis = _dft_axis(e, node, rank)
    t = _dft_transform(e, node, axis, lowered)
    # A real one-sided spectrum (no imaginary parts) is rare: it keeps the dense form.
    form = "dense" if t.inverse and t.onesided and t.channels == 1 else _form(t.length)

    perm = None
    if axis != rank - 2:
        perm = [d for d in range(rank) if d not in (axis, rank - 1)] + [axis, rank - 1]
        x = _op(e, "Transpose", [x], {"perm": perm})
    inner = None if perm is None else gs.Variable(e.fresh("moved"))
    out = inner or y
    if form != "dense" and t.inverse and t.onesided:
        # The real signal of a one-sided spectrum: its Hermitian whole, inverted.
        full = replace(t, n_in=t.length, channels=2, onesided=False)
        spectrum = _hermitian_whole(e, x, rank, t)
        res = _real_channel(e, _transform(e, lowered, spectrum, rank, full, form), rank, out)
    elif form == "dense":
        m = _dft_block(e, t)
        out_shape = [t.out_len, t.out_channels]
        res = _matmul_last_two(e, lowered, x, rank, t.n_in * t.channels, m, out_shape, out)
    else:
        res = _transform(e, lowered, x, rank, t, form, out)
    how = {"dense": "MatMul by its dense matrix", "bluestein": "Bluestein's chirp-z, four "
           "MatMuls"}.get(form, "MatMuls of lengths {} and {} (four-step)".format(*form))  # fmt: skip
    if perm is not None:
        _op(e, "Transpose", [res], {"perm": [int(p) for p in np.argsort(perm)]}, out=y)
    node.outputs.clear()
    kind = "inverse " * t.inverse + "one-sided " * t.onesided
    lowered.notes.append(f"{node.name}: {kind}DFT of length {t.length} on axis {axis} -> {how}")


def _form(length: int) -> str | tuple[int, int]:
    """How a transform of `length` is computed: "dense", its four-step factors, or
    "bluestein" (`DENSE_MAX_LENGTH`, `MAX_FACTOR`)."""
    if length <= DENSE_MAX_LENGTH:
        return "dense"
    factors = _factor(length)
    if factors is not None and factors[1] <= MAX_FACTOR:
        return factors
    return "bluestein"


def _transform(e: Emitter, lowered: Lowered, x, rank: int, t: _Transform, form, out=None):
    """The four-step or Bluestein form of `t` on x's axis -2, one-sided where `t` is."""
    if form == "bluestein":
        return _bluestein(e, lowered, x, rank, t, out)
    return _four_step(e, lowered, x, rank, t, form, out)


def _hermitian_whole(e: Emitter, x, rank: int, t: _Transform):
    """The whole spectrum [..., L, 2] whose one-sided half x's axis -2 holds: bin k > L/2
    is conj(x[L - k]); the imaginary parts of bins 0 and L/2 are ignored, as the one-sided
    inverse ignores them."""
    half = t.length // 2 + 1
    x = _to_length(e, x, rank, replace(t, length=half))
    k = np.arange(t.length)
    index = np.where(k < half, k, t.length - k)
    scale = np.ones((t.length, 2), np.dtype(t.dtype))
    scale[half:, 1] = -1
    scale[0, 1] = 0
    if t.length % 2 == 0:
        scale[t.length // 2, 1] = 0
    whole = _op(e, "Gather", [x, index.astype(np.int64)], {"axis": rank - 2})
    return _op(e, "Mul", [whole, e.constant(scale, "hermitian")])


def _real_channel(e: Emitter, x, rank: int, out):
    """x's real parts, [..., 1]."""
    ends = [np.array([v], np.int64) for v in (0, 1, rank - 1)]
    return _op(e, "Slice", [x, *ends], out=out)


def _dft_axis(e: Emitter, node: gs.Node, rank: int) -> int:
    """The transform axis, from 0: an input from opset 20, an attribute before."""
    if e.opset >= 20:
        given = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2].name else None
        axis = -2 if given is None else _scalar(e, given, "the axis")
    else:
        axis = int(node.attrs.get("axis", 1))
    axis %= rank
    if axis == rank - 1:
        raise _fail(node, "the transform axis is the (re, im) axis", node.inputs[0])
    return axis


def _dft_transform(e: Emitter, node: gs.Node, axis: int, lowered: Lowered) -> _Transform:
    """The DFT's static facts, or a refusal saying which one is not static."""
    x = node.inputs[0]
    n_in, channels = _static(x.shape[axis]), _static(x.shape[-1])
    if n_in is None or channels not in (1, 2):
        raise _fail(
            node,
            f"the signal's shape {x.shape} gives no static transform length on axis {axis}; "
            "the MatMul form needs one",
            x,
        )
    inverse = bool(node.attrs.get("inverse", 0))
    onesided = bool(node.attrs.get("onesided", 0))
    given = node.inputs[1] if len(node.inputs) > 1 and node.inputs[1].name else None
    if given is not None:
        length = _scalar(e, given, "dft_length")
    else:
        length = 2 * (n_in - 1) if inverse and onesided else n_in
    if length < 1:
        raise _fail(node, f"transform length {length}", x)
    if x.dtype is None:
        raise _fail(node, "the signal's type is unknown", x)
    # Taken now: the signal moved to axis -2 is a new tensor with no type recorded.
    return _Transform(n_in, channels, length, inverse, onesided, x.dtype)


def _four_step(
    e: Emitter, lowered: Lowered, x, rank: int, t: _Transform, factors, out, pre=None, post=None
):
    """DFT_L of x's axis -2 as DFT_L1, a twiddle, then DFT_L2 (Cooley-Tukey):

    with n = L2 n1 + n2 and k = k1 + L1 k2,
    X[k] = sum_n2 W_L2^(n2 k2) [W_L^(n2 k1) sum_n1 x[n] W_L1^(n1 k1)],  W_N = e^(-2 pi i/N)
    (e^(+2 pi i/N) and 1/L for the inverse). The twiddle is folded into the second
    matrix, one per k1, so both steps are MatMuls: about 4 (L1^2 + L L2) numbers instead
    of 4 L^2. A factor `pre[n]` on the signal is folded into the first (one per n2), and
    `post[k]` on the result into the second.
    """
    l1, l2 = factors
    r = rank - 2
    keep, swap = [0] * r, [*range(r), r + 1, r, r + 2]  # swap the two axes before (re, im)
    axis = np.array([r], np.int64)
    x = _to_length(e, x, rank, t)

    def shape(*dims):
        return np.array([*keep, *dims], np.int64)

    _check_bytes(
        e,
        t.length,
        _four_step_bytes(t, l1, l2, pre is not None),
        MAX_FORM_BYTES,
        "{} MiB of matrices",
    )
    first, second = _four_step_matrices(t, l1, l2, pre, post)
    lowered.matrix_bytes += first.nbytes + second.nbytes
    step = _op(e, "Transpose", [_op(e, "Reshape", [x, shape(l1, l2, t.channels)])], {"perm": swap})
    by_row = () if pre is None else (1,)  # one matrix per n2: a row each
    rows = _op(e, "Reshape", [step, shape(l2, *by_row, l1 * t.channels)])
    step = _op(e, "MatMul", [rows, e.constant(np.ascontiguousarray(first), "dft_l1")])
    step = _op(e, "Transpose", [_op(e, "Reshape", [step, shape(l2, l1, 2)])], {"perm": swap})
    rows = _op(e, "Reshape", [step, shape(l1, 1, 2 * l2)])
    step = _op(e, "MatMul", [rows, e.constant(np.ascontiguousarray(second), "dft_l2")])
    step = _op(e, "Transpose", [_op(e, "Reshape", [step, shape(l1, l2, 2)])], {"perm": swap})
    if not t.onesided:
        return _op(e, "Reshape", [step, shape(t.length, 2)], out=out)
    full = _op(e, "Reshape", [step, shape(t.length, 2)])
    bins = np.array([t.length // 2 + 1], np.int64)
    return _op(e, "Slice", [full, np.array([0], np.int64), bins, axis], out=out)


def _to_length(e: Emitter, x, rank: int, t: _Transform):
    """x's axis -2 cut to the transform's length, or zero-padded to it."""
    r = rank - 2
    if t.n_in > t.length:
        zero, end = np.array([0], np.int64), np.array([t.length], np.int64)
        return _op(e, "Slice", [x, zero, end, np.array([r], np.int64)])
    if t.n_in < t.length:
        pads = np.zeros(2 * rank, np.int64)
        pads[rank + r] = t.length - t.n_in
        return _op(e, "Pad", [x, pads])
    return x


def _four_step_bytes(t: _Transform, l1: int, l2: int, per_row: bool) -> int:
    """The bytes of `_four_step_matrices`: the first one per n2 where `per_row`."""
    first = (l2 if per_row else 1) * l1 * t.channels * 2 * l1
    return np.dtype(t.dtype).itemsize * (first + l1 * (2 * l2) ** 2)


def _check_bytes(e: Emitter, length: int, nbytes: int, limit: int, matrices: str) -> None:
    """Refuses a transform of `length` whose `matrices` ("a {} MiB DFT matrix", the size
    put in) take `nbytes`, past `limit`."""
    if nbytes > limit:
        size = matrices.format(f"{nbytes / 2**20:.1f}")
        raise _fail(
            e.node,
            f"a transform of length {length} needs {size}, over the {limit / 2**20:.1f} MiB limit",
        )


def _four_step_matrices(
    t: _Transform, l1: int, l2: int, pre=None, post=None
) -> tuple[np.ndarray, np.ndarray]:
    """The four-step form's matrices, in float64 and rounded once: DFT_L1's block (one
    per n2, times pre[L2 n1 + n2], with `pre`), and DFT_L2's with the twiddle
    T[n2, k1] = W_L^(n2 k1) (and post[k1 + L1 k2], with `post`) folded in, one per k1."""
    w1 = cmath.dft_coefficients(l1, l1, t.inverse)
    if pre is None:
        first = cmath.interleaved_block(w1)
    else:
        by_n2 = pre.reshape(l1, l2).T  # [n2, n1]
        first = np.stack([cmath.interleaved_block(by_n2[n2][:, None] * w1) for n2 in range(l2)])
    if t.channels == 1:
        first = first[..., 0::2, :]
    sign = 1 if t.inverse else -1
    n2, k1 = np.arange(l2)[:, None], np.arange(l1)[None, :]
    twiddle = np.exp(sign * 2j * np.pi * ((n2 * k1) % t.length) / t.length)  # T[n2, k1]
    w2 = cmath.dft_coefficients(l2, l2, t.inverse)
    after = np.ones((l1, l2)) if post is None else post.reshape(l2, l1).T  # [k1, k2]
    second = np.stack([cmath.interleaved_block(twiddle[:, [k]] * w2 * after[k]) for k in range(l1)])
    return first.astype(t.dtype), second.astype(t.dtype)


def _bluestein(e: Emitter, lowered: Lowered, x, rank: int, t: _Transform, out):
    """DFT_L of x's axis -2 by Bluestein's chirp-z, for a length that does not factor:

    X[k] = c_k sum_n (x[n] c_n) conj(c)_(k-n),  c_n = e^(-+ i pi n^2 / L)  (1/L inverse),
    the sum a cyclic convolution of length M = 2^m >= 2L - 1: IDFT_M(DFT_M(x c) B), with
    B = DFT_M of conj(c) wrapped around. Both transforms take the four-step form, c
    folded into the first's first matrix, B into its second, and c (with 1/L) into the
    inverse's second: four MatMuls, each a DFT of a length near sqrt(M).
    """
    m = 1 << (2 * t.length - 2).bit_length()
    n = np.arange(t.length, dtype=np.int64)
    angle = np.pi * ((n * n) % (2 * t.length)) / t.length  # n^2 mod 2L: the angle exact
    chirp = np.exp(1j * angle if t.inverse else -1j * angle)
    kernel = np.zeros(m, np.complex128)
    kernel[: t.length], kernel[m - t.length + 1 :] = np.conj(chirp), np.conj(chirp[1:])[::-1]
    pre, post = np.zeros(m, np.complex128), np.ones(m, np.complex128)
    pre[: t.length] = chirp
    post[: t.length] = chirp / t.length if t.inverse else chirp
    forward = replace(t, n_in=t.length, length=m, inverse=False, onesided=False)
    inverse = replace(forward, n_in=m, channels=2, inverse=True)
    l1, l2 = _factor(m)
    nbytes = _four_step_bytes(forward, l1, l2, True) + _four_step_bytes(inverse, l1, l2, False)
    _check_bytes(e, t.length, nbytes, MAX_FORM_BYTES, "{} MiB of matrices")
    signal = _to_length(e, x, rank, replace(t, onesided=False))
    spectrum = _four_step(
        e, lowered, signal, rank, forward, (l1, l2), None, pre, np.fft.fft(kernel)
    )
    conv = _four_step(e, lowered, spectrum, rank, inverse, (l1, l2), None, post=post)
    end = t.length // 2 + 1 if t.onesided else t.length
    ends = [np.array([v], np.int64) for v in (0, end, rank - 2)]
    return _op(e, "Slice", [conv, *ends], out=out)


@lowering("STFT")
def stft(e: Emitter, node: gs.Node, lowered: Lowered) -> None:
    x, y = node.inputs[0], node.outputs[0]
    inputs = [*node.inputs, *[None] * (4 - len(node.inputs))]
    step_t, window_t, length_t = inputs[1], inputs[2], inputs[3]
    if x.shape is None or len(x.shape) != 3:
        raise _fail(node, "the signal must be [batch, length, 1 or 2] with a known rank", x)
    total, channels = _static(x.shape[1]), _static(x.shape[2])
    if total is None or channels not in (1, 2):
        raise _fail(
            node,
            f"the signal's shape {x.shape} has a dynamic length; the frames are gathered "
            "with constant indices, which need it static",
            x,
        )
    step = _scalar(e, step_t, "frame_step")
    window = gs_value(window_t)
    has_window = window_t is not None and bool(window_t.name)
    if has_window and window is None:
        width = _static((window_t.shape or [None])[0])
        if width is None:
            raise _fail(node, "the window's length is dynamic", window_t)
    else:
        width = None if window is None else int(window.shape[0])
    if length_t is not None and length_t.name:
        length = _scalar(e, length_t, "frame_length")
    else:
        length = width if width is not None else total
    width = width if width is not None else length
    # STFT is one-sided unless told otherwise (the op's default).
    onesided = bool(node.attrs.get("onesided", 1))
    frames = 1 + (total - length) // step
    if frames < 1 or step < 1:
        raise _fail(node, f"{frames} frames of {length} from a signal of {total}", x)
    if lowered.max_length is not None and length > lowered.max_length:
        raise _fail(node, f"length {length}, past {lowered.max_length}, where the op is faster")

    index = np.arange(frames)[:, None] * step + np.arange(width)[None, :]
    signal = x
    if index.max() >= total:  # a window longer than the frame reads zeros past the end
        pads = np.array([0, 0, 0, 0, index.max() + 1 - total, 0], np.int64)
        signal = _op(e, "Pad", [x, pads])
    gathered = _op(e, "Gather", [signal, index.astype(np.int64)], {"axis": 1})
    m = _dft_block(e, _Transform(width, channels, length, False, onesided, x.dtype))
    if window is not None:
        # Rows of M are (sample, part): scaling row j by w_j windows the frame for free.
        m = m * np.repeat(window.astype(m.dtype), channels)[:, None]
    elif has_window:
        gathered = _op(e, "Mul", [gathered, _op(e, "Reshape", [window_t, np.array([-1, 1])])])
    out_len = length // 2 + 1 if onesided else length
    _matmul_last_two(e, lowered, gathered, 4, width * channels, m, [out_len, 2], y)
    node.outputs.clear()
    lowered.notes.append(
        f"{node.name}: STFT of {frames} frames of {length} -> Gather, MatMul by a "
        f"{m.shape[0]}x{m.shape[1]} matrix"
    )


@lowering("Compress")
def compress(e: Emitter, node: gs.Node, lowered: Lowered) -> None:
    x, cond, y = node.inputs[0], node.inputs[1], node.outputs[0]
    axis = node.attrs.get("axis")
    if axis is None:
        x, axis = _op(e, "Reshape", [x, np.array([-1], np.int64)]), 0
    value = gs_value(cond)
    if value is not None:
        index = np.flatnonzero(value.astype(bool)).astype(np.int64)
        how = "constant indices"
    else:
        # NonZero takes floats in TensorRT, not booleans.
        as_float = _op(e, "Cast", [cond], {"to": onnx.TensorProto.FLOAT})
        index = _op(e, "Reshape", [_op(e, "NonZero", [as_float]), np.array([-1], np.int64)])
        how = "NonZero of the condition"
    _op(e, "Gather", [x, index], {"axis": int(axis)}, out=y)
    node.outputs.clear()
    lowered.notes.append(f"{node.name}: Compress -> Gather with {how}")


def _dims(t: gs.Tensor, rank: int) -> list:
    shape = t.shape if t.shape is not None and len(t.shape) == rank else [None] * rank
    return [_static(d) for d in shape]


def _arranged(e: Emitter, t, perm, shape):
    """`t` transposed by `perm`, then reshaped to `shape` (0 copies a dim), each where
    given: in numpy for a constant, else by nodes."""
    if perm is None and shape is None:
        return t
    value = gs_value(t)
    if value is not None:
        value = value if perm is None else np.transpose(value, perm)
        if shape is not None:
            value = value.reshape([value.shape[i] if v == 0 else v for i, v in enumerate(shape)])
        return np.ascontiguousarray(value)
    if perm is not None:
        t = _op(e, "Transpose", [t], {"perm": list(perm)})
    if shape is not None:
        t = _op(e, "Reshape", [t, np.array(shape, np.int64)])
    return t


@lowering("Einsum")
def einsum(e: Emitter, node: gs.Node, lowered: Lowered) -> bool | None:
    """An Einsum of two operands as one MatMul, between the Transposes and Reshapes that
    put its letters in place (`einsum.plan`); a constant operand is arranged at rewrite
    time. jax2onnx writes every dot_general as an Einsum; this form takes 0.18 to 0.95 of
    the time of onnxruntime's Einsum, measured on FNO's and Llama's equations."""
    equation = str(node.attrs.get("equation", ""))
    terms = equation.replace(" ", "").partition("->")[0].split(",")
    if len(node.inputs) != 2 or len(terms) != 2:
        return False
    constant = [gs_value(t) is not None for t in node.inputs]
    x_index = 1 if constant[0] and not constant[1] else 0
    x, w = node.inputs[x_index], node.inputs[1 - x_index]
    found = einsum_plan.plan(
        equation,
        x_index,
        _dims(x, len(terms[x_index])),
        _dims(w, len(terms[1 - x_index])),
        w_runtime=not constant[1 - x_index],
    )
    if found is None:
        return False
    xs = _arranged(e, x, found.x_perm, found.x_shape)
    ws = _arranged(e, w, found.w_perm, found.w_shape)
    y = _op(e, "MatMul", [xs, ws] if found.x_left else [ws, xs])
    if found.y_shape is not None:
        y = _op(e, "Reshape", [y, np.array(found.y_shape, np.int64)])
    if found.y_perm is not None:
        y = _op(e, "Transpose", [y], {"perm": list(found.y_perm)})
    e.bind(node.outputs[0], y)
    node.outputs.clear()
    lowered.notes.append(f"{node.name}: Einsum '{equation}' -> MatMul")


@lowering("NonZero")
def nonzero(e: Emitter, node: gs.Node, lowered: Lowered) -> bool | None:
    x, y = node.inputs[0], node.outputs[0]
    if x.dtype is not None and np.dtype(x.dtype) in (np.float32, np.float16):
        return False  # TensorRT takes it as it is
    # TensorRT's NonZero takes floats, not booleans or integers (jax2onnx's ScatterND
    # writes one of a mask); the cast keeps which elements are nonzero.
    _op(e, "NonZero", [_op(e, "Cast", [x], {"to": onnx.TensorProto.FLOAT})], out=y)
    node.outputs.clear()
    lowered.notes.append(f"{node.name}: NonZero of its input cast to float")


def _lower_graph(e: Emitter, lowered: Lowered, declared: dict, ops, strict: bool) -> None:
    graph, replaced = e.graph, []
    for node in list(graph.nodes):
        for sub in node.subgraphs():
            _lower_graph(e.child(sub), lowered, {}, ops, strict)
        fn = LOWERINGS.get(node.op) if node.op in ops and is_default_domain(node.domain) else None
        if fn is None:
            continue
        outputs = list(node.outputs)
        e.node = node
        try:
            if fn(e, node, lowered) is False:
                continue  # nothing to lower, nothing emitted
        except DecomplexError as error:
            if strict:
                raise
            # What was emitted before the refusal is unused, and cleaned up below.
            why = error.message.removeprefix(_CANNOT)
            lowered.notes.append(f"{node.name}: {node.op} kept as it is: {why}")
            continue
        replaced += outputs
        lowered.ops[node.op] += 1
        node.inputs.clear()
    # Inferred shapes of the old ops may disagree with the emitted ones (ONNX infers
    # STFT as two-sided by default, while the op is one-sided): only what the model
    # itself declared is kept, and the rest is inferred again. Later lowerings read
    # them first, so this waits until all are done.
    for t in replaced:
        t.shape = declared.get(t.name)
    graph.cleanup(remove_unused_graph_inputs=False).toposort()


def lower_for_tensorrt(model: onnx.ModelProto, opset: int) -> tuple[onnx.ModelProto, Lowered]:
    """Replaces the ops in LOWERINGS by ones TensorRT imports.

    Args:
        model: A real model.
        opset: Its default-domain opset.

    Returns:
        The lowered model (the same object when nothing needed lowering) and what
        changed. Its value_info is dropped, to be inferred again.

    Raises:
        DecomplexError: A node cannot be lowered, such as a transform of dynamic length.
    """
    return lower(model, opset, set(LOWERINGS))


def lower(
    model: onnx.ModelProto,
    opset: int,
    ops: set[str],
    strict: bool = True,
    max_length: int | None = None,
) -> tuple[onnx.ModelProto, Lowered]:
    """Replaces the nodes of `ops` (of LOWERINGS) by their lowerings.

    With `strict` off, a node that cannot be lowered (a transform of dynamic length,
    or one longer than `max_length`) is kept as it is, and a note says why: the
    lowering is then a choice, not a need. Otherwise, as `lower_for_tensorrt`.
    """
    found = {n.op_type for n in _all_nodes(model.graph)} & set(ops)
    if not found:
        return model, Lowered()
    lowered = Lowered(max_length=max_length)
    graph = _shaped(model)
    if any(n.op == "DFT" and not _all_static(n.inputs[0].shape) for n in graph.nodes):
        # A transform's length may be static yet computed (tf2onnx's roll: Shape, Slice,
        # Mod): folded, its shape is known.
        try:
            graph.fold_constants(fold_shapes=True).cleanup(remove_unused_graph_inputs=False)
            graph = _shaped(gs.export_onnx(graph, do_type_check=False))
        except Exception:  # nothing folds: the lowerings that need a shape say so
            graph = _shaped(model)
    declared = {o.name: declared_dims(o) for o in model.graph.output}
    _lower_graph(Emitter(graph, opset), lowered, declared, ops, strict)
    if not lowered.ops:
        return model, lowered
    out = gs.export_onnx(graph, do_type_check=False)
    keep_model_fields(model, out)
    return out, lowered


def _shaped(model: onnx.ModelProto) -> gs.Graph:
    """`model` in onnx-graphsurgeon, its shapes inferred where inference runs."""
    try:
        return gs.import_onnx(infer_shapes(model, data_prop=True))
    except Exception:  # the lowerings that need a shape say so themselves
        return gs.import_onnx(model)


def _all_static(shape) -> bool:
    return shape is not None and all(_static(d) is not None for d in shape)


def _all_nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for g in [attr.g] if attr.HasField("g") else list(attr.graphs):
                yield from _all_nodes(g)
