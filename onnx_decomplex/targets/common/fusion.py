"""Affine chains of one real signal (`common.chains`) run as one product.

A spectral filter is spelled many ways: a onesided DFT or a Slice to half the bins,
the weights, zeros padded or scattered in past the modes it keeps, the Hermitian
mirror and its conjugate, the inverse DFT and its real part. After the rewrite, every
spelling is a chain of real ops that is affine in the one real signal x it starts
from, along x's last axis:

    y = x M^T + b         M: [..., N', N], one per channel where the weights differ

`fuse` finds such chains by the ops they hold, not by their order (`chains.carriers`): from a
DFT, back to the one value its signal is affine in, and on to the values that leave
the chain. It reads M and b off the chain itself, run in onnxruntime on basis vectors
(`common.probe`), checks them on random signals, and puts one product in the chain's place
where that costs less than the chain (`COST`): x M^T, or (x A) B where M has low rank,
as a Fourier layer's few kept modes give it (`[N, r]` and `[r, N']` products).

A chain with no DFT is read too where it is long and its values small: an unrolled
linear recurrence (LRU's, 275 nodes on 16 x 8 values) costs onnxruntime each node's
dispatch, and its whole map, over time and channels, is one small matrix.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto

from ...graphs import default_opset, dft_axis
from ...shapes import static
from .chains import Chain, Placed, ends, is_affine, is_dft, replace_chains, shared
from .convolution import Convolution, read_convolution, replace_convolution
from .framing import Framed, read_framed, replace_framed
from .probe import Affine, probe, rank_above, rank_of, reads_too_much, runner
from .separable import Separable, read_separable, replace_separable
from .transforms import DENSE_MAX_LENGTH

COSTLY = frozenset({"DFT", "MatMul"})
"""Ops whose cost `_chain_cost` counts from their inputs."""

COST = {"mm": 1.0, "batched": 2.5, "pass": 1.0, "dft": 85.0, "matmuls": 2.3, "node": 15000.0,
        "margin": 0.5}  # fmt: skip
"""The cost model, in multiply-adds per row of x, one thread: a product by one M costs
N N' (`mm`), and so does one M per channel where rows share it, plus a `pass` over x
and y for each Transpose that gathers them; one row at a time, `batched` times that; a
DFT of length L run as onnxruntime's DFT node costs `dft` L log2 L, and as MatMuls (up to
`onnxruntime.MATMUL_DFT_MAX_LENGTH`: past 12, the four-step form, `common.transforms`)
`matmuls` L^2, and past `transforms.DENSE_MAX_LENGTH` the dispatch of the
`FOUR_STEP_NODES` it becomes: a real signal's four-step DFT over 30 rows measured 2.3
(length 256), 2.8 (128) and 4.8 (64) times a product by its dense [L, L + 2] matrix
(docs/performance.md, "Measured"). Each node
of a chain costs its dispatch besides, `node` for the run (0.6 us, where a MatMul of one
row does 25 multiply-adds a ns: onnxruntime 1.32 runs a chain of 100 Adds of 1,024
values, one thread, unoptimized, at 0.77 us a node). A chain is replaced where its
product costs at most `margin` of the chain."""

FOUR_STEP_NODES = 12
"""The nodes a DFT's four-step form is (`common.transforms`): a Reshape, a Transpose and a
Reshape around each of its two MatMuls, and the Slice of a one-sided spectrum."""

MAX_BYTES = 64 << 20
"""The largest M (or A and B) put in a model."""


def _dft_cost(length: int, matmul_up_to: int) -> float:
    """A DFT of a real signal (a complex one costs twice that)."""
    if length <= matmul_up_to:
        return COST["matmuls"] * length * length
    return COST["dft"] * length * math.log2(max(length, 2))


def _costly(chain: Chain) -> list[str]:
    """The inputs of the chain's DFTs and MatMuls, once each, for `_chain_cost`."""
    names = [name for n in chain.nodes if n.op_type in COSTLY for name in n.input[:3] if name]
    return list(dict.fromkeys(names))


