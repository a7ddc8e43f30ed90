"""DFT and STFT as MatMuls by matrices computed in float64 and rounded once:

    DFT(x, L, axis)       -> Reshape(MatMul(Reshape(x, [..., n*c]), M), [..., K, c']) up
                             to length 12; past it, two MatMuls of the four-step form
                             where L factors, or four of Bluestein's where it does not
                             (accurate at float32's level, docs/transforms.md)
    STFT(x, step, win, L) -> Conv(x, M as its kernel, stride step), the window in M;
                             a window given at run time: MatMul(Gather(x, frames) win, M)

M is the real block of the DFT matrix (`cmath.dft_coefficients`), built in numpy,
so transform lengths must be static. A transform axis other than the one before
(re, im) is moved there and back with Transpose. Every target takes these forms:
onnxruntime's own float32 DFT is far less accurate than a float32 FFT, OpenVINO's
misreads some DFTs' shapes and axes and has no float64 one, and TensorRT has none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import onnx_graphsurgeon as gs

from ... import cmath
from ...constants import gs_value
from ...emit import Emitter
from ...graphs import dft_axis
from .lowering import Lowered, lowering, op, refuse, scalar, static

ACCURATE = frozenset({"DFT"})
"""What every target lowers in a model the rewrite makes, for accuracy alone."""

TRANSFORM_OPS = frozenset({"DFT", "STFT"})
"""The ops whose outputs are complex values in ONNX's own packed layout: a model that
holds one takes a target's forms as a model the rewrite made does, complex type or not."""

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
    flat = op(e, "Reshape", [x, np.array([*keep, width], np.int64)])
    prod = op(e, "MatMul", [flat, e.constant(np.ascontiguousarray(m), "dft_matrix")])
    lowered.matrix_bytes += m.nbytes
    return op(e, "Reshape", [prod, np.array([*keep, *out_shape], np.int64)], out=out)


@lowering("DFT")
def dft(e: Emitter, node: gs.Node, lowered: Lowered) -> None:
    x, y = node.inputs[0], node.outputs[0]
    if x.shape is None:
        raise refuse(node, "the signal's rank is unknown", x)
    rank = len(x.shape)
    given = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2].name else None
    value = None if given is None else scalar(e, given, "the axis")
    axis = dft_axis(e.opset, rank, value, node.attrs.get("axis"))
    if not 0 <= axis < rank - 1:
        raise refuse(node, f"the transform axis {axis} is not one of the signal's", x)
    t = _dft_transform(e, node, axis, lowered)
    # A real one-sided spectrum (no imaginary parts) is rare: it keeps the dense form.
    form = "dense" if t.inverse and t.onesided and t.channels == 1 else _form(t.length)
    if form != "dense" and lowered.native is not None and lowered.native(t.length):
        form = "native"

    perm = None
    if axis != rank - 2:
        perm = [d for d in range(rank) if d not in (axis, rank - 1)] + [axis, rank - 1]
        x = op(e, "Transpose", [x], {"perm": perm})
    inner = None if perm is None else gs.Variable(e.fresh("moved"))
    out = inner or y
    if form == "native":
        res = native(e, x, rank, t, out)
    elif form != "dense" and t.inverse and t.onesided:
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
           "MatMuls", "native": "one DFT of [rows, length, 2] on axis 1"}.get(
        form, "MatMuls of lengths {} and {} (four-step)".format(*form))  # fmt: skip
    if perm is not None:
        op(e, "Transpose", [res], {"perm": [int(p) for p in np.argsort(perm)]}, out=y)
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


def native(e: Emitter, x, rank: int, t: _Transform, out):
    """`t` on x's axis -2 as one DFT node in the form every runtime reads alike, OpenVINO
    2026.4's included (docs/openvino.md): a complex signal [rows, L, 2] transformed on
    axis 1, two-sided; a one-sided spectrum sliced from it after, and a one-sided inverse
    taken from its Hermitian whole, its real channel sliced after."""
    if t.inverse and t.onesided:
        x = _hermitian_whole(e, x, rank, t)
    else:
        x = _to_length(e, x, rank, replace(t, onesided=False))
    if t.channels == 1 and not (t.inverse and t.onesided):
        pads = np.zeros(2 * rank, np.int64)
        pads[-1] = 1
        x = op(e, "Pad", [x, pads])  # (x, 0): a real signal as a complex one
    lead = op(e, "Slice", [op(e, "Shape", [x]), *(np.array([v], np.int64) for v in (0, rank - 2))])
    rows = op(e, "Reshape", [x, np.array([-1, t.length, 2], np.int64)])
    inverse = {"inverse": int(t.inverse)}
    if e.opset >= 20:
        y = op(e, "DFT", [rows, None, np.array(1, np.int64)], inverse)
    else:
        y = op(e, "DFT", [rows], {**inverse, "axis": 1})
    if t.out_len != t.length or t.out_channels != 2:
        starts, ends = np.array([0, 0], np.int64), np.array([t.out_len, t.out_channels], np.int64)
        y = op(e, "Slice", [y, starts, ends, np.array([1, 2], np.int64)])
    dims = np.array([t.out_len, t.out_channels], np.int64)
    return op(e, "Reshape", [y, op(e, "Concat", [lead, dims], {"axis": 0})], out=out)


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
    whole = op(e, "Gather", [x, index.astype(np.int64)], {"axis": rank - 2})
    return op(e, "Mul", [whole, e.constant(scale, "hermitian")])


