"""Rotations by a position table, found by what they compute: RoPE however it is
written on real values, as one RotaryEmbedding node.

Exporters write RoPE's complex product on real parts in many ways: strided Slices into
even and odd halves, Gathers of a last axis of 2, a Reshape to pairs; four products by
cos and sin tables, a Sub and an Add; a stack back by Concat, by an interleaving
Reshape, or a Concat of halves. Whatever the spelling, the chain from the head vectors
x to the result y is affine in x (`chains.chains`, from a product by a table), and
rotates each pair of x's last axis by an angle that depends on the position only:

    interleaved pairs (2i, 2i + 1):   y_2i = x_2i c - x_2i+1 s,   y_2i+1 = x_2i s + x_2i+1 c
    halves (i, i + D/2):              y_i  = x_i c - x_i+D/2 s,   y_i+D/2 = x_i s + x_i+D/2 c

`rotations` reads c and s off the chain, run in onnxruntime on x = ones at the first
element of every pair, checks the chain against the formula on two random x (a map
that differs from it agrees on random inputs with probability 0), and puts the node in
the chain's place: com.microsoft.RotaryEmbedding with caches [S, D/2] read from
position 0, or from opset 23 the standard one with caches [B, S, D/2]. A chain needs
two products and a sum to be a rotation at all: others are passed over unrun.

The table may come from one graph input: positions at which the chain gathers a constant
table (Llama's freqs_cis[positions], `_Positions`: the whole table becomes the caches,
the positions the node's position_ids), or freqs_cis itself (`_Given`: the chain's own
values that hold cos and sin become the caches). A chain that projects x first, or lays
the result out after, is read from the projection's result to the layout's input.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper

from ...graphs import default_opset
from ...rules.rotary import CONTRIB, ROTARY_OPSET
from ...shapes import declared_dims, static
from ...tidy import import_emitted
from .chains import Chain, Placed, computing, ends, replace_chains
from .matching import perm
from .probe import runner


def _is_table_product(node: onnx.NodeProto, carry) -> str | None:
    """The one value a product by a constant table is affine in, or None."""
    if node.op_type != "Mul" or len(node.input) != 2:
        return None
    given = [carry.get(name, frozenset()) for name in node.input]
    sources = [c for c in given if c]
    return next(iter(sources[0])) if len(sources) == 1 and len(sources[0]) == 1 else None


def rotations(model: onnx.ModelProto, contrib: bool) -> list[str]:
    """Replaces each chain of `model` that is a rotation by a position table (see the
    module) with one RotaryEmbedding node, changing `model` in place; a note per chain.
    Without onnxruntime, or where neither node is allowed (below opset 23 without
    `contrib`), nothing changes."""
    opset = default_opset(model) or 1
    if not (contrib or opset >= ROTARY_OPSET):
        return []
    inputs = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    positions = frozenset(name for name, elem in inputs.items() if elem in INTEGERS)
    rotate = functools.partial(_rotate, opset=opset)
    notes = replace_chains(model, _is_table_product, rotate, given=positions)
    floats = [name for name, elem in inputs.items() if elem == TensorProto.FLOAT]
    for table in floats[:MAX_TABLE_INPUTS] if len(floats) > 1 else []:
        notes += replace_chains(model, _is_table_product, rotate, given=positions | {table})
    return notes


INTEGERS = frozenset({TensorProto.INT32, TensorProto.INT64})
"""The types of a graph input of positions, at which a table is gathered."""

MAX_TABLE_INPUTS = 8
"""The most float graph inputs read, one at a time, as a table given at run time (each
is a search of the graph's chains): freqs_cis given beside the head vectors."""


def _rotate(model, chain: Chain, labels: dict, opset: int) -> str | None:
    found = ends(chain, labels)
    if found is not None and found[0] != found[1]:  # a projection first, or a layout after
        chain = _rotated_part(chain, labels)
        found = chain and ends(chain, labels)
    if found is None:
        return None
    dims, y_dims, elem = found
    if dims != y_dims or not static(dims):
        return None
    if elem != TensorProto.FLOAT or len(dims) not in (3, 4):
        return None
    if dims[-1] % 2 or 0 in dims:
        return None
    ops = [node.op_type for node in chain.nodes]
    if ops.count("Mul") < 2 or not {"Add", "Sub"} & set(ops):
        return None  # no c x and s x' summed: a scale, not a rotation (and no session for it)
    graph_inputs = {i.name for i in model.graph.input} - {chain.x}
    read = sorted({name for node in chain.nodes for name in node.input} & graph_inputs)
    if len(read) > 1:
        return None
    given = labels[read[0]] if read else None
    if given is None:
        table = _Constant()
    elif given.type.tensor_type.elem_type in INTEGERS:
        table = _Positions.of(model, chain, given)
    else:
        table = _Given.of(chain, given)
    run_all = table and runner(model, chain, elem, dims, table.more, given=read)
    if run_all is None:
        return None
    try:
        found = table.read(run_all, dims)
    except Exception:  # a chain onnxruntime cannot run on a probe: left as it is
        return None
    if found is None:
        return None
    interleaved, seq, cos, sin = found
    if len(dims) == 4 and seq not in (1, 2):
        return None
    rotation = (seq, interleaved)
    _replace(model, chain, dims, rotation, opset, table.caches(cos, sin, dims, seq), labels)
    node = "RotaryEmbedding" if opset >= ROTARY_OPSET else f"{CONTRIB}.RotaryEmbedding"
    pairs = "interleaved pairs" if interleaved else "halves"
    return (f"{chain.y}: a rotation of {chain.x} by {table.spelled()} ({pairs}, "
            f"{len(chain.nodes)} nodes) -> one {node}")  # fmt: skip


def _rotated_part(chain: Chain, labels: dict) -> Chain | None:
    """The part of `chain` that may be the rotation, where x is projected first (q = x
    Wq, then rotated) or the result laid out after (k's Transpose for q k^T): from the
    first value of y's dims to y, or to the last value of the chain before y whose dims
    such a part has."""
    producer = {out: n for n in chain.nodes for out in n.output}
    order = {id(n): i for i, n in enumerate(chain.nodes)}
    ends_at = [chain.y, *(out for n in reversed(chain.nodes) for out in n.output)]
    for y in dict.fromkeys(ends_at):
        dims = declared_dims(labels[y]) if y in labels else None
        if not dims or len(dims) not in (3, 4):
            continue
        nodes = sorted(computing(y, chain.x, producer), key=lambda n: order[id(n)])
        part = _after_projection(Chain(chain.x, y, nodes), labels, dims)
        if part is not None and [n.op_type for n in part.nodes].count("Mul") >= 2:
            return part
    return None


def _after_projection(chain: Chain, labels: dict, y_dims: list) -> Chain | None:
    """The end of `chain` from its first value of y's dims that y is affine in alone:
    where x is projected first (q = x Wq, then rotated), the rotation of q."""
    producer = {out: n for n in chain.nodes for out in n.output}
    order = {id(n): i for i, n in enumerate(chain.nodes)}
    from_x = _reached(chain.nodes, chain.x)
    for node in chain.nodes:
        for v in node.output:
            if v == chain.y or v not in labels or declared_dims(labels[v]) != y_dims:
                continue
            nodes = sorted(computing(chain.y, v, producer), key=lambda n: order[id(n)])
            after = _reached(nodes, v)
            if all(from_x.intersection(n.input) <= after for n in nodes):
                return Chain(v, chain.y, nodes)
    return None


def _reached(nodes: list[onnx.NodeProto], start: str) -> set[str]:
    """`start` and the values `nodes` (in graph order) compute from it."""
    reached = {start}
    for node in nodes:
        if reached.intersection(node.input):
            reached.update(node.output)
    return reached


def _read(run, dims: list[int]):
    """(interleaved, the position axis, cos [S, D/2], sin [S, D/2]) of the rotation `run`
    computes, or None where it is none (see the module)."""
    if np.any(run(np.zeros(dims, np.float32))):
        return None  # an offset: affine, but no rotation
    rng = np.random.default_rng(0)
    for interleaved in (True, False):
        tables = _tables(run, dims, interleaved)
        if tables is not None and all(
            _agrees(run, rng.standard_normal(dims).astype(np.float32), interleaved, *tables)
            for _ in range(2)
        ):
            return interleaved, *tables
    return None


def _tables(run, dims: list[int], interleaved: bool):
    """(the position axis, cos [S, D/2], sin [S, D/2]) that `run` rotates by, read at x
    = 1 on every pair's first element, where they vary along one axis."""
    first, second = _pair_masks(dims[-1], interleaved)
    at_first = run(np.broadcast_to(first, dims).astype(np.float32))
    cos, sin = at_first[..., first], at_first[..., second]
    seq = _position_axis(cos, sin)
    if seq is None:
        return None
    half = dims[-1] // 2
    return seq, *(np.moveaxis(p, seq, 0).reshape(dims[seq], -1, half)[:, 0] for p in (cos, sin))


def _agrees(run, x: np.ndarray, interleaved: bool, seq: int, cos, sin) -> bool:
    want = _rope(x, cos, sin, seq, interleaved)
    return np.allclose(run(x), want, rtol=1e-4, atol=1e-5 * (np.abs(want).max() + 1))


@dataclass
class _Positions:
    """A graph input of positions [S] (or [1, S]) at which the chain gathers its table,
    of `length` rows; `wraps`: a position -1 reads the last row, as a Gather reads it."""

    name: str
    dims: list[int]
    dtype: type
    length: int
    wraps: bool = False
    more = ()

    @classmethod
    def of(cls, model: onnx.ModelProto, chain: Chain, info) -> _Positions | None:
        """The input `info` names, where its dims are static and the chain gathers a
        constant table at it."""
        dims = declared_dims(info)
        if not (dims and static(dims) and dims[:-1] in ([], [1])):
            return None
        inits = {t.name: t for t in model.graph.initializer}
        derived, lengths = _reached(chain.nodes, info.name), []
        for node in chain.nodes:
            if node.op_type == "Gather" and node.input[1] in derived and node.input[0] in inits:
                axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
                lengths.append(inits[node.input[0]].dims[axis])
        dtype = helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type)
        return cls(info.name, dims, dtype, min(lengths)) if lengths else None

    def read(self, run_all, dims: list[int]):
        """(interleaved, the position axis, cos and sin [length, D/2]) of the rotation:
        read at positions 0.. a sequence at a time, then checked at random ones."""
        n = self.dims[-1]
        starts = [
            np.minimum(np.arange(k, k + n), self.length - 1) for k in range(0, self.length, n)
        ]
        found = _read(self.at(run_all, starts[0]), dims)
        if found is None or dims[found[1]] != n:
            return None
        interleaved, seq, cos, sin = found
        caches = [np.zeros((self.length, cos.shape[1]), np.float32) for _ in range(2)]
        caches[0][starts[0]], caches[1][starts[0]] = cos, sin
        for block in starts[1:]:
            tables = _tables(self.at(run_all, block), dims, interleaved)
            if tables is None or tables[0] != seq:
                return None
            caches[0][block], caches[1][block] = tables[1:]
        rng = np.random.default_rng(1)
        block = rng.integers(0, self.length, n)
        x = rng.standard_normal(dims).astype(np.float32)
        if not _agrees(self.at(run_all, block), x, interleaved, seq, *(c[block] for c in caches)):
            return None
        last = np.full(n, self.length - 1)
        try:
            self.wraps = _agrees(self.at(run_all, last - self.length), x, interleaved, seq,
                                 *(c[last] for c in caches))  # fmt: skip
        except Exception:  # a position out of range is refused
            self.wraps = False
        return interleaved, seq, *caches

    def at(self, run_all, positions: np.ndarray):
        """The chain as a function of x, at `positions`."""
        feeds = {self.name: positions.reshape(self.dims).astype(self.dtype)}
        return lambda a: run_all(a, feeds)[0]

    def spelled(self) -> str:
        return f"a position table gathered at {self.name}"

    def caches(self, cos, sin, dims: list[int], seq: int):
        """The caches as read, and position ids [B, S] from the input (`_replace`)."""

        def put_in(put: Placed):
            ids = put.node("Cast", [self.name], to=TensorProto.INT64)
            if self.wraps:  # -1 reads the last row, as the Gather does
                ids = put.node("Mod", [ids, put.constant("rows", np.array(self.length, np.int64))])
            # [S] or [1, S] (`of`) broadcast with [B, 1]: [B, S], no Reshape first
            batch = put.constant("batch", np.array([dims[0], 1], np.int64))
            return cos, sin, put.node("Expand", [ids, batch])

        return put_in