def _chain_cost(
    chain: Chain,
    costly: list[np.ndarray],
    rows: int,
    n: int,
    n_out: int,
    matmul_up_to: int,
    opset: int,
) -> float:
    """The chain's multiply-adds per row of x (`rows` of them in the run that gave
    `costly`, the values `_costly` names): each transform, each product, and a pass
    over x's and y's rows for every other node; and each node's dispatch."""
    given = dict(zip(_costly(chain), costly, strict=True))
    total = COST["node"] * len(chain.nodes)
    for node in chain.nodes:
        if node.op_type not in COSTLY:
            total += rows * (n + n_out)
            continue
        args = [given[name] if name else None for name in node.input[:3]]
        if node.op_type == "MatMul":
            a, b = args[0], args[1]
            total += a.size * (b.shape[-1] if b.ndim > 1 else 1)
        else:
            signal, length, axis = (args + [None, None])[:3]
            attribute = next((a.i for a in node.attribute if a.name == "axis"), None)
            axis = dft_axis(opset, signal.ndim, axis, attribute)
            size = int(length) if length is not None and np.size(length) else signal.shape[axis]
            transforms = signal.size // signal.shape[-1] // max(signal.shape[axis], 1)
            total += transforms * signal.shape[-1] * _dft_cost(size, matmul_up_to)
            if DENSE_MAX_LENGTH < size <= matmul_up_to:
                total += COST["node"] * (FOUR_STEP_NODES - 1)
    return total / max(rows, 1)


@dataclass
class Product:
    """How y = x M^T + b is run: `factors` are multiplied into x in turn (M^T, or A
    then B where M^T = A B), each [..., N, r]. Where they differ from channel to channel,
    x's rows that share one are moved next to each other first, by `perm` (None: x's
    own order), so that each product is a matrix's, not a row's (`rows`: one row at a
    time, none share). `cost` is in multiply-adds per row of x."""

    factors: list[np.ndarray]
    cost: float
    perm: list[int] | None = None
    rows: bool = False


