"""TensorFlow's own complex ops, which tf2onnx writes as they are in the default domain
where it has no converter: their meaning in TensorFlow, spelled in ONNX.

    Complex(a, b)            -> a + i b, broadcast
    Real(z) | Imag(z)        -> Re z | Im z
    Conj(z)                  -> Re z - i Im z
    ConjugateTranspose(z, p) -> Transpose(Conj(z), perm=p)
    ComplexAbs(z)            -> |z|, as hypot computes it
    Angle(z)                 -> atan2(Im z, Re z), signed zeros included
    FFT, IFFT (2-D, 3-D)     -> DFTs of the innermost axes, packed
    RFFT, IRFFT (2-D, 3-D)   -> one-sided DFTs of the innermost axes, with fft_length
    Inv(z)                   -> Reciprocal(z)
    Rank(z)                  -> its rank, an int32 scalar
    Reverse(z, dims)         -> Slice(z, -1, -inf, axes where dims holds, steps -1)
    StridedSlice(z, b, e, s) -> Squeeze(Slice(z, ...), shrunk), new axes unsqueezed
    SegmentSum(z, ids)       -> MatMul(z moved to the end, [ids[j] == i] for j, i)
                                moved back: row i the sum of the rows of segment i;
                                ids constant, or at run time (i < max(ids) + 1)

They get that meaning in If branches and Loop bodies too. Each is registered with
`@tensorflow_op`, which says what its operands must be and what it gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from ..dtypes import real_of
from ..files.tensorflow import TENSORFLOW_OPS
from ..graphs import is_default_domain
from .facts import COMPLEX_OF, Shape
from .readings import TENSORFLOW, TensorflowOp, tensorflow_op

if TYPE_CHECKING:
    from .protocol import ReadingContext

TRANSFORMS = {
    f"{kind}{suffix}": k
    for kind in ("FFT", "IFFT", "RFFT", "IRFFT")
    for suffix, k in (("", 1), ("2D", 2), ("3D", 3))
}
"""TensorFlow's Fourier transforms, by how many innermost axes they transform."""

Read = "tuple[gs.Tensor, Shape] | None"


def _forms(kind: str) -> list[str]:
    """A transform's 1-D, 2-D and 3-D op types."""
    return [f"{kind}{suffix}" for suffix in ("", "2D", "3D")]


def is_tensorflow(node: gs.Node) -> bool:
    return node.op in TENSORFLOW_OPS and is_default_domain(node.domain)


def holds_tensorflow(node: gs.Node) -> bool:
    """True when a body or branch of `node`, at any depth, holds a TensorFlow op."""
    return any(is_tensorflow(n) for g in node.subgraphs(recursive=True) for n in g.nodes)


def read_tensorflow(walk: ReadingContext, node: gs.Node) -> None:
    """TensorFlow's op `node` as its registered meaning, in place: an Identity of the
    result. Refused, naming the node, where its operands are not what it takes."""
    op: TensorflowOp = TENSORFLOW[node.op]
    if not _operands_fit(walk, node, op):
        return
    found = op.fn(walk, node)
    if found is None:
        return
    result, shape = found
    walk.become(node, "Identity", [result])
    _give(walk, node.outputs[0], result, shape, op.gives)
    walk.readings.append(
        f"{node.name} ({op.op_type}): TensorFlow's {op.op_type}, left as it is by tf2onnx"
    )


def _operands_fit(walk: ReadingContext, node: gs.Node, op: TensorflowOp) -> bool:
    real = op.takes == "real"
    for t in node.inputs[: op.operands]:
        if (walk.elem.get(t.name) in COMPLEX_OF) if real else (t.name in walk.kind):
            continue
        want = "a float32 or float64 tensor" if real else "a complex value"
        walk.conflict(node, f"{node.op} takes {want}, and '{t.name}' is not one", t.name)
        return False
    return True


def _give(
    walk: ReadingContext, out: gs.Tensor, result: gs.Tensor, shape: Shape, gives: str
) -> None:
    """`out` is `result`, of logical shape `shape`: a complex value packed or native,
    or a real one."""
    packed = gives == "packed"
    if shape is None and walk.shape.get(result.name) is not None:
        # what the emitted nodes inferred (a broadcast, an unknown input dim)
        shape = walk.shape[result.name][: -1 if packed else None]
    if packed:
        kind = COMPLEX_OF[walk.elem[result.name]]
        walk.kind[out.name], walk.shape[out.name] = kind, shape
        walk.packed[out.name], walk.as_packed[out.name] = out, "last"
    elif gives == "native":
        walk.set_native(out, walk.kind[result.name], shape)
    else:
        walk.elem[out.name], walk.shape[out.name] = walk.elem[result.name], shape


