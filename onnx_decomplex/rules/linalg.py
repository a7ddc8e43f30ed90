"""Products that contract: MatMul, Gemm, Einsum, Conv, ConvTranspose.

Each is bilinear, so with f the real op on parts:

    f(z, w) -> (f(zr, wr) - f(zi, wi), f(zr, wi) + f(zi, wr))     # four products
            or Gauss: t1 = f(zr, wr), t2 = f(zi, wi), t3 = f(zr + zi, wr + wi);
               (t1 - t2, t3 - t1 - t2)                             # three products
    f(z, r) -> (f(zr, r), f(zi, r))                                 # r real

With a constant weight, one real product does it all (the block form):

    MatMul(z, W)  -> Reshape(MatMul(Reshape(p, [..., 2K]), B), [..., N, 2])   # K, N from W
                     B = [[Wr, Wi], [-Wi, Wr]] interleaved, built in numpy
    Conv(z, W)    -> Conv([zr; zi], [[Wr, -Wi], [Wi, Wr]]), halves = (re, im)
    Einsum(z...)  -> one Einsum of the packed operands with the product tensor
                     T[a1..an, c] of n complex factors (see cmath.mul_structure);
                     of two, one constant: T folded into the constant (2x2 blocks)

On the onnxruntime target, a constant W (K, N) large enough (`REGIME_FROM_BYTES`) or a
product long enough (`REGIME_FROM_PRODUCTS`) is taken by regime instead: for up to
three rows of z, the parts stacked as rows, [zr; zi] W with W's parts interleaved, which
reads W once where the product is bound by W's bytes; for more rows, three products (the
3M method), where it is bound by arithmetic. Its error is about twice the block form's,
in units of float32's roundoff of sum |z||W| (0.79 against 0.39 at 64 rows of 1024).
A smaller product takes the block form: its one node costs less than the regime's
several save.

`--mul-strategy` picks four or three products where both operands are runtime
values; the default takes three for these ops.
"""

from __future__ import annotations

import string

import numpy as np
import onnx_graphsurgeon as gs

from .. import cmath
from ..dtypes import ort_lacks_float64
from ..shapes import static
from .common import optional_input
from .registry import rule

SMALL_MATMUL = 16384
"""A MatMul of two runtime complex matrices with static shapes and at most this many
multiply-adds in all, batches counted (32 x 32 x 16) takes four real products, not three,
where `--mul-strategy` is "auto": six nodes where Gauss's form takes eight, and where
several are chained, the targets run each as one product of block matrices
(`targets.common.blocks`), which doubles its multiply-adds but saves five nodes."""


def _small(ctx, a, b) -> bool:
    """Whether a MatMul of a by b is a small product of runtime matrices (`SMALL_MATMUL`).
    Of a constant, Gauss's form makes Wr + Wi in numpy: three products and three sums."""
    if ctx.constant(a) is not None or ctx.constant(b) is not None:
        return False
    shapes = [ctx.shape(t) for t in (a, b)]
    if any(not static(s) or len(s) < 2 for s in shapes):
        return False
    (m, k), n = shapes[0][-2:], shapes[1][-1]
    batch = np.broadcast_shapes(tuple(shapes[0][:-2]), tuple(shapes[1][:-2]))
    return 0 < int(np.prod(batch, dtype=np.int64)) * m * k * n <= SMALL_MATMUL


def _bilinear(ctx, y, a, b, f, op: str):
    """y = f(a, b) for f bilinear, with either operand complex or real."""
    dtype = ctx.real_dtype(y)
    if ctx.is_complex(a) and ctx.is_complex(b):
        gauss = ctx.gauss(op, small=op == "MatMul" and _small(ctx, a, b))
        ctx.set_pair(y, *cmath.bilinear(ctx, ctx.pair(a, dtype), ctx.pair(b, dtype), f, gauss))
        ctx.explain(f"{'three' if gauss else 'four'} real {op}s on (re, im)")
    elif ctx.is_complex(a):
        re, im = ctx.pair(a, dtype)
        r = ctx.real(b, dtype)
        ctx.set_pair(y, f(re, r), f(im, r))
        ctx.explain(f"two real {op}s: complex with real")
    else:
        re, im = ctx.pair(b, dtype)
        r = ctx.real(a, dtype)
        ctx.set_pair(y, f(r, re), f(r, im))
        ctx.explain(f"two real {op}s: real with complex")