def _real_channel(e: Emitter, x, rank: int, out):
    """x's real parts, [..., 1]."""
    ends = [np.array([v], np.int64) for v in (0, 1, rank - 1)]
    return op(e, "Slice", [x, *ends], out=out)


def _dft_transform(e: Emitter, node: gs.Node, axis: int, lowered: Lowered) -> _Transform:
    """The DFT's static facts, or a refusal saying which one is not static."""
    x = node.inputs[0]
    n_in, channels = static(x.shape[axis]), static(x.shape[-1])
    if n_in is None or channels not in (1, 2):
        raise refuse(
            node,
            f"the signal's shape {x.shape} gives no static transform length on axis {axis}; "
            "the MatMul form needs one",
            x,
        )
    inverse = bool(node.attrs.get("inverse", 0))
    onesided = bool(node.attrs.get("onesided", 0))
    given = node.inputs[1] if len(node.inputs) > 1 and node.inputs[1].name else None
    if given is not None:
        length = scalar(e, given, "dft_length")
    else:
        length = 2 * (n_in - 1) if inverse and onesided else n_in
    if length < 1:
        raise refuse(node, f"transform length {length}", x)
    if x.dtype is None:
        raise refuse(node, "the signal's type is unknown", x)
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
    step = op(e, "Transpose", [op(e, "Reshape", [x, shape(l1, l2, t.channels)])], {"perm": swap})
    by_row = () if pre is None else (1,)  # one matrix per n2: a row each
    rows = op(e, "Reshape", [step, shape(l2, *by_row, l1 * t.channels)])
    step = op(e, "MatMul", [rows, e.constant(np.ascontiguousarray(first), "dft_l1")])
    step = op(e, "Transpose", [op(e, "Reshape", [step, shape(l2, l1, 2)])], {"perm": swap})
    rows = op(e, "Reshape", [step, shape(l1, 1, 2 * l2)])
    step = op(e, "MatMul", [rows, e.constant(np.ascontiguousarray(second), "dft_l2")])
    step = op(e, "Transpose", [op(e, "Reshape", [step, shape(l1, l2, 2)])], {"perm": swap})
    if not t.onesided:
        return op(e, "Reshape", [step, shape(t.length, 2)], out=out)
    full = op(e, "Reshape", [step, shape(t.length, 2)])
    bins = np.array([t.length // 2 + 1], np.int64)
    return op(e, "Slice", [full, np.array([0], np.int64), bins, axis], out=out)


def _to_length(e: Emitter, x, rank: int, t: _Transform):
    """x's axis -2 cut to the transform's length, or zero-padded to it."""
    r = rank - 2
    if t.n_in > t.length:
        zero, end = np.array([0], np.int64), np.array([t.length], np.int64)
        return op(e, "Slice", [x, zero, end, np.array([r], np.int64)])
    if t.n_in < t.length:
        pads = np.zeros(2 * rank, np.int64)
        pads[rank + r] = t.length - t.n_in
        return op(e, "Pad", [x, pads])
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
        raise refuse(
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
    return op(e, "Slice", [conv, *ends], out=out)


@lowering("STFT")
def stft(e: Emitter, node: gs.Node, lowered: Lowered) -> None:
    x, y = node.inputs[0], node.outputs[0]
    inputs = [*node.inputs, *[None] * (4 - len(node.inputs))]
    step_t, window_t, length_t = inputs[1], inputs[2], inputs[3]
    if x.shape is None or len(x.shape) != 3:
        raise refuse(node, "the signal must be [batch, length, 1 or 2] with a known rank", x)
    total, channels = static(x.shape[1]), static(x.shape[2])
    if total is None or channels not in (1, 2):
        raise refuse(
            node,
            f"the signal's shape {x.shape} has a dynamic length; the frames are gathered "
            "with constant indices, which need it static",
            x,
        )
    step = scalar(e, step_t, "frame_step")
    window = gs_value(window_t)
    has_window = window_t is not None and bool(window_t.name)
    if has_window and window is None:
        width = static((window_t.shape or [None])[0])
        if width is None:
            raise refuse(node, "the window's length is dynamic", window_t)
    else:
        width = None if window is None else int(window.shape[0])
    if length_t is not None and length_t.name:
        length = scalar(e, length_t, "frame_length")
    else:
        length = width if width is not None else total
    width = width if width is not None else length
    # STFT is one-sided unless told otherwise (the op's default).
    onesided = bool(node.attrs.get("onesided", 1))
    frames = 1 + (total - length) // step
    if frames < 1 or step < 1:
        raise refuse(node, f"{frames} frames of {length} from a signal of {total}", x)
    if lowered.max_length is not None and length > lowered.max_length:
        raise refuse(node, f"length {length}, past {lowered.max_length}, where the op is faster")

    index = np.arange(frames)[:, None] * step + np.arange(width)[None, :]
    signal, read = x, int(index.max()) + 1
    if read > total:  # a window longer than the frame reads zeros past the end
        signal = op(e, "Pad", [x, np.array([0, 0, 0, 0, read - total, 0], np.int64)])
    m = _dft_block(e, _Transform(width, channels, length, False, onesided, x.dtype))
    out_len = length // 2 + 1 if onesided else length
    if window is not None:
        # Rows of M are (sample, part): scaling row j by w_j windows the frame for free.
        m = m * np.repeat(window.astype(m.dtype), channels)[:, None]
    runtime_window = has_window and window is None
    if runtime_window or x.dtype == np.float64:  # onnxruntime has no float64 Conv
        gathered = op(e, "Gather", [signal, index.astype(np.int64)], {"axis": 1})
        if runtime_window:  # the frames windowed
            gathered = op(e, "Mul", [gathered, op(e, "Reshape", [window_t, np.array([-1, 1])])])
        _matmul_last_two(e, lowered, gathered, 4, width * channels, m, [out_len, 2], y)
        form = "Gather, MatMul by a"
    else:
        if read < total:
            ends = [np.array([v], np.int64) for v in (0, read, 1)]
            signal = op(e, "Slice", [signal, *ends])
        _strided(e, lowered, signal, (width, channels, step), m, [out_len, 2], y)
        form = f"Conv of stride {step} by a"
    node.outputs.clear()
    lowered.notes.append(
        f"{node.name}: STFT of {frames} frames of {length} -> {form} "
        f"{m.shape[0]}x{m.shape[1]} matrix"
    )


def _strided(e: Emitter, lowered: Lowered, x, frame: tuple[int, int, int], m, out_shape, out):
    """Every frame of x [B, T, C] (`frame`: its width, C, and the step between frames)
    times m ([width C, F 2], rows (sample, part)), as one Conv of that stride: onnxruntime
    reads the frames in place, where a Gather of them takes as long as the product
    (0.47 to 0.49 of a Gather and a MatMul, 30 frames of 256). Its output channels are
    the real parts, then the imaginary ones: [B, 2, F, frames] is then made [B, frames,
    F, 2], and a reduction over the parts (a power spectrum's) that onnxruntime moves
    before that Transpose reads two planes, not interleaved pairs (a Mul and a ReduceSum
    over [2, 2, 129, 30]'s second axis: 0.41 of their time over [2, 129, 30, 2]'s last)."""
    width, channels, step = frame
    if channels == 1:
        signal = op(e, "Reshape", [x, np.array([0, 1, -1], np.int64)])
    else:
        signal = op(e, "Transpose", [x], {"perm": [0, 2, 1]})
    bins, parts = out_shape
    by_part = m.reshape(width, channels, bins, parts).transpose(3, 2, 1, 0)
    kernel = np.ascontiguousarray(by_part.reshape(parts * bins, channels, width))
    lowered.matrix_bytes += kernel.nbytes
    conv = op(e, "Conv", [signal, e.constant(kernel, "dft_kernel")],
              {"strides": [step], "kernel_shape": [width]})  # fmt: skip
    split = op(e, "Reshape", [conv, np.array([0, parts, bins, -1], np.int64)])
    return op(e, "Transpose", [split], {"perm": [0, 3, 2, 1]}, out=out)
