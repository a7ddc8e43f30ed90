"""Affine maps of one real signal, found by what they compute, run as one product.

A spectral filter is spelled many ways: a onesided DFT or a Slice to half the bins,
the weights, zeros padded or scattered in past the modes it keeps, the Hermitian
mirror and its conjugate, the inverse DFT and its real part. After the rewrite, every
spelling is a chain of real ops that is affine in the one real signal x it starts
from, along x's last axis:

    y = x M^T + b         M: [..., N', N], one per channel where the weights differ

`fuse` finds such chains by the ops they hold, not by their order (`carriers`): from a
DFT, back to the one value its signal is affine in, and on to the values that leave
the chain. It reads M and b off the chain itself, run in onnxruntime on basis vectors
(`_probe`), checks them on random signals, and puts one product in the chain's place
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
from onnx import TensorProto, helper, numpy_helper

from .graphs import default_opset, subgraphs
from .shapes import declared_dims, infer_shapes
from .tidy import fresh_name

EVERY_INPUT = frozenset({"Add", "Sub", "Neg", "Identity", "Concat", "Sum"})
"""Ops affine in all their inputs at once."""

FIRST_INPUT = frozenset(
    {"Reshape", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Gather", "GatherElements",
     "GatherND", "Split", "Flatten", "Expand", "Tile", "DFT", "ReduceSum", "ReduceMean",
     "CumSum", "Pad", "Div", "Cast"}
)  # fmt: skip
"""Ops affine in their first input, given the others (indices, shapes, a pad value, a
divisor)."""

ONE_INPUT = frozenset({"Mul", "MatMul", "Einsum", "Gemm"})
"""Ops affine in any one input, given the others."""

SOME_INPUTS = {"Where": (1, 2), "ScatterND": (0, 2), "ScatterElements": (0, 2), "Gemm": (0, 1, 2)}
"""Ops affine in the inputs named, given the others: a Where's branches, a scatter's
data and updates."""

COSTLY = frozenset({"DFT", "MatMul"})
"""Ops whose cost `_chain_cost` counts from their inputs."""

SHAPE_ONLY = frozenset({"Shape", "Size"})
"""Ops that read a value's shape, never its elements."""

RANDOM = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                    "Multinomial", "Bernoulli"})  # fmt: skip
"""Ops whose output is no constant, though they may read none."""

FLOATS = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE})

COST = {"mm": 1.0, "batched": 2.5, "pass": 1.0, "dft": 85.0, "node": 5000.0, "margin": 0.5}
"""The cost model, in multiply-adds per row of x, one thread: a product by one M costs
N N' (`mm`), and so does one M per channel where rows share it, plus a `pass` over x
and y for each Transpose that gathers them; one row at a time, `batched` times that; a DFT of
length L run as onnxruntime's DFT node costs `dft` L log2 L, and as a MatMul (up to
`passes.lower.MATMUL_DFT_MAX_LENGTH`) 2 L^2 (docs/performance.md, "Measured"). Each node
of a chain costs its dispatch besides, `node` for the run (0.2 us, where a MatMul of one
row does 25 multiply-adds a ns). A chain is replaced where its product costs at most
`margin` of the chain."""

MAX_BYTES = 64 << 20
"""The largest M (or A and B) put in a model."""

MAX_PROBES = 4096
"""The most runs of the chain that reading M may take."""

MAX_PROBE_BYTES = 256 << 20
"""The most memory reading M may take: M for every row of x's but its first axis's,
in float64 (for a map onto as many values as it reads)."""

RANK_TOL = 1e-6
"""Singular values below this share of the largest count as zero: float32's rounding
of an M of low rank leaves about 1e-7 there."""


def carriers(graph: onnx.GraphProto) -> dict[str, frozenset[str]]:
    """For every value of `graph` (nodes in order), the values it is affine in: a graph
    input carries itself; an initializer, a constant, and what is computed from them
    or from shapes alone carry nothing; a node's output carries its inputs' carriers
    where the op is affine in the inputs that carry any, and is a carrier itself where
    it is not (a nonlinear op, or a product of two carried values)."""
    carry: dict[str, frozenset[str]] = {i.name: frozenset({i.name}) for i in graph.input}
    for t in graph.initializer:
        carry[t.name] = frozenset()
    for node in graph.node:
        given = [carry.get(name, frozenset()) if name else frozenset() for name in node.input]
        if node.op_type in SHAPE_ONLY:
            given = []
        carried = [i for i, c in enumerate(given) if c]
        union = frozenset().union(*given)
        affine = (not carried or _affine_in(node, carried)) and node.op_type not in RANDOM
        for out in node.output:
            carry[out] = union if affine else frozenset({out})
    return carry