def _matmul_block(ctx, y, x, w: np.ndarray) -> bool:
    """x W with a constant W of rank 1 or 2, in one real MatMul. False if x's rank is unknown."""
    rank = ctx.rank(x)
    if rank is None or rank < 1 or w.ndim > 2 or ctx.prefers_pair(x):
        return False
    if w.size == 0:
        return False  # a 0 in Reshape's shape would copy a dim, not make an empty one
    dtype = ctx.real_dtype(y)
    # The sizes come from W, never -1: Reshape cannot infer a -1 beside a zero-size dim,
    # and x may be empty at run time (after a Compress, say).
    keep = [0] * (rank - 1)
    flat = ctx.emit("Reshape", [ctx.packed(x, dtype), np.array([*keep, 2 * w.shape[0]], np.int64)])
    big = cmath.interleaved_block(w.astype(ctx.dtype(y)))
    out = ctx.emit("MatMul", [flat, big])
    if w.ndim == 2:
        out = ctx.emit("Reshape", [out, np.array([*keep, w.shape[1], 2], np.int64)])
    ctx.set_packed(y, out)
    ctx.explain(f"block form: one real MatMul with a {big.shape[0]}x{big.shape[1]} weight")
    return True


STACKED_ROWS_UP_TO = 3
"""On the onnxruntime target, x W with a constant complex W (K, N) and at most this many
rows of x (its static dims but the last, multiplied) stacks x's parts as rows and reads W
once; with more rows, or a row count that is not static, it takes three real products.
Measured at K = N = 1024, one thread, against four real MatMuls, with W in the cache and
(after) with the sessions interleaved: stacked 0.51 (0.71) at 1 row, 0.59 (0.68) at 2,
0.65 (0.75) at 3, 0.96 (0.92) at 4, 0.98 (0.92) at 64; three products 0.74 (0.88) at 1
row, 0.81 (0.86) at 3, 0.77 (0.87) at 4, 0.76 (0.81) at 64 (`bench/`:
matmul_constant_*_onnxruntime_target)."""


REGIME_FROM_BYTES = 4 << 20
"""The onnxruntime target's forms of x W (stacked rows, three products) read less of W
than the block form's one product by [[Wr, Wi], [-Wi, Wr]], but take 3 to 10 more nodes:
they pay where that block has at least this many bytes (512 x 512 in complex64), or
where the product has at least `REGIME_FROM_PRODUCTS`. One thread, interleaved, the
regime's time over the block form's, rows x K x N: 1.48 at 4 x 8 x 5, 1.38 at 64 x 64 x
64, 1.22 at 16 x 128 x 128, 1.04 at 16 x 256 x 256, 1.00 at 64 x 128 x 128, 0.98 at 32 x
256 x 256, 0.93 at 4 x 512 x 512, 0.81 at 8 x 512 x 512, 0.92 at 256 x 256 x 256; stacked,
1.27 at 1 x 64 x 64, 1.09 at 3 x 256 x 256, 0.62 at 1 x 1024 x 1024 (AMD EPYC, AVX2, 512 KB
of L2 a core: the crossover moves with the cache)."""

REGIME_FROM_PRODUCTS = 2 << 20
"""Complex multiply-adds (rows x K x N) from which the onnxruntime target's forms of x W
pay whatever W's size (`REGIME_FROM_BYTES`)."""


def _regime_pays(rows: int | None, w: np.ndarray, dtype) -> bool:
    """Whether x W takes the onnxruntime target's form rather than the block form: by W's
    block's bytes, or by the product's size where the row count is static."""
    block = 4 * w.size * np.dtype(dtype).itemsize
    return block >= REGIME_FROM_BYTES or (
        rows is not None and rows * w.size >= REGIME_FROM_PRODUCTS
    )


def _rows(shape: list | None) -> int | None:
    """How many rows x W multiplies, for x of `shape`: its dims but the last, multiplied;
    None where one is not static."""
    if shape is None or not static(shape[:-1]):
        return None
    return int(np.prod(shape[:-1], dtype=np.int64))


_TIMES_I = np.array([[0, 1], [-1, 0]])
"""(re, im) @ it = (-im, re): i times a packed number, by 0 and +-1 only (exact)."""


def _matmul_stacked(ctx, y, x, w: np.ndarray, shape: list[int]) -> None:
    """x W = [xr; xi] W with W's columns (Wr, Wi) interleaved: W is read once, for few
    rows of x a product bound by the bytes of W. The product's two rows are packed
    numbers already, xr W and xi W, and x W = xr W + i (xi W). x's `shape` is static
    but for its last dim (few rows), which is W's first: every Reshape says its sizes.
    """
    dtype = ctx.real_dtype(y)
    *lead, m, _ = shape
    rows, n, r = _rows(shape), w.shape[1], len(shape) - 1
    # packed [..., M, K, 2] -> [2, ..., M, K] -> [2 rows, K] @ [K, 2N] -> [2, rows, N, 2]
    parts = ctx.emit("Transpose", [ctx.packed(x, dtype)], {"perm": [r + 1, *range(r + 1)]})
    parts = ctx.emit("Reshape", [parts, np.array([2 * rows, w.shape[0]], np.int64)])
    both = ctx.emit("MatMul", [parts, cmath.pack(w, dtype).reshape(w.shape[0], 2 * n)])
    both = ctx.emit("Reshape", [both, np.array([2, rows, n, 2], np.int64)])
    of_re, of_im = ctx.split_halves(both, 0)
    out = ctx.emit("Add", [of_re, ctx.emit("MatMul", [of_im, _TIMES_I.astype(dtype)])])
    ctx.set_packed(y, ctx.emit("Reshape", [out, np.array([*lead, m, n, 2], np.int64)]))
    ctx.explain(f"x's parts stacked as rows: one real MatMul reads the {w.shape} weight once")