class _Constant:
    """A table the chain holds: its caches are read off it, from position 0."""

    more = ()

    def read(self, run_all, dims: list[int]):
        return _read(lambda a: run_all(a)[0], dims)

    def spelled(self) -> str:
        return "a position table"

    def caches(self, cos, sin, dims: list[int], seq: int):
        return lambda put: (cos, sin, None)


VIEWS = frozenset({"Squeeze", "Unsqueeze", "Reshape", "Flatten"})
"""Ops that give their input's values in the same order, in another shape."""


def _viewed(producer: dict[str, onnx.NodeProto], name: str) -> str:
    """The value that `name` views through VIEWS (by the node that makes each value),
    which a Reshape of `name` can read in its place (a part Squeezed off its pair, then
    reshaped to a cache, reshaped once)."""
    node = producer.get(name)
    while node is not None and node.op_type in VIEWS:
        name = node.input[0]
        node = producer.get(name)
    return name


@dataclass
class _Given:
    """A float graph input the chain computes its cos and sin tables from (freqs_cis
    given at run time): `more` are the values the chain multiplies x by, which
    `read` finds them among, at two random tables."""

    name: str
    dims: list[int]
    more: tuple[str, ...]
    cos: str = ""
    sin: str = ""
    negated: bool = False

    @classmethod
    def of(cls, chain: Chain, info) -> _Given | None:
        dims = declared_dims(info)
        if not (dims and static(dims)):
            return None
        from_x = _reached(chain.nodes, chain.x)
        factors = [
            name for node in chain.nodes if node.op_type == "Mul"
            for name in node.input if name not in from_x
        ]  # fmt: skip
        return cls(info.name, dims, tuple(dict.fromkeys(factors)))

    def read(self, run_all, dims: list[int]):
        """(interleaved, the position axis, cos, sin) at a random table, where two values
        of the chain hold cos and sin (or -sin) at two random tables."""
        rng, found, named = np.random.default_rng(2), None, None
        for _ in range(2):
            feeds = {self.name: rng.standard_normal(self.dims).astype(np.float32)}
            run = lambda a, feeds=feeds: run_all(a, feeds)[0]  # noqa: E731
            found = (
                _read(run, dims)
                if found is None
                else (*found[:2], *_tables(run, dims, found[0])[1:])
            )
            factors = run_all(np.zeros(dims, np.float32), feeds)[1:]
            now = self._named(found[2], found[3], factors)
            if now is None or (named is not None and now != named):
                return None
            named = now
        self.cos, self.sin, self.negated = named
        return found

    def _named(self, cos: np.ndarray, sin: np.ndarray, factors: list[np.ndarray]):
        """(the value holding cos, the one holding sin or -sin, whether negated)."""
        sizes = {name: v for name, v in zip(self.more, factors, strict=True) if v.size == cos.size}
        held = {name: v.reshape(cos.shape) for name, v in sizes.items()}
        find = lambda want: next(  # noqa: E731
            (name for name, v in held.items() if np.allclose(v, want, rtol=1e-6, atol=0)), None
        )
        c, s, minus_s = find(cos), find(sin), find(-sin)
        if c is None or (s or minus_s) is None:
            return None
        return c, s or minus_s, s is None

    def spelled(self) -> str:
        return f"a table given at run time ({self.name})"

    def caches(self, cos, sin, dims: list[int], seq: int):
        """cos and sin [S, D/2] from the chain's own values of them, read from 0."""

        def put_in(put: Placed):
            shape = put.constant("table", np.array(cos.shape, np.int64))
            producer = {out: node for node in put.graph.node for out in node.output}
            c = put.node("Reshape", [_viewed(producer, self.cos), shape])
            s = put.node("Reshape", [_viewed(producer, self.sin), shape])
            return c, put.node("Neg", [s]) if self.negated else s, None

        return put_in