@tensorflow_op("Complex", takes="real", operands=2, gives="native")
def complex_(walk: ReadingContext, node: gs.Node) -> Read:
    re, im = node.inputs
    kind = COMPLEX_OF[walk.elem[re.name]]
    shape = walk.shape.get(re.name)
    shape = shape if shape == walk.shape.get(im.name) else None  # broadcast
    return walk.combine(re, im, kind, shape, node.outputs[0].name, exact=True), shape


@tensorflow_op("Real", "Imag")
def part(walk: ReadingContext, node: gs.Node) -> Read:
    x = node.inputs[0]
    return walk.part(x, int(node.op == "Imag")), walk.shape.get(x.name)


@tensorflow_op("Conj", gives="native")
def conj(walk: ReadingContext, node: gs.Node) -> Read:
    x = node.inputs[0]
    return _conj(walk, x, node.outputs[0].name), walk.shape.get(x.name)


@tensorflow_op("ConjugateTranspose", gives="native")
def conjugate_transpose(walk: ReadingContext, node: gs.Node) -> Read:
    x, out = node.inputs[0], node.outputs[0]
    rank, shape = walk.rank(x), walk.shape.get(x.name)
    perm = walk.constant(node.inputs[1])
    if perm is None or rank is None or sorted(perm.reshape(-1)) != list(range(rank)):
        walk.conflict(node, f"{node.op}'s perm is not a constant permutation of {rank} axes",
                      node.inputs[1].name)  # fmt: skip
        return None
    perm = [int(p) for p in perm.reshape(-1)]
    shape = None if shape is None else [shape[p] for p in perm]
    result = walk.emit("Transpose", [_conj(walk, x, out.name)], {"perm": perm},
                       name=f"{out.name}_transposed", dtype=walk.kind[x.name], shape=shape)  # fmt: skip
    return result, shape


@tensorflow_op("ComplexAbs")
def complex_abs(walk: ReadingContext, node: gs.Node) -> Read:
    # The Abs rule computes |z| as hypot does: no overflow where re^2 + im^2 would.
    x, out = node.inputs[0], node.outputs[0]
    shape = walk.shape.get(x.name)
    result = walk.emit("Abs", [walk.native_of(x)], name=f"{out.name}_abs",
                       dtype=real_of(walk.kind[x.name]), shape=shape)  # fmt: skip
    return result, shape


@tensorflow_op("Angle")
def angle(walk: ReadingContext, node: gs.Node) -> Read:
    # arg z = Im log z, which is atan2(Im z, Re z), signed zeros included.
    x, out = node.inputs[0], node.outputs[0]
    shape = walk.shape.get(x.name)
    log = walk.emit("Log", [_off_zero(walk, x, out.name)], name=f"{out.name}_log",
                    dtype=walk.kind[x.name], shape=shape)  # fmt: skip
    return walk.part(log, 1), shape


@tensorflow_op("Inv", gives="native")
def inv(walk: ReadingContext, node: gs.Node) -> Read:
    x, out = node.inputs[0], node.outputs[0]
    shape = walk.shape.get(x.name)
    result = walk.emit("Reciprocal", [walk.native_of(x)], name=f"{out.name}_inverse",
                       dtype=walk.kind[x.name], shape=shape)  # fmt: skip
    return result, shape


@tensorflow_op("Rank")
def rank(walk: ReadingContext, node: gs.Node) -> Read:
    found = _rank(walk, node)
    if found is None:
        return None
    value = walk.scalar(found, np.int32, f"{node.outputs[0].name}_rank")
    return walk.emit("Identity", [value], name=f"{node.outputs[0].name}_rank",
                     dtype=np.dtype(np.int32), shape=[]), []  # fmt: skip