def _matmul_three(ctx, y, x, w: np.ndarray) -> None:
    """x W in three real products (the 3M method): for many rows of x, a product bound
    by arithmetic; Wr + Wi is made in numpy."""
    dtype = ctx.real_dtype(y)
    pair = cmath.bilinear(ctx, ctx.pair(x, dtype), cmath.split(w.astype(ctx.dtype(y))),
                          lambda p, q: ctx.emit("MatMul", [p, q]), gauss=True)  # fmt: skip
    ctx.set_pair(y, *pair)
    ctx.explain("three real MatMuls (3M) with a constant weight, for many rows")


def _matmul_by_regime(ctx, y, x, w: np.ndarray) -> bool:
    """onnxruntime's fast form of x W for a constant W of rank 2 and x of rank 2 or more,
    where it pays (`_regime_pays`): stacked rows up to STACKED_ROWS_UP_TO rows, three
    products past it or where their count is not static. False for other shapes and
    smaller products, which the block form takes."""
    rank = ctx.rank(x)
    if not ctx.contrib or w.ndim != 2 or rank is None or rank < 2 or w.size == 0:
        return False
    shape = ctx.shape(x)
    rows = _rows(shape)
    if not _regime_pays(rows, w, ctx.real_dtype(y)):
        return False
    if rows is not None and 0 < rows <= STACKED_ROWS_UP_TO:
        _matmul_stacked(ctx, y, x, w, shape)
    else:
        _matmul_three(ctx, y, x, w)
    return True


def _matmul_constant(ctx, y, x, w: np.ndarray) -> bool:
    """x W for a constant complex W: onnxruntime's form by regime, else the block form."""
    return _matmul_by_regime(ctx, y, x, w) or _matmul_block(ctx, y, x, w)


@rule("MatMul")
def matmul(ctx, node):
    a, b = node.inputs
    y = node.outputs[0]
    w = ctx.constant(b)
    runtime_x = ctx.is_complex(a) and ctx.constant(a) is None
    if w is not None and ctx.is_complex(b) and runtime_x and _matmul_constant(ctx, y, a, w):
        return
    _bilinear(ctx, y, a, b, lambda p, q: ctx.emit("MatMul", [p, q]), "MatMul")


@rule("Gemm")
def gemm(ctx, node):
    a, b = node.inputs[:2]
    c = optional_input(node, 2)
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    alpha = float(node.attrs.get("alpha", 1.0))
    beta = float(node.attrs.get("beta", 1.0))
    trans = {k: int(node.attrs.get(k, 0)) for k in ("transA", "transB")}

    def f(p, q):
        return ctx.emit("Gemm", [p, q], {**trans, "alpha": alpha})

    _bilinear(ctx, y, a, b, f, "Gemm")
    if c is None:
        return
    # alpha A B is done; beta C is added as a complex (or real) value.
    re, im = ctx.pair(y)
    cr, ci = ctx.as_pair(c, dtype)
    scale = np.array(beta, dtype)
    re = ctx.add(re, ctx.mul(cr, scale))
    im = ctx.add(im, ctx.mul(ci, scale))
    if not ctx.is_complex(c):
        im = ctx.emit("Expand", [im, ctx.emit("Shape", [re])])
    ctx.set_pair(y, re, im)
    ctx.explain("plus beta C")


def _einsum_terms(equation: str) -> tuple[list[str], str]:
    """The operand terms and the explicit output term of an Einsum equation."""
    equation = equation.replace(" ", "")
    lhs, _, rhs = equation.partition("->")
    terms = lhs.split(",")
    if "->" not in equation:
        letters = [ch for ch in lhs if ch.isalpha()]
        once = sorted(ch for ch in set(letters) if letters.count(ch) == 1)
        rhs = ("..." if "..." in lhs else "") + "".join(once)
    return terms, rhs