def _affine_in(node: onnx.NodeProto, carried: list[int]) -> bool:
    op = node.op_type
    if list(subgraphs(node)) or node.domain not in ("", "ai.onnx"):
        return False
    if op == "Cast" and next((a.i for a in node.attribute if a.name == "to"), None) not in FLOATS:
        return False
    if op in EVERY_INPUT:
        return True
    if op in SOME_INPUTS and set(carried) <= set(SOME_INPUTS[op]):
        return op != "Gemm" or len(set(carried) & {0, 1}) <= 1
    if op in ONE_INPUT:
        return len(carried) == 1
    return op in FIRST_INPUT and carried == [0]


@dataclass
class Chain:
    """One affine chain: `y` is affine in `x` along its last axis, computed by `nodes`
    (in graph order) from x, initializers and constants."""

    x: str
    y: str
    nodes: list[onnx.NodeProto]


def _is_dft(node: onnx.NodeProto, carry) -> str | None:
    """The one value a DFT's signal is affine in, or None."""
    source = carry[node.input[0]] if node.op_type == "DFT" else ()
    return next(iter(source)) if len(source) == 1 else None


def _is_affine(node: onnx.NodeProto, carry) -> str | None:
    """The one value any node's output is affine in, or None (a node that is not
    affine in its inputs carries its own output)."""
    source = carry.get(node.output[0], frozenset()) if node.output else frozenset()
    x = next(iter(source)) if len(source) == 1 else None
    return None if x == node.output[0] else x