def _pair_masks(d: int, interleaved: bool) -> tuple[np.ndarray, np.ndarray]:
    """Where each pair's first and second elements lie on the last axis."""
    first = np.zeros(d, bool)
    if interleaved:
        first[0::2] = True
    else:
        first[: d // 2] = True
    return first, ~first


def _position_axis(cos: np.ndarray, sin: np.ndarray) -> int | None:
    """The one axis (not the first, nor the last) along which the tables vary; 1 where
    they vary along none; None where they vary along more than one."""
    varying = [axis for axis in range(1, cos.ndim - 1)
               if not (_constant_along(cos, axis) and _constant_along(sin, axis))]  # fmt: skip
    if not (_constant_along(cos, 0) and _constant_along(sin, 0)) or len(varying) > 1:
        return None
    return varying[0] if varying else 1


def _constant_along(a: np.ndarray, axis: int) -> bool:
    return bool(np.all(a == np.take(a, [0], axis=axis)))


def _rope(x, cos, sin, seq: int, interleaved: bool) -> np.ndarray:
    """The rotation in numpy, cos and sin [S, D/2] along axis `seq`."""
    shape = [1] * x.ndim
    shape[seq], shape[-1] = cos.shape
    c, s = cos.reshape(shape), sin.reshape(shape)
    first, second = _pair_masks(x.shape[-1], interleaved)
    a, b = x[..., first], x[..., second]
    y = np.empty_like(x)
    y[..., first], y[..., second] = a * c - b * s, a * s + b * c
    return y


def _named(put: Placed, *caches) -> list[str]:
    """Each cache's value: a constant put in for an array, else the value it names."""
    return [
        c if isinstance(c, str) else put.constant(k, np.ascontiguousarray(c))
        for k, c in zip(("cos", "sin"), caches, strict=True)
    ]


def _joined(model, x: str, dims: list, labels: dict) -> str | None:
    """The [B, S, H D] value that x [B, S, H, D] was split from by a Reshape, where it
    was: a RotaryEmbedding reads it as it is (a Reshape back and forth is a node each)."""
    split = next((n for n in model.graph.node if x in n.output), None)
    if split is None or split.op_type != "Reshape" or split.input[0] not in labels:
        return None
    joined = split.input[0]
    return joined if declared_dims(labels[joined]) == [*dims[:2], dims[2] * dims[3]] else None


def _heads_first(model, x: str, dims: list, labels: dict) -> str | None:
    """The [B, S, H D] value that x [B, H, S, D] was split from, heads first, by a
    Reshape to [B, S, H, D] and a Transpose (as torch's and Llama's attention write q and
    k), where it was: the rotation is then of that value, its heads moved after it, so
    that attention over the heads reads [B, S, H D] (`common.attention`)."""
    moved = next((n for n in model.graph.node if x in n.output), None)
    if moved is None or moved.op_type != "Transpose" or perm(moved) != [0, 2, 1, 3]:
        return None
    b, h, s, d = dims
    return _joined(model, moved.input[0], [b, s, h, d], labels)


def _replace(model, chain, dims, rotation, opset, caches, labels) -> None:
    """chain.y as one RotaryEmbedding of x: [B, S, H*D] with num_heads (x [B, S, D] or
    [B, S, H, D], which was that where a Reshape split it so), or [B, H, S, D] as it is.
    `rotation` is the position axis and whether pairs are interleaved; `caches(put)` puts
    in the cos and sin caches [P, D/2] (arrays to hold as constants, or the names of
    values), and the position ids [B, S] they are read at (None: from position 0)."""
    seq, interleaved = rotation
    put = Placed(model.graph, chain.y)
    x = chain.x
    joined = _heads_first(model, x, dims, labels) if len(dims) == 4 and seq == 2 else None
    if joined is not None:  # [B, H, S, D] rotated as the [B, S, H D] it was split from
        b, h, s, d = dims
        dims, seq, x = [b, s, h, d], 1, joined
    three_d = len(dims) == 3 or seq == 1
    heads = 1 if len(dims) == 3 else dims[2 if seq == 1 else 1]
    if len(dims) == 4 and three_d and joined is None:
        x = _joined(model, x, dims, labels) or put.node(
            "Reshape", [x, put.constant("rows", np.array([0, 0, -1], np.int64))]
        )
    attrs = {"interleaved": int(interleaved), **({"num_heads": heads} if three_d else {})}
    cos, sin, ids = caches(put)
    if opset >= ROTARY_OPSET:
        if ids is None and isinstance(cos, np.ndarray):  # from 0: caches [B, S, D/2]
            cos, sin = (np.broadcast_to(p, (dims[0], *p.shape)) for p in (cos, sin))
        elif ids is None:
            first = np.tile(np.arange(dims[seq], dtype=np.int64), (dims[0], 1))
            ids = put.constant("positions", first)
        ins = [x, *_named(put, cos, sin), *([ids] if ids else [])]
        rotated = put.node("RotaryEmbedding", ins, **attrs)
    else:
        ids = ids or put.constant("position", np.array([0], np.int64))
        rotated = put.node("RotaryEmbedding", [x, ids, *_named(put, cos, sin)], domain=CONTRIB,
                           **attrs)  # fmt: skip
    import_emitted(model, {n.domain for n in put.nodes})
    if len(dims) == 4 and three_d:
        rotated = put.node("Reshape", [rotated, put.constant("shape", np.array(dims, np.int64))])
    if joined is not None:
        put.node("Transpose", [rotated], perm=[0, 2, 1, 3])
    put.done()