@rule("Einsum")
def einsum(ctx, node):
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    terms, out = _einsum_terms(node.attrs["equation"])
    used = set(node.attrs["equation"])
    free = [ch for ch in string.ascii_letters if ch not in used]
    ins, new_terms, packed = [], [], []  # packed: (operand index, its packed letter)
    for t, term in zip(node.inputs, terms, strict=True):
        if ctx.is_complex(t):
            packed.append((len(ins), free.pop(0)))
            ins.append(ctx.packed(t, dtype))
            new_terms.append(term + packed[-1][1])
        else:
            ins.append(ctx.real(t, dtype))
            new_terms.append(term)
    if len(packed) == 1:
        # Linear in its one complex operand: the packed axis is carried through.
        c = packed[0][1]
    else:
        c = free.pop(0)
        table = cmath.mul_structure(len(packed), dtype)
        letters = "".join(letter for _, letter in packed)
        folded = _fold_table(ctx, node, packed, table, letters, c, dtype)
        if folded is None:
            ins.append(table)
            new_terms.append(letters + c)
        else:
            (k, letter), ins[k] = folded
            new_terms[k] = terms[k] + letter + c
    equation = ",".join(new_terms) + "->" + out + c
    ctx.set_packed(y, ctx.emit("Einsum", ins, {"equation": equation}))
    ctx.explain(f"one Einsum on packed operands: {equation}")


def _fold_table(ctx, node, packed, table, letters: str, c: str, dtype):
    """A product of two complex operands, one of them constant, with the product table
    folded into the constant at rewrite time (each element a 2x2 real block), so that
    the Einsum has two operands, not three: ((the constant's index, the other's packed
    letter), the folded constant); None otherwise."""
    if len(packed) != 2:
        return None
    for (k, letter), (_, other) in (packed, packed[::-1]):
        value = ctx.constant(node.inputs[k])
        if value is not None:
            p = cmath.pack(value, dtype)
            return (k, other), np.einsum(f"...{letter},{letters}{c}->...{other}{c}", p, table)
    return None


def _conv(ctx, node, ins):
    """The node's Conv or ConvTranspose on real inputs.

    onnxruntime's CPU provider has no float64 convolution, so complex128 ones run
    in float32 between two Casts (their error is that of float32; see docs/rewrite.md, Precision).
    """
    if not ort_lacks_float64(node.op, ctx.work_dtype):
        return ctx.emit(node.op, ins, node.attrs)
    narrow = [ctx.cast(x, np.float32) for x in ins]
    return ctx.cast(ctx.emit(node.op, narrow, node.attrs), np.float64)


def _conv_block(ctx, node, y, x, w: np.ndarray, bias) -> bool:
    """The block form for a constant complex weight; False when groups > 1."""
    if int(node.attrs.get("group", 1)) != 1:
        return False
    dtype = ctx.real_dtype(y)
    big = cmath.channel_block(w.astype(ctx.dtype(y)), transpose=node.op == "ConvTranspose")
    xr, xi = ctx.as_pair(x, dtype, full=True)
    stacked = ctx.emit("Concat", [xr, xi], {"axis": 1})
    ins = [stacked, big]
    if bias is not None:
        br, bi = ctx.as_pair(bias, dtype, full=True)
        ins.append(ctx.concat([br, bi], axis=0))
    re, im = ctx.split_halves(_conv(ctx, node, ins), axis=1)
    ctx.set_pair(y, re, im)
    ctx.explain(f"block form: one {node.op} on [re; im] channels")
    return True


def _conv_refusal(node, kinds, opset):
    """The bias is added per channel, which needs the input's rank, unless the weight is
    a complex constant and the block form (`_conv_block`) takes the bias in."""
    if optional_input(node, 2) is None or node.inputs[0].shape is not None:
        return None
    w = node.inputs[1]
    constant = isinstance(w, gs.Constant) or (len(w.inputs) == 1 and w.inputs[0].op == "Constant")
    if constant and kinds[1] is not None and int(node.attrs.get("group", 1)) == 1:
        return None
    return "a complex Conv bias needs the input's rank to be known"


@rule("Conv", "ConvTranspose", refuse=_conv_refusal)
def conv(ctx, node):
    x, w, bias = node.inputs[0], node.inputs[1], optional_input(node, 2)
    y = node.outputs[0]
    dtype = ctx.real_dtype(y)
    value = ctx.constant(w)
    if value is not None and ctx.is_complex(w) and _conv_block(ctx, node, y, x, value, bias):
        return

    _bilinear(ctx, y, x, w, lambda p, q: _conv(ctx, node, [p, q]), node.op)
    if bias is None:
        return
    rank = ctx.rank(x)  # known: see _conv_refusal
    # The bias is per output channel: (C,) becomes (C, 1, ...) against (N, C, ...).
    axes = list(range(1, rank - 1))
    br, bi = ctx.as_pair(bias, dtype)
    re, im = ctx.pair(y)
    re = ctx.add(re, ctx.unsqueeze(br, axes))
    if ctx.is_complex(bias):
        im = ctx.add(im, ctx.unsqueeze(bi, axes))
    ctx.set_pair(y, re, im)
    ctx.explain("plus the bias")