def chains(graph: onnx.GraphProto, anchor=_is_dft) -> list[Chain]:
    """The chains of `graph` that hold an `anchor` node (a DFT by default), each from
    the one value x the anchor is affine in (`anchor(node, carriers)` names it, or gives
    None for a node that is no anchor) to a value that leaves the chain: a graph output,
    or the input of a node not affine in x. None in a graph with subgraphs: their nodes
    may read any value."""
    if any(list(subgraphs(n)) for n in graph.node):
        return []
    carry = carriers(graph)
    producer = {out: n for n in graph.node for out in n.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in graph.node:
        for name in n.input:
            consumers.setdefault(name, []).append(n)
    outputs = {o.name for o in graph.output}
    order = {id(n): i for i, n in enumerate(graph.node)}
    found, taken = [], set()
    for node in graph.node:
        x = anchor(node, carry)
        if x is None:
            continue
        for y in _exits(node.output[0], x, carry, consumers, outputs):
            if y not in taken:
                taken.add(y)
                nodes = _computing(y, x, producer)
                if nodes:
                    found.append(Chain(x, y, sorted(nodes, key=lambda n: order[id(n)])))
    return found


def _exits(start: str, x: str, carry, consumers, outputs) -> list[str]:
    """The values downstream of `start` that carry x alone and leave: a graph output, or
    read by a node whose outputs carry anything else."""
    exits, seen, todo = [], set(), [start]
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        leaves = t in outputs
        for n in consumers.get(t, []):
            inside = [o for o in n.output if carry.get(o) == frozenset({x})]
            leaves |= n.op_type not in SHAPE_ONLY and not inside
            todo += inside
        if leaves:
            exits.append(t)
    return exits


def _computing(y: str, x: str, producer) -> list[onnx.NodeProto]:
    """The nodes that compute `y` from `x`, graph inputs, initializers and constants
    (`_chain_model` refuses the chain where they read a graph input but x)."""
    nodes, seen, todo = {}, set(), [y]
    while todo:
        t = todo.pop()
        if t in seen or t == x or not t:
            continue
        seen.add(t)
        n = producer.get(t)
        if n is None:
            continue  # an initializer, or a graph input: the caller checks
        if id(n) not in nodes:
            nodes[id(n)] = n
            todo += list(n.input)
    return list(nodes.values())


@dataclass
class Affine:
    """y = x M^T + b along the last axis: `m` is [..., N', N] and `b` [..., N'], each
    broadcast over x's leading axes (size 1 where they do not change along one). Where
    M was read in a basis of its range (`_probe_range`), `m` is None and M = q r: q
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


def _chain_model(model: onnx.ModelProto, chain: Chain, elem: int, dims: list):
    """The chain as a model of its own, x (its static `dims` kept, the others free) -> y,
    and then the inputs of its DFTs and MatMuls, for their cost (`_chain_cost`); None
    where it reads a graph input but x."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    used = {name for n in chain.nodes for name in n.input}
    inputs = {i.name for i in graph.input}
    if used & (inputs - {chain.x}):
        return None
    free = [d if isinstance(d, int) else f"d{i}" for i, d in enumerate(dims)]
    x_info = helper.make_tensor_value_info(chain.x, elem, free)
    outputs = [helper.make_empty_tensor_value_info(name) for name in [chain.y, *_costly(chain)]]
    sub = helper.make_graph(
        chain.nodes, "chain", [x_info], outputs,
        [inits[name] for name in sorted(used & inits.keys())],
    )  # fmt: skip
    out = helper.make_model(sub, opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    return out


def _probe(run, shape: list[int], dtype, flexible: list[int]) -> Affine | None:
    """Reads M and b off `run` (the chain, x -> y) on basis signals of `shape`: at
    each index of x's first axis, a different unit vector, so that each run reads
    shape[0] of M's columns; the map must not change along that axis, which the check
    on random signals (with another size on each `flexible` axis) confirms."""
    n, rows = shape[-1], shape[0] if len(shape) > 1 else 1
    if math.ceil(n / rows) > MAX_PROBES:
        return None
    b = np.asarray(run(np.zeros(shape, dtype)), np.float64)
    if b.shape[:-1] != tuple(shape[:-1]):
        return None
    if math.prod(shape[1:-1]) * b.shape[-1] * n * 8 > MAX_PROBE_BYTES:
        f = _probe_range(run, shape, dtype, b)
    else:
        m = np.stack(list(_columns(run, shape, dtype, b)), axis=-1)  # [lead[1:]..., N', N]
        f = Affine(_narrowest(m[None] if len(shape) > 1 else m, 2), b)
    if f is None:
        return None
    f.b = _narrowest(b, 1)
    return f if _checks(run, f, shape, dtype, flexible) else None


def _columns(run, shape: list[int], dtype, b: np.ndarray):
    """M's columns, x's first axis's size of them a run: [lead[1:]..., N'] each."""
    n, rows = shape[-1], shape[0] if len(shape) > 1 else 1
    for start in range(0, n, rows):
        basis = np.zeros(shape, dtype)
        ks = range(start, min(n, start + rows))
        for i, k in enumerate(ks):
            basis.reshape(rows, -1, n)[i, :, k] = 1
        y = np.asarray(run(basis), np.float64) - b
        yield from [y] if len(shape) == 1 else (y[i] for i in range(len(ks)))


RANGE_PROBES = 64
"""Random signals per channel that `_probe_range` reads M's range from: M must have
rank well below this."""


def _probe_range(run, shape: list[int], dtype, b: np.ndarray) -> Affine | None:
    """M in a basis of its range, where M itself is too large to read whole (one
    [N', N] per channel): its outputs on `RANGE_PROBES` random signals span the range
    of an M of low rank (a Fourier layer's few kept modes); each column is then read in
    that basis. None where the rank comes near `RANGE_PROBES`."""
    if len(shape) < 2:
        return None
    rows, rng = shape[0], np.random.default_rng(1)
    samples = []
    for _ in range(math.ceil(RANGE_PROBES / rows)):
        y = np.asarray(run(rng.standard_normal(shape).astype(dtype)), np.float64) - b
        samples += [y[i] for i in range(rows)]
    u, s, _ = np.linalg.svd(np.stack(samples, axis=-1), full_matrices=False)  # per channel
    rank = _rank(s)
    if rank > len(samples) - 8:
        return None
    q = u[..., :, : max(rank, 1)]  # [lead[1:]..., N', r]
    r = np.stack([np.einsum("...k,...kr->...r", c, q) for c in _columns(run, shape, dtype, b)],
                 axis=-1)  # fmt: skip
    return Affine(None, b, q[None], r[None])


def _rank(s: np.ndarray) -> int:
    """The largest rank among matrices of singular values `s` (per matrix, largest
    first): how many pass `RANK_TOL` of their matrix's largest."""
    return int(np.max(np.sum(s > RANK_TOL * s[..., :1], axis=-1), initial=0))


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


def _checks(run, f: Affine, shape, dtype, flexible) -> bool:
    """Whether `f` is the chain on two random signals, the second with 3 on every
    flexible axis: within float32's rounding of the chain's terms."""
    rng = np.random.default_rng(0)
    for size in (None, 3):
        probe = [size if size and i in flexible else s for i, s in enumerate(shape)]
        x = rng.standard_normal(probe).astype(dtype)
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


def _dft_cost(length: int, matmul_up_to: int) -> float:
    """A DFT of a real signal (a complex one costs twice that)."""
    if length <= matmul_up_to:
        return 2.0 * length * length
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
            axis = _dft_axis(node, axis, signal.ndim, opset)
            size = int(length) if length is not None and np.size(length) else signal.shape[axis]
            transforms = signal.size // signal.shape[-1] // max(signal.shape[axis], 1)
            total += transforms * signal.shape[-1] * _dft_cost(size, matmul_up_to)
    return total / max(rows, 1)


def _dft_axis(node: onnx.NodeProto, given, rank: int, opset: int) -> int:
    """A DFT's axis in its packed signal: an input from opset 20 (-2 by default), an
    attribute before (1 by default)."""
    if opset >= 20:
        axis = int(np.asarray(given)) if given is not None and np.size(given) else -2
    else:
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
    return axis + rank if axis < 0 else axis


@dataclass
class Form:
    """How y = x M^T + b is run: `factors` are multiplied into x in turn (M^T, or A
    then B where M^T = A B), each [..., N, r]. Where they differ from channel to channel,
    x's rows that share one are moved next to each other first, by `perm` (None: x's
    own order), so that each product is a matrix's, not a row's (`rows`: one row at a
    time, none share). `cost` is in multiply-adds per row of x."""

    factors: list[np.ndarray]
    cost: float
    perm: list[int] | None = None
    rows: bool = False


def cheapest_form(f: Affine, x_lead: list) -> Form:
    """M^T itself, or, where M has low rank r (`RANK_TOL`), A [N, r] and B [r, N'],
    from its singular values (or its range's basis); whichever costs less (`COST`).
    `x_lead` are x's leading dims (a name for one not static), for how many rows share
    each matrix."""
    lead = (f.m if f.m is not None else f.q).shape[:-2]
    varying = [i for i, d in enumerate(lead) if d > 1]
    shared = [i for i, d in enumerate(lead) if d == 1]
    sharing = [x_lead[i] for i in shared]
    form = Form([], 0.0)
    if not varying:
        rate = COST["mm"]
    elif sharing and not all(d == 1 for d in sharing):  # rows share each channel's matrix
        rows = max(shared, key=lambda i: x_lead[i] if isinstance(x_lead[i], int) else math.inf)
        order = [*(i for i in shared if i != rows), *varying, rows]
        perm = [*order, len(lead)]
        form = Form([], 0.0, None if perm == sorted(perm) else perm)
        rate = COST["mm"]
    else:
        form, rate = Form([], 0.0, rows=True), COST["batched"]

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
        u, s, vt = np.linalg.svd(m, full_matrices=False)
        rank = max(_rank(s), 1)
        factors, work = [np.swapaxes(m, -1, -2)], n * n_out
        if rank * (n + n_out) < n * n_out:
            a = np.swapaxes(vt[..., :rank, :], -1, -2) * s[..., None, :rank]  # [..., N, r]
            factors, work = [a, np.swapaxes(u[..., :, :rank], -1, -2)], rank * (n + n_out)
    moves = 2 * COST["pass"] * (n + n_out) if form.perm else 0.0
    form.factors, form.cost = factors, rate * work + moves
    return form


UNROLLED_MIN_NODES = 16
"""The fewest nodes of a chain with no DFT that `fuse` reads: an unrolled recurrence
(LRU's 16 steps are 275 nodes on 128 values), where onnxruntime's cost is each node's
dispatch, not its arithmetic."""


def fuse(model: onnx.ModelProto, matmul_up_to: int) -> list[str]:
    """Runs each affine chain of `model` that holds a DFT (`chains`), then each of at
    least `UNROLLED_MIN_NODES` nodes, as its cheapest product, where that costs at most
    `COST["margin"]` of the chain, in place; a note per chain replaced. DFTs of length
    up to `matmul_up_to` are costed as the MatMuls they will become."""
    fused = functools.partial(_fuse_chain, matmul_up_to=matmul_up_to)
    notes = replace_chains(model, _is_dft, fused)
    return notes + replace_chains(model, _is_affine, functools.partial(fused, unrolled=True))


def replace_chains(model: onnx.ModelProto, anchor, replace) -> list[str]:
    """Calls `replace(model, chain, labels)` on each chain from an `anchor` node (see
    `chains`; `labels`: the inferred value infos, by value name) until every chain left
    has been given to it once; `replace` changes `model` in place and returns a note, or
    None where it leaves the chain. Returns the notes; none without onnxruntime, which
    reads the chains."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return []
    notes, tried = [], set()
    while True:  # a replaced chain may lie inside a longer one: found again on what is left
        found = [c for c in chains(model.graph, anchor) if (c.x, c.y) not in tried]
        if not found:
            return notes
        try:
            inferred = infer_shapes(model)
        except Exception:  # onnx raises several types: the chains' shapes are unknown
            return notes
        labels = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.input,
                                       *inferred.graph.output]}  # fmt: skip
        for chain in found:
            tried.add((chain.x, chain.y))
            note = replace(model, chain, labels)
            if note:
                notes.append(note)
                drop_unused(model.graph)
                break


def _shared(graph: onnx.GraphProto, chain: Chain) -> bool:
    """Whether a value the chain computes, y aside, is read outside it (or is a graph
    output): its nodes would then stay beside the product."""
    inside = {id(n) for n in chain.nodes}
    made = {out for n in chain.nodes for out in n.output} - {chain.y}
    outputs = {o.name for o in graph.output}
    return bool(made & outputs) or any(
        id(n) not in inside and made.intersection(n.input) for n in graph.node
    )


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
    model, chain: Chain, labels: dict, matmul_up_to: int, unrolled: bool = False
) -> str | None:
    """Replaces one chain by its cheapest product (see `fuse`); a note, or None where
    it is left as it is. An `unrolled` chain (no DFT) is read only where it has
    `UNROLLED_MIN_NODES`, none of them read outside it, and a dense M would pass the
    cost model."""
    if unrolled and (len(chain.nodes) < UNROLLED_MIN_NODES or _shared(model.graph, chain)):
        return None
    if _lone_transform(chain):
        return None
    found = ends(chain, labels)
    if found is None:
        return None
    x_dims, y_dims, elem = found
    dtype = np.float32 if elem == TensorProto.FLOAT else np.float64
    run_all = runner(model, chain, elem, x_dims)
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
        if not all(isinstance(d, int) for d in [*tail, *tail_y]):
            continue
        n, n_out = math.prod(tail), math.prod(tail_y)
        flexible = [i for i, d in enumerate(lead) if not isinstance(d, int)]
        shape = [(n if i == 0 else 1) if i in flexible else d for i, d in enumerate(lead)]
        try:
            costly = run_all(np.zeros([*shape, *tail], dtype))[1:]
            chain_cost = _chain_cost(chain, costly, math.prod(shape), n, n_out, matmul_up_to, opset)
            if unrolled and COST["mm"] * n * n_out > COST["margin"] * chain_cost:
                continue  # not read: M dense would cost more than the chain
            f = _probe(_flattened(run_all, len(lead), tail), [*shape, n], dtype, flexible)
        except Exception:  # a chain onnxruntime cannot run on a probe: left as it is
            f = None
        if f is None:
            continue
        form = cheapest_form(f, lead)
        nbytes = sum(w.size for w in form.factors) * np.dtype(dtype).itemsize
        if form.cost > COST["margin"] * chain_cost or nbytes > MAX_BYTES:
            return None
        _replace(model, chain, form, f.b, dtype, (len(lead), k, tail_y))
        sizes = " and ".join("x".join(map(str, w.shape[-2:])) for w in form.factors)
        return (f"{chain.y}: affine in {chain.x}, {len(chain.nodes)} nodes -> products by "
                f"{sizes}, {form.cost / chain_cost:.2f} of the chain's cost")  # fmt: skip
    return None


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


def ends(chain: Chain, labels: dict) -> tuple[list, list, int] | None:
    """x's and y's dims (`shapes.declared_dims`) and x's element type, where both have
    a rank of at least 1 and x is a float; else None."""
    x, y = labels.get(chain.x), labels.get(chain.y)
    if x is None or y is None:
        return None
    x_dims, y_dims, elem = declared_dims(x), declared_dims(y), x.type.tensor_type.elem_type
    return (x_dims, y_dims, elem) if x_dims and y_dims and elem in FLOATS else None


def runner(model: onnx.ModelProto, chain: Chain, elem: int, dims: list):
    """The chain run in onnxruntime on one thread, x -> [y, the inputs of its costly
    nodes]; None where `_chain_model` refuses it or onnxruntime cannot load it."""
    import onnxruntime as ort

    from .trt.lower import lower  # it imports this module's neighbours

    sub = _chain_model(model, chain, elem, dims)
    if sub is None:
        return None
    # M is read off the chain's DFTs in their accurate forms, not onnxruntime's own
    # (docs/transforms.md): its columns are then as exact as float32 makes them.
    sub = lower(sub, default_opset(sub) or 1, {"DFT"}, strict=False)[0]
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    try:
        session = ort.InferenceSession(sub.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])  # fmt: skip
    except Exception:  # a chain onnxruntime cannot load on its own: left as it is
        return None
    return lambda a: session.run(None, {chain.x: a})


def _replace(
    model: onnx.ModelProto,
    chain: Chain,
    form: Form,
    b: np.ndarray,
    dtype,
    layout: tuple[int, int, list[int]],
) -> None:
    """Computes chain.y as x times the form's factors (plus b), in the place of the
    chain's last node. `layout` is x's count of leading axes, of the axes the map acts
    on, and y's sizes past the leading ones: where there are several, x's are
    flattened into one first, and y's made again last."""
    lead, k, tail_y = layout
    put = Placed(model.graph, chain.y)
    opset = default_opset(model) or 13

    def at_rows(op: str, x: str) -> str:  # Unsqueeze or Squeeze of axis -2
        if opset >= 13:
            return put.node(op, [x, put.constant("axes", np.array([-2], np.int64))])
        return put.node(op, [x], axes=[-2])

    def reshape(x: str, sizes: list[int]) -> str:
        return put.node(
            "Reshape", [x, put.constant("shape", np.array([0] * lead + sizes, np.int64))]
        )

    current = reshape(chain.x, [-1]) if k > 1 else chain.x
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
        reshape(current, list(tail_y))
    put.done()


class Placed:
    """Nodes that compute `y` in the place of the node that now does, and the
    initializers they read, named after y. `done` puts them in: the old node then
    writes a value no one reads, for `drop_unused`."""

    def __init__(self, graph: onnx.GraphProto, y: str):
        self.graph, self.y, self.nodes = graph, y, []
        self.taken = {n for node in graph.node for n in [*node.input, *node.output]}
        self.taken |= {t.name for t in graph.initializer} | {i.name for i in graph.input}

    def fresh(self, suffix: str) -> str:
        """A name no value of the graph has: `y_suffix` where it can."""
        return fresh_name(f"{self.y}_{suffix}", self.taken)

    def constant(self, stem: str, value: np.ndarray) -> str:
        name = self.fresh(stem)
        self.graph.initializer.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op: str, inputs: list[str], domain: str = "", **attrs) -> str:
        """One more node; its output's name."""
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def done(self) -> None:
        """The last node writes y, in the place of the one that wrote it."""
        self.nodes[-1].output[0] = self.y
        last = next(i for i, node in enumerate(self.graph.node) if self.y in node.output)
        old = self.graph.node[last]
        old.output[list(old.output).index(self.y)] = self.fresh("unfused")
        for k, node in enumerate(self.nodes):
            self.graph.node.insert(last + k, node)


def drop_unused(graph: onnx.GraphProto) -> None:
    """Removes nodes none of whose outputs is read, and initializers no node reads."""
    while True:
        read = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
        dead = [i for i, node in enumerate(graph.node) if not read & set(node.output)]
        for i in reversed(dead):
            del graph.node[i]
        if not dead:
            break
    kept = [t for t in graph.initializer if t.name in read]
    del graph.initializer[:]
    graph.initializer.extend(kept)