def cheapest_form(f: Affine, x_lead: list, budget: float = math.inf) -> Product:
    """M^T itself, or, where M has low rank r (`probe.RANK_TOL`), A [N, r] and B [r, N'],
    from its singular values (or its range's basis); whichever costs less (`COST`, the
    second product's dispatch counted).
    `x_lead` are x's leading dims (a name for one not static), for how many rows share
    each matrix. Where neither could cost at most `budget`, M's rank is only bounded,
    not read off its singular values."""
    lead = (f.m if f.m is not None else f.q).shape[:-2]
    varying = [i for i, d in enumerate(lead) if d > 1]
    shared = [i for i, d in enumerate(lead) if d == 1]
    sharing = [x_lead[i] for i in shared]
    form = Product([], 0.0)
    if not varying:
        rate = COST["mm"]
    elif sharing and not all(d == 1 for d in sharing):  # rows share each channel's matrix
        rows = max(shared, key=lambda i: x_lead[i] if isinstance(x_lead[i], int) else math.inf)
        order = [*(i for i in shared if i != rows), *varying, rows]
        perm = [*order, len(lead)]
        form = Product([], 0.0, None if perm == sorted(perm) else perm)
        rate = COST["mm"]
    else:
        form, rate = Product([], 0.0, rows=True), COST["batched"]

    def kept(a: np.ndarray) -> np.ndarray:
        """`a` with only the leading axes it varies along, in x's moved order."""
        sizes = [lead[i] for i in varying] if form.perm else list(a.shape[:-2])
        return a.reshape([*sizes, *a.shape[-2:]] if varying else a.shape[-2:])

    if f.m is None:
        q, r = kept(f.q), kept(f.r)
        n_out, n = q.shape[-2], r.shape[-1]
        factors, work = [np.swapaxes(r, -1, -2), np.swapaxes(q, -1, -2)], r.shape[-2] * (n + n_out)
    else:
        m = kept(f.m)
        n_out, n = m.shape[-2:]
        factors, work = [np.swapaxes(m, -1, -2)], n * n_out
        most = int(budget / rate // (n + n_out))  # the highest rank within the budget
        if most < min(n, n_out) and n * n_out * rate > budget and rank_above(m, most):
            form.factors, form.cost = factors, rate * work
            return form  # over the budget, whatever M's rank
        u, s, vt = np.linalg.svd(m, full_matrices=False)
        rank = max(rank_of(s), 1)
        # The second product's dispatch, shared by x's rows (a name: at least one).
        second = COST["node"] / math.prod(d for d in x_lead if isinstance(d, int)) / rate
        if rank * (n + n_out) + second < n * n_out:
            a = np.swapaxes(vt[..., :rank, :], -1, -2) * s[..., None, :rank]  # [..., N, r]
            factors, work = [a, np.swapaxes(u[..., :, :rank], -1, -2)], rank * (n + n_out)
    moves = 2 * COST["pass"] * (n + n_out) if form.perm else 0.0
    form.factors, form.cost = factors, rate * work + moves
    return form


UNROLLED_MIN_NODES = 16
"""The fewest nodes of a chain with no DFT that `fuse` reads: an unrolled recurrence
(LRU's 16 steps are 275 nodes on 128 values), where onnxruntime's cost is each node's
dispatch, not its arithmetic."""


READ_OUT_MIN_NODES = 6
"""The fewest nodes of a read-out chain that `fuse_read_outs` reads."""

MOVES = frozenset(
    {"Reshape", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Gather", "Split", "Flatten",
     "Concat", "Identity", "Neg"}
)  # fmt: skip
"""Ops that only move, copy or negate their elements."""


def _read_out(chain: Chain) -> bool:
    """Whether the chain moves its values into one MatMul by constants and moves what
    that makes: its M is the constant's entries moved, read exactly."""
    ops = [n.op_type for n in chain.nodes]
    return ops.count("MatMul") == 1 and all(op in MOVES or op == "MatMul" for op in ops)


def fuse_read_outs(model: onnx.ModelProto) -> list[str]:
    """Runs each read-out chain of `model` (`_read_out`) of at least `READ_OUT_MIN_NODES`
    nodes, none of its values read outside it, as its one product where that costs at
    most `COST["margin"]` of the chain, in place; a note per chain replaced. Run once
    the other forms have put theirs in: the parts of a block product sliced, packed and
    read into a product by constants (a beamformer's quadratic form) cost onnxruntime
    each node's dispatch, and one product by the constants moved costs one."""

    fused = functools.partial(_fuse_chain, matmul_up_to=0, unrolled=True, least=READ_OUT_MIN_NODES)
    return replace_chains(model, is_affine, fused, least=READ_OUT_MIN_NODES, keep=_read_out)


def fuse(model: onnx.ModelProto, matmul_up_to: int) -> list[str]:
    """Runs each affine chain of `model` that holds a DFT (`chains`), then each of at
    least `UNROLLED_MIN_NODES` nodes, as its cheapest product, where that costs at most
    `COST["margin"]` of the chain, in place; a note per chain replaced. DFTs of length
    up to `matmul_up_to` are costed as the MatMuls they will become."""
    fused = functools.partial(_fuse_chain, matmul_up_to=matmul_up_to)
    notes = replace_chains(model, is_dft, fused)
    unrolled = functools.partial(fused, unrolled=True)
    return notes + replace_chains(model, is_affine, unrolled, least=UNROLLED_MIN_NODES)


TAIL_AXES = (1, 2, 3)
"""How many of x's last axes the map may act on together: a signal's, a signal's
and its channels' (or its (re, im) pairs'), an image's. A chain with no DFT may act on
all of x's axes (a recurrence, over time and channels); one with a DFT keeps a first
axis of rows: a whole long signal's M takes seconds to read and factor, and costs more
than the DFT."""


COMPUTES = frozenset(
    {"Mul", "Div", "Add", "Sub", "Neg", "MatMul", "Gemm", "Einsum", "Conv", "ReduceSum", "Sum",
     "CumSum", "STFT"}
)  # fmt: skip
"""Ops that compute, other than a DFT: a chain with none but its one DFT is left as it is."""


def _fuse_chain(
    model,
    chain: Chain,
    labels: dict,
    matmul_up_to: int,
    unrolled: bool = False,
    least: int = UNROLLED_MIN_NODES,
) -> str | None:
    """Replaces one chain by its cheapest product (see `fuse`); a note, or None where
    it is left as it is. An `unrolled` chain (no DFT) is read only where it has `least`
    nodes, none of them read outside it, and a dense M would pass the cost model."""
    if unrolled and (len(chain.nodes) < least or shared(model.graph, chain)):
        return None
    if _lone_transform(chain):
        return None
    found = ends(chain, labels)
    if found is None:
        return None
    x_dims, y_dims, elem = found
    dtype = np.float32 if elem == TensorProto.FLOAT else np.float64
    run_all = runner(model, chain, elem, x_dims, _costly(chain))
    if run_all is None:
        return None
    opset = default_opset(model) or 1
    for k in TAIL_AXES:
        lead, tail, tail_y = x_dims[:-k], x_dims[-k:], y_dims[len(x_dims) - k :]
        if (
            len(x_dims) < k + (not unrolled)
            or len(y_dims) <= len(lead)
            or y_dims[: len(lead)] != lead
        ):
            continue
        if not static([*tail, *tail_y]):
            continue
        n, n_out = math.prod(tail), math.prod(tail_y)
        if not n or not n_out:
            return None  # an empty signal or value: nothing to compute
        flexible = [i for i, d in enumerate(lead) if not isinstance(d, int)]
        shape = [(n if i == 0 else 1) if i in flexible else d for i, d in enumerate(lead)]
        try:
            costly = run_all(np.zeros([*shape, *tail], dtype))[1:]
            chain_cost = _chain_cost(chain, costly, math.prod(shape), n, n_out, matmul_up_to, opset)
            if unrolled and COST["mm"] * n * n_out > COST["margin"] * chain_cost:
                continue  # not read: M dense would cost more than the chain
            if reads_too_much(model, chain, [*shape, n]):
                continue  # not read: its runs would take minutes
            f = probe(_flattened(run_all, len(lead), tail), [*shape, n], dtype, flexible)
        except Exception:  # a chain onnxruntime cannot run on a probe: left as it is
            f = None
        if f is None:
            continue
        budget = COST["margin"] * chain_cost
        form = _cheapest(f, lead, (tail, tail_y), budget, opset)
        if form.cost > budget or _bytes(form, dtype) > MAX_BYTES:
            return None
        how = _put_in(model, chain, form, f, dtype, (lead, k, tail, tail_y))
        return (f"{chain.y}: affine in {chain.x}, {len(chain.nodes)} nodes -> {how}, "
                f"{form.cost / chain_cost:.2f} of the chain's cost")  # fmt: skip
    return None


def _cheapest(f: Affine, lead: list, tails: tuple[list, list], budget: float, opset: int):
    """The cheapest of M's forms: a convolution, a separable map or frames
    (`_structured`), or M or its factors (`cheapest_form`), whose SVD is read only where
    it may cost less."""
    (tail, tail_y), n, n_out = tails, math.prod(tails[0]), math.prod(tails[1])
    rows = math.prod(d for d in lead if isinstance(d, int))
    form = _structured(f, tail, tail_y, opset, rows)
    if form is None:
        return cheapest_form(f, lead, budget)
    ranked = form.cost + _dispatch(form, rows)
    if ranked <= min(n * n_out, _rank(form) * (n + n_out)):
        return form  # M's factors would cost more
    product = cheapest_form(f, lead, min(budget, ranked))
    return product if product.cost < ranked else form


def _put_in(model, chain: Chain, form, f: Affine, dtype, layout) -> str:
    """Puts `form` in the chain's place; what it is, for the note. `layout`: x's leading
    dims, the count of axes the map acts on, and x's and y's tails."""
    lead, k, tail, tail_y = layout
    if isinstance(form, Convolution):
        replace_convolution(model, chain, form, f.b, dtype, len(lead), (tail, tail_y))
        how = f"a convolution over {form.basis.shape[1]} of {form.basis.shape[0]} frequencies"
        if form.per_channel:
            n_in, s = form.core.shape[:2]
            mix = " then a channel mix" if form.mix is not None else ""
            how = f"a convolution of each of {n_in} channels by its own [{s}, {s}] map{mix}"
    elif isinstance(form, Framed):
        replace_framed(model, chain, form, f.b, dtype, len(lead), (tail, tail_y))
        what = "overlapped and added" if form.overlap else "framed"
        how = (f"{form.frames} frames of {form.blocks} x {form.hop} {what}: "
               f"one product by {form.kernel.shape[0]}x{form.kernel.shape[1]}")  # fmt: skip
    elif isinstance(form, Separable):
        replace_separable(model, chain, form, f.b, dtype, len(lead), (tail, tail_y))
        how = (f"separable over {form.blocks[0]} x {form.blocks[1]}, {form.terms} terms: "
               f"products by {form.right.shape[0]}x{form.right.shape[1]} and "
               f"{form.left.shape[0]}x{form.left.shape[1]}")  # fmt: skip
    else:
        _replace(model, chain, form, f.b, dtype, (len(lead), k, tail_y))
        how = "products by " + " and ".join("x".join(map(str, w.shape[-2:])) for w in form.factors)
    if not (isinstance(form, Product) and len(form.factors) == 1):
        _keep_zeros(model, chain.y, f, tail_y, dtype)
    return how


def _structured(
    f: Affine, tail: list[int], tail_y: list[int], opset: int, rows: int
) -> Convolution | Separable | Framed | None:
    """The cheapest of M as a convolution over some of x's tail axes (`convolution`), as
    separable over two blocks of them (`separable`) and as frames of a signal, or frames
    overlapped and added into one (`framing`, from opset 11, whose Pad and Slice read
    their sizes as inputs), where M is one map for every row of x; ranked with their
    dispatch (`_dispatch`) for x's `rows`."""
    if f.m is None or any(d != 1 for d in f.m.shape[:-2]):
        return None
    m = f.m.reshape(f.m.shape[-2:])
    forms = [read_convolution(m, tail, tail_y), read_separable(m, tail, tail_y)]
    if opset >= 11:
        forms.append(read_framed(m, tail, tail_y))
    return min((form for form in forms if form is not None),
               key=lambda form: form.cost + _dispatch(form, rows), default=None)  # fmt: skip


def _dispatch(form: Convolution | Separable | Framed, rows: int) -> float:
    """The dispatch of a form's nodes past one product's, per row of x (`rows` of them
    static in a run), to rank it against the other forms and M's product: FNO-1D's
    lifting into its first Fourier layer, one product of two rows by a 64 x 1024 M, runs
    in 0.9 of the time of the 9 nodes it is as a convolution. A chain's own cost, which
    the forms must beat by `COST["margin"]`, was set without it."""
    return COST["node"] * (form.nodes - 1) / max(rows, 1)


def _rank(form: Convolution | Separable | Framed) -> int:
    """M's rank where the form knows it (0: not known)."""
    return form.rank if isinstance(form, Convolution) else 0


def _bytes(form: Product | Convolution | Separable | Framed, dtype) -> int:
    if isinstance(form, Convolution):
        arrays = [form.basis, form.core, form.basis, form.constant]
    elif isinstance(form, Framed):
        arrays = [form.kernel]
    elif isinstance(form, Separable):
        arrays = [form.left, form.right]
    else:
        arrays = form.factors
    return sum(a.size for a in arrays if a is not None) * np.dtype(dtype).itemsize


def _lone_transform(chain: Chain) -> bool:
    """True for a chain of one DFT and nothing that computes but it: its own form is as
    fast, and accurate at float32's level, where a dense product of its length rounds
    its sums up to 5 times more (docs/transforms.md)."""
    ops = [node.op_type for node in chain.nodes]
    return ops.count("DFT") == 1 and not set(ops) & COMPUTES


def _flattened(run_all, lead: int, tail: list[int]):
    """The chain as a map of x's rows flattened past its `lead` leading axes: x's to
    `tail` before it runs, y's to one after."""

    def run(a: np.ndarray) -> np.ndarray:
        y = run_all(a.reshape(*a.shape[:-1], *tail))[0]
        return y.reshape(*y.shape[:lead], -1)

    return run


def _keep_zeros(model: onnx.ModelProto, y: str, f: Affine, tail_y: list[int], dtype) -> None:
    """Where the chain gives +0 whatever x is (a real signal's DC bin's imaginary part),
    y holds +0 again, not the rounding a factored M leaves there, whose sign a phase
    would read as pi: y is taken through a Where on a constant mask of those elements."""
    if f.m is None:
        return
    rows = np.all(f.m == 0, axis=-1) & (f.b == 0)  # [..., N'] where y is 0
    zero = np.all(rows.reshape(-1, rows.shape[-1]), axis=0)
    if not zero.any():
        return
    put = Placed(model.graph, y)
    producer = next(n for n in model.graph.node if y in n.output)
    kept = put.fresh("factored")
    producer.output[list(producer.output).index(y)] = kept
    mask = put.constant("nonzero", (~zero).reshape(tail_y))
    model.graph.node.insert(
        list(model.graph.node).index(producer) + 1,
        onnx.helper.make_node("Where", [mask, kept, put.constant("zero", np.zeros((), dtype))],
                              [y], name=put.fresh("where")),
    )  # fmt: skip


def _replace(
    model: onnx.ModelProto,
    chain: Chain,
    form: Product,
    b: np.ndarray,
    dtype,
    layout: tuple[int, int, list[int]],
) -> None:
    """Computes chain.y as x times the form's factors (plus b), in the place of the
    chain's last node. `layout` is x's count of leading axes, of the axes the map acts
    on, and y's sizes past the leading ones: where there are several, x's are
    flattened into one first, and y's made again last; with no leading axis, into one
    row [1, N], where onnxruntime runs a vector's MatMul slower (LRU's 16 x 8 values
    through [128, 128]: 1.04 of the row's time)."""
    lead, k, tail_y = layout
    put = Placed(model.graph, chain.y, lead)
    opset = default_opset(model) or 13

    def at_rows(op: str, x: str) -> str:  # Unsqueeze or Squeeze of axis -2
        if opset >= 13:
            return put.node(op, [x, put.constant("axes", np.array([-2], np.int64))])
        return put.node(op, [x], axes=[-2])

    row = not lead and k > 1 and len(tail_y) > 1  # reshaped, in and out, either way
    current = put.reshape(chain.x, [1, -1] if row else [-1]) if k > 1 else chain.x
    if form.rows:
        current = at_rows("Unsqueeze", current)
    if form.perm:
        current = put.node("Transpose", [current], perm=form.perm)
    for factor in form.factors:
        current = put.node("MatMul", [current, put.constant("factor", factor.astype(dtype))])
    if form.perm:
        current = put.node("Transpose", [current], perm=[int(i) for i in np.argsort(form.perm)])
    if form.rows:
        current = at_rows("Squeeze", current)
    if np.any(b != 0):
        current = put.node("Add", [current, put.constant("bias", b.astype(dtype))])
    if len(tail_y) > 1:
        put.reshape(current, tail_y)
    put.done()