@tensorflow_op("Reverse", gives="native")
def reverse(walk: ReadingContext, node: gs.Node) -> Read:
    """TensorFlow's Reverse: its dims are one bool per axis (ReverseV2 takes axes)."""
    x, out = node.inputs[0], node.outputs[0]
    rank, dims = walk.rank(x), walk.constant(node.inputs[1])
    if dims is None or rank is None or dims.size != rank:
        walk.conflict(node, f"{node.op}'s dims are not a constant of one bool per axis",
                      node.inputs[1].name)  # fmt: skip
        return None
    axes = [int(a) for a in np.flatnonzero(dims.reshape(-1))]
    shape = walk.shape.get(x.name)
    if not axes:
        return walk.native_of(x), shape
    ends = np.full(len(axes), np.iinfo(np.int64).min, np.int64)
    bounds = [(np.full(len(axes), -1), "starts"), (ends, "ends"), (axes, "axes"),
              (np.full(len(axes), -1), "steps")]  # fmt: skip
    inputs = [walk.scalar(v, np.int64, f"{out.name}_{what}") for v, what in bounds]
    result = walk.emit("Slice", [walk.native_of(x), *inputs], name=f"{out.name}_reversed",
                       dtype=walk.kind[x.name], shape=shape)  # fmt: skip
    return result, shape


@tensorflow_op("SegmentSum", gives="native")
def segment_sum(walk: ReadingContext, node: gs.Node) -> Read:
    """Row i of the result is the sum of the rows of z whose id is i; ids are sorted,
    and a segment no row names is zero."""
    x, out = node.inputs[0], node.outputs[0]
    rank, ids = walk.rank(x), walk.constant(node.inputs[1])
    if rank is None or walk.rank(node.inputs[1]) != 1 or ids is not None and ids.min() < 0:
        walk.conflict(node, f"{node.op}'s segment_ids are not a list of ids of its rows",
                      node.inputs[1].name)  # fmt: skip
        return None
    kind, shape = walk.kind[x.name], walk.shape.get(x.name)
    if ids is not None:
        count = int(ids.max()) + 1 if ids.size else 0
        member = gs.Constant(walk.unique(f"{out.name}_segments"),
                             (ids[:, None] == np.arange(count)[None, :]).astype(kind))  # fmt: skip
    else:
        count, member = None, _members(walk, node.inputs[1], kind, out.name)
    last = [*range(1, rank), 0]  # the rows' axis moved last, for one MatMul
    moved = walk.emit("Transpose", [walk.native_of(x)], {"perm": last},
                      name=f"{out.name}_rows_last", dtype=kind,
                      shape=None if shape is None else [*shape[1:], shape[0]])  # fmt: skip
    sums = walk.emit("MatMul", [moved, member], name=f"{out.name}_sums", dtype=kind,
                     shape=None if shape is None else [*shape[1:], count])  # fmt: skip
    shape = None if shape is None else [count, *shape[1:]]
    back = [rank - 1, *range(rank - 1)]
    result = walk.emit("Transpose", [sums], {"perm": back}, name=f"{out.name}_segment_sum",
                       dtype=kind, shape=shape)  # fmt: skip
    return result, shape


@tensorflow_op("StridedSlice", gives="native")
def strided_slice(walk: ReadingContext, node: gs.Node) -> Read:
    """TensorFlow's StridedSlice, its masks read: one Slice of the input's axes, a
    Squeeze of those shrunk to an index, an Unsqueeze of the new axes."""
    x, out = node.inputs[0], node.outputs[0]
    rank = walk.rank(x)
    spec = [walk.constant(t) for t in node.inputs[1:4]]
    if rank is None or any(v is None or v.ndim != 1 or v.size != spec[0].size for v in spec):
        walk.conflict(node, f"{node.op}'s begin, end and strides are not constants of one "
                      "size, or its input's rank is unknown", x.name)  # fmt: skip
        return None
    plan = _strided(rank, *(v.astype(np.int64) for v in spec), node.attrs)
    if plan is None:
        walk.conflict(node, f"{node.op} with a stride of 0", node.inputs[3].name)
        return None
    slices, shrunk, new = plan
    kind, result = walk.kind[x.name], walk.native_of(x)
    if slices:
        bounds = [walk.scalar(np.array(v, np.int64), np.int64, f"{out.name}_{what}")
                  for v, what in zip(zip(*slices, strict=True), ("starts", "ends", "axes", "steps"),
                                     strict=True)]  # fmt: skip
        result = walk.emit("Slice", [result, *bounds], name=f"{out.name}_slice", dtype=kind,
                           shape=None)  # fmt: skip
    for op, axes in (("Squeeze", shrunk), ("Unsqueeze", new)):
        if axes:
            result = walk.emit(op, [result, walk.scalar(axes, np.int64, f"{out.name}_axes")],
                               name=f"{out.name}_{op.lower()}", dtype=kind, shape=None)  # fmt: skip
    return result, None


