"""Affine chains: the nodes that compute a value y affine in one real value x, found by
what they compute, not by how they are spelled (`carriers`, `chains`); and `Placed`,
the nodes that take a chain's place.

After the rewrite, a spectral filter, a rotation by a position table or an unrolled
linear recurrence is a chain of real ops affine in the one real signal x it starts
from, along x's last axis:

    y = x M^T + b         M: [..., N', N], one per channel where the weights differ

A target's forms read M and b off the chain (`probe`) and put a form of their own in
its place: one product (`fusion`), one RotaryEmbedding (`rotation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ...graphs import graphs_in, subgraphs
from ...shapes import declared_dims, infer_shapes
from ...tidy import fresh_name

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

SHAPE_ONLY = frozenset({"Shape", "Size"})
"""Ops that read a value's shape, never its elements."""

RANDOM = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                    "Multinomial", "Bernoulli"})  # fmt: skip
"""Ops whose output is no constant, though they may read none."""

FLOATS = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE})


def carriers(graph: onnx.GraphProto, given=frozenset()) -> dict[str, frozenset[str]]:
    """For every value of `graph` (nodes in order), the values it is affine in: a graph
    input carries itself, but those `given` (positions, read as constants); an
    initializer, a constant, and what is computed from them or from shapes alone carry
    nothing; a node's output carries its inputs' carriers
    where the op is affine in the inputs that carry any, and is a carrier itself where
    it is not (a nonlinear op, or a product of two carried values)."""
    carry: dict[str, frozenset[str]] = {
        i.name: frozenset() if i.name in given else frozenset({i.name}) for i in graph.input
    }
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


ROTATIONS = frozenset({"", "ai.onnx", "com.microsoft"})
"""The domains whose RotaryEmbedding is affine in its first input, given the caches and
the positions: a rotation a rule put in (a DCT's twiddles, say) stays inside a chain."""


def _affine_in(node: onnx.NodeProto, carried: list[int]) -> bool:
    op = node.op_type
    if op == "RotaryEmbedding" and node.domain in ROTATIONS:
        return carried == [0]
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


def is_dft(node: onnx.NodeProto, carry) -> str | None:
    """The one value a DFT's signal is affine in, or None."""
    source = carry[node.input[0]] if node.op_type == "DFT" else ()
    return next(iter(source)) if len(source) == 1 else None


def is_affine(node: onnx.NodeProto, carry) -> str | None:
    """The one value any node's output is affine in, or None (a node that is not
    affine in its inputs carries its own output)."""
    source = carry.get(node.output[0], frozenset()) if node.output else frozenset()
    x = next(iter(source)) if len(source) == 1 else None
    return None if x == node.output[0] else x


def chains(graph: onnx.GraphProto, anchor=is_dft, given=frozenset()) -> list[Chain]:
    """The chains of `graph` that hold an `anchor` node (a DFT by default), each from
    the one value x the anchor is affine in (`anchor(node, carriers)` names it, or gives
    None for a node that is no anchor) to a value that leaves the chain: a graph output,
    or the input of a node not affine in x. The graph inputs `given` are read as
    constants (`carriers`). None in a graph with subgraphs: their nodes may read any
    value."""
    if any(list(subgraphs(n)) for n in graph.node):
        return []
    carry = carriers(graph, given)
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
                nodes = computing(y, x, producer)
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


def computing(y: str, x: str, producer) -> list[onnx.NodeProto]:
    """The nodes that compute `y` from `x`, graph inputs, initializers and constants
    (`probe.chain_model` refuses the chain where they read a graph input but x)."""
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


def replace_chains(
    model: onnx.ModelProto, anchor, replace, least: int = 1, given=frozenset(), keep=None
) -> list[str]:
    """Calls `replace(model, chain, labels)` on each chain from an `anchor` node (see
    `chains`, with the inputs `given`) of at least `least` nodes, and that `keep(chain)`
    takes where given (`labels`: the inferred value infos, by value name), until every
    chain left has been given to it once; `replace` changes `model` in place and returns
    a note, or None where it leaves the chain. Returns the notes; none without
    onnxruntime, which reads the chains."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return []
    notes, tried = [], set()
    while True:  # a replaced chain may lie inside a longer one: found again on what is left
        found = [
            c for c in chains(model.graph, anchor, given)
            if (c.x, c.y) not in tried and len(c.nodes) >= least and (keep is None or keep(c))
        ]  # fmt: skip
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


def shared(graph: onnx.GraphProto, chain: Chain) -> bool:
    """Whether a value the chain computes, y aside, is read outside it (or is a graph
    output): its nodes would then stay beside the product."""
    inside = {id(n) for n in chain.nodes}
    made = {out for n in chain.nodes for out in n.output} - {chain.y}
    outputs = {o.name for o in graph.output}
    return bool(made & outputs) or any(
        id(n) not in inside and made.intersection(n.input) for n in graph.node
    )


def ends(chain: Chain, labels: dict) -> tuple[list, list, int] | None:
    """x's and y's dims (`shapes.declared_dims`) and their element type, where both have
    a rank of at least 1 and are floats of one type (a Cast between them would leave the
    product in the other); else None."""
    x, y = labels.get(chain.x), labels.get(chain.y)
    if x is None or y is None:
        return None
    x_dims, y_dims, elem = declared_dims(x), declared_dims(y), x.type.tensor_type.elem_type
    same = y.type.tensor_type.elem_type == elem
    return (x_dims, y_dims, elem) if x_dims and y_dims and elem in FLOATS and same else None


class Placed:
    """Nodes that compute `y` in the place of the node that now does, and the
    initializers they read, named after y. `done` puts them in: the old node then
    writes a value no one reads, for `drop_unused`. `lead`: the leading axes every
    value keeps (`reshape`)."""

    def __init__(self, graph: onnx.GraphProto, y: str, lead: int = 0):
        self.graph, self.y, self.nodes, self.lead = graph, y, [], lead
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

    def reshape(self, x: str, sizes: list[int]) -> str:
        """x as `sizes` past its `lead` leading axes, which it keeps."""
        shape = np.array([0] * self.lead + list(sizes), np.int64)
        return self.node("Reshape", [x, self.constant("shape", shape)])

    def done(self) -> None:
        """The last node writes y, in the place of the one that wrote it."""
        self.nodes[-1].output[0] = self.y
        last = next(i for i, node in enumerate(self.graph.node) if self.y in node.output)
        old = self.graph.node[last]
        old.output[list(old.output).index(self.y)] = self.fresh("unfused")
        for k, node in enumerate(self.nodes):
            self.graph.node.insert(last + k, node)


def drop_unused(graph: onnx.GraphProto) -> None:
    """Removes nodes none of whose outputs is read, and initializers no node reads: a
    value a subgraph reads (an If's branch, a Loop's body) is read."""
    inner = {name for node in graph.node for sub in subgraphs(node)
             for g in graphs_in(sub) for n in g.node for name in n.input}  # fmt: skip
    while True:
        read = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
        read |= inner
        dead = [i for i, node in enumerate(graph.node) if not read & set(node.output)]
        for i in reversed(dead):
            del graph.node[i]
        if not dead:
            break
    kept = [t for t in graph.initializer if t.name in read]
    del graph.initializer[:]
    graph.initializer.extend(kept)