_END = np.iinfo(np.int64).max


def _strided(rank: int, begin, end, strides, attrs) -> tuple[list, list, list] | None:
    """StridedSlice's masks as (Slice's (start, end, axis, step) per input axis sliced,
    the input axes shrunk to an index, the output axes that are new); None for a
    stride of 0."""
    mask = {k: int(attrs.get(f"{k}_mask", 0)) for k in ("begin", "end", "ellipsis", "new_axis",
                                                         "shrink_axis")}  # fmt: skip
    bit = [1 << i for i in range(begin.size)]
    real = sum(not (mask["ellipsis"] & b or mask["new_axis"] & b) for b in bit)
    slices, shrunk, out, axis = [], [], [], 0
    for i, b in enumerate(bit):
        if mask["ellipsis"] & b:
            out += ["kept"] * (rank - real)
            axis += rank - real
            continue
        if mask["new_axis"] & b:
            out.append("new")
            continue
        step = int(strides[i])
        if step == 0:
            return None
        if mask["shrink_axis"] & b:
            start = int(begin[i])
            slices.append((start, start + 1 if start != -1 else _END, axis, 1))
            shrunk.append(axis)
        else:
            start = (0 if step > 0 else _END) if mask["begin"] & b else int(begin[i])
            stop = (_END if step > 0 else -_END) if mask["end"] & b else int(end[i])
            slices.append((start, stop, axis, step))
            out.append("kept")
        axis += 1
    out += ["kept"] * (rank - axis)
    return slices, shrunk, [j for j, d in enumerate(out) if d == "new"]


def _members(walk: ReadingContext, ids: gs.Tensor, kind: np.dtype, name: str) -> gs.Tensor:
    """[ids[j] == i] for row j and segment i < max(ids) + 1, ids given at run time."""
    i64 = np.dtype(np.int64)
    ids = walk.emit("Cast", [ids], {"to": onnx.TensorProto.INT64}, name=f"{name}_ids",
                    dtype=i64, shape=walk.shape.get(ids.name))  # fmt: skip
    top = walk.emit("ReduceMax", [ids], {"keepdims": 0}, name=f"{name}_last_id", dtype=i64,
                    shape=[])  # fmt: skip
    count = walk.emit("Add", [top, walk.scalar(1, i64, f"{name}_one")], name=f"{name}_count",
                      dtype=i64, shape=[])  # fmt: skip
    segments = walk.emit("Range", [walk.scalar(0, i64, f"{name}_zero"), count,
                                   walk.scalar(1, i64, f"{name}_step")],
                         name=f"{name}_segments", dtype=i64, shape=None)  # fmt: skip
    rows = walk.emit("Unsqueeze", [ids, walk.scalar([1], i64, f"{name}_axis")],
                     name=f"{name}_rows", dtype=i64, shape=None)  # fmt: skip
    member = walk.emit("Equal", [rows, segments], name=f"{name}_member",
                       dtype=np.dtype(bool), shape=None)  # fmt: skip
    real = walk.emit("Cast", [member], {"to": onnx.TensorProto.FLOAT}, name=f"{name}_weights",
                     dtype=np.dtype(np.float32), shape=None)  # fmt: skip
    return walk.native_of(real, kind)


@tensorflow_op(*_forms("FFT"), *_forms("IFFT"), gives="packed")
def fft(walk: ReadingContext, node: gs.Node) -> Read:
    """FFT and IFFT, and their 2-D and 3-D forms: DFTs of the innermost axes."""
    x, out = node.inputs[0], node.outputs[0]
    rank = _rank(walk, node)
    if rank is None:
        return None
    result = walk.packed_of(x)
    for axis in range(rank - TRANSFORMS[node.op], rank):
        result = _emit_dft(walk, result, axis, f"{out.name}_dft", inverse=int(node.op[0] == "I"))
    return result, walk.shape.get(x.name)


@tensorflow_op(*_forms("RFFT"), takes="real", gives="packed")
def rfft(walk: ReadingContext, node: gs.Node) -> Read:
    """RFFT and its 2-D and 3-D forms: the one-sided spectrum of a real signal, each
    axis cropped or padded to its fft_length."""
    x, out = node.inputs[0], node.outputs[0]
    found = _lengths(walk, node)
    if found is None:
        return None
    axes, outer, n = found
    signal = walk.emit("Unsqueeze", [x, walk.scalar([-1], np.int64, f"{out.name}_axes")],
                       name=f"{out.name}_signal", dtype=walk.elem[x.name], shape=None)  # fmt: skip
    result = _emit_dft(walk, signal, axes[-1], f"{out.name}_dft", length=n, onesided=1)
    for axis, m in zip(axes[:-1], outer, strict=True):
        result = _emit_dft(walk, result, axis, f"{out.name}_dft", length=m)
    result = _real_bins(walk, result, [*outer, n], out.name)
    shape = walk.shape.get(x.name)
    return result, None if shape is None else [*shape[: axes[0]], *outer, n // 2 + 1]


@tensorflow_op(*_forms("IRFFT"))
def irfft(walk: ReadingContext, node: gs.Node) -> Read:
    """IRFFT and its 2-D and 3-D forms: the real signal of a one-sided spectrum.

    onnx's one-sided inverse is numpy's irfft: the imaginary parts of the DC and
    Nyquist bins are ignored, as TensorFlow ignores them. TensorFlow reads the first
    fft_length // 2 + 1 bins of the innermost axis, zero-padded where there are fewer:
    they are cut or padded to that first, where onnx's dft_length would cut or pad
    the spectrum to fft_length bins."""
    found = _lengths(walk, node)
    if found is None:
        return None
    axes, outer, n = found
    x, out = node.inputs[0], node.outputs[0]
    result = _to_bins(walk, x, axes[-1], n // 2 + 1, out.name)
    for axis, m in zip(axes[:-1], outer, strict=True):
        result = _emit_dft(walk, result, axis, f"{out.name}_dft", length=m, inverse=1)
    result = _emit_dft(walk, result, axes[-1], f"{out.name}_dft", length=n,
                       inverse=1, onesided=1)  # fmt: skip
    result = walk.emit("Squeeze", [result, walk.scalar([-1], np.int64, f"{out.name}_axes")],
                       name=f"{out.name}_real", dtype=real_of(walk.kind[x.name]), shape=None)  # fmt: skip
    shape = walk.shape.get(x.name)
    return result, None if shape is None else [*shape[: axes[0]], *outer, n]


def _to_bins(walk: ReadingContext, x: gs.Tensor, axis: int, bins: int, name: str) -> gs.Tensor:
    """x packed, its `axis` cut to `bins`, or zero-padded to them where it is shorter."""
    packed, shape = walk.packed_of(x), walk.shape.get(x.name)
    size = None if shape is None else shape[axis]
    dtype = walk.elem.get(packed.name, real_of(walk.kind[x.name]))
    if isinstance(size, int) and size < bins:
        pads = np.zeros(2 * (len(shape) + 1), np.int64)
        pads[len(shape) + 1 + axis] = bins - size
        return walk.emit("Pad", [packed, walk.scalar(pads, np.int64, f"{name}_pads")],
                         name=f"{name}_bins", dtype=dtype, shape=None)  # fmt: skip
    if size == bins:
        return packed
    bounds = [
        walk.scalar([v], np.int64, f"{name}_{what}")
        for v, what in ((0, "start"), (bins, "end"), (axis, "axis"))
    ]
    return walk.emit("Slice", [packed, *bounds], name=f"{name}_bins", dtype=dtype, shape=None)


def _rank(walk: ReadingContext, node: gs.Node) -> int | None:
    """The rank of a transform's signal; None, with a contradiction, where unknown."""
    rank = walk.rank(node.inputs[0])
    if rank is None:
        walk.conflict(node, f"{node.op} of a value of unknown rank", node.inputs[0].name)
    return rank


def _lengths(walk: ReadingContext, node: gs.Node) -> tuple[list[int], list[int], int] | None:
    """(the transformed axes, the outer fft_lengths, the innermost) of an RFFT or IRFFT;
    None, with a contradiction, where the rank is unknown or fft_length no constant."""
    rank = _rank(walk, node)
    if rank is None:
        return None
    k = TRANSFORMS[node.op]
    length = walk.constant(node.inputs[1])
    if length is None or length.size != k:
        walk.conflict(node, f"{node.op}'s fft_length is not a constant of {k}", node.inputs[1].name)
        return None
    *outer, n = (int(v) for v in length.reshape(-1))
    return list(range(rank - k, rank)), outer, n


def _emit_dft(
    walk: ReadingContext, signal, axis: int, name: str, length=None, **attrs
) -> gs.Tensor:
    """DFT of a [..., 1] or [..., 2] tensor along `axis`, in the opset's spelling."""
    dtype = walk.elem.get(signal.name, np.dtype(np.float32))
    extra = [walk.scalar(length, np.int64, f"{name}_length") if length is not None else None]
    if walk.opset.get("", 0) >= 20:
        extra.append(walk.scalar(axis, np.int64, f"{name}_axis"))
    else:
        attrs["axis"] = axis
    inputs = [signal, *extra]
    while inputs[-1] is None:
        inputs.pop()
    inputs = [t if t is not None else gs.Variable.empty() for t in inputs]
    return walk.emit("DFT", inputs, attrs, name=name, dtype=dtype, shape=None)


def _off_zero(walk: ReadingContext, z: gs.Tensor, name: str) -> gs.Tensor:
    """z, with a signed zero z moved to (±1, Im z) by the sign of Re z: the same
    angle, atan2's with signed zeros, where Im log z would be Im(-inf + i arg) and
    its product with -i a NaN.

        z - (z = 0 ? (Re z is -0 ? 1 : -1) : 0)

    Subtracting a real value (+0 i) keeps every imaginary part as it is, -0 included,
    where adding one would turn -0 into +0."""
    kind, shape = walk.kind[z.name], walk.shape.get(z.name)
    real = real_of(kind)
    # The sign bit of Re z, -0 included: 1 / -0 is -inf.
    inverse = walk.emit("Reciprocal", [walk.part(z, 0)], name=f"{name}_inverse_re",
                        dtype=real, shape=shape)  # fmt: skip
    negative = walk.emit("Less", [inverse, walk.scalar(0, real, f"{name}_zero")],
                         name=f"{name}_negative", dtype=np.dtype(bool), shape=shape)  # fmt: skip
    zero = walk.emit("Equal", [walk.native_of(z), walk.scalar(0, kind, f"{name}_origin")],
                     name=f"{name}_at_zero", dtype=np.dtype(bool), shape=shape)  # fmt: skip
    unit = walk.emit("Where", [negative, *(walk.scalar(v, real, f"{name}_unit") for v in (1, -1))],
                     name=f"{name}_unit", dtype=real, shape=shape)  # fmt: skip
    step = walk.emit("Where", [zero, unit, walk.scalar(0, real, f"{name}_none")],
                     name=f"{name}_step", dtype=real, shape=shape)  # fmt: skip
    return walk.emit("Sub", [walk.native_of(z), walk.native_of(step, kind)],
                     name=f"{name}_off_zero", dtype=kind, shape=shape)  # fmt: skip


def _real_bins(walk: ReadingContext, packed: gs.Tensor, lengths: list[int], name: str) -> gs.Tensor:
    """A real signal's spectrum, packed, with +0 imaginary parts at the bins that are
    real (every transformed index at 0 or at a Nyquist bin), as TensorFlow gives them.
    Computed, they may come out -0 or a rounding error below it, and the angle of a
    negative real bin would jump by 2 pi."""
    *outer, n = lengths
    real = [np.isin(np.arange(m), [0, m // 2] if m % 2 == 0 else [0]) for m in outer]
    real.append(np.isin(np.arange(n // 2 + 1), [0, n // 2] if n % 2 == 0 else [0]))
    both = real[0]
    for r in real[1:]:
        both = np.logical_and.outer(both, r)
    mask = np.stack([np.zeros_like(both), both], axis=-1)
    dtype = walk.elem.get(packed.name, np.dtype(np.float32))
    where = gs.Constant(walk.unique(f"{name}_real_bins"), mask)
    zero = walk.scalar(0, dtype, f"{name}_zero")
    return walk.emit("Where", [where, zero, packed], name=f"{name}_signed", dtype=dtype,
                     shape=None)  # fmt: skip


def _conj(walk: ReadingContext, z: gs.Tensor, name: str) -> gs.Tensor:
    re, im = walk.parts_of(z)
    minus = walk.emit("Neg", [im], name=f"{name}_minus_im", dtype=walk.elem[im.name],
                      shape=walk.shape.get(z.name))  # fmt: skip
    return walk.combine(re, minus, walk.kind[z.name], walk.shape.get(z.name), name)
