"""Complex matrix products written on their parts, as products of real block matrices.

An exporter with no complex type (jax2onnx) writes each complex product Z = A C on
parts, as four real products and two sums:

    Zr = Ar Cr - Ai Ci,    Zi = Ar Ci + Ai Cr

A complex matrix X is the real matrix B(X) = [[Xr, -Xi], [Xi, Xr]], and

    B(A C) = B(A) B(C),    B(X + Y) = B(X) + B(Y),    B(X - Y) = B(X) - B(Y)

so a run of such products, and of sums of their parts (Newton-Schulz's
X <- X (2I - R X), a matrix power), takes one real MatMul per product and one node per
sum, on matrices of twice the size:

    B(A) = Concat(Concat(Ar, -Ai; -1), Concat(Ai, Ar; -1); -2)     # entering: 4 nodes
    Zr = B(Z)[..., :m, :n],    Zi = B(Z)[..., m:, :n]               # leaving: a Slice each

Both identities hold for any real tensors Ar, Ai, Cr, Ci, so the reading needs no
check beyond the nodes' shapes. The block product does twice the multiply-adds of the
four, so a run is replaced only where it costs less (`fusion.COST`: multiply-adds, and
a dispatch per node): where the matrices are small and the nodes' dispatch is most of
the time. Parts computed from constants alone enter for nothing: runtimes fold them.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from ...emit import Emitter
from ...graphs import default_opset
from ...shapes import infer_shapes, static
from .fusion import COST

Pair = tuple[gs.Tensor, gs.Tensor]
"""(re, im) of one complex value, as two real tensors."""

SUMS = frozenset({"Add", "Sub"})


@dataclass
class _Op:
    """One complex op on parts: a product ("MatMul") or a sum ("Add", "Sub") of the
    pairs `ins`, giving `out`, computed by `nodes`."""

    op: str
    ins: tuple[Pair, Pair]
    out: Pair
    nodes: list[gs.Node]


@dataclass
class _Run:
    """Ops joined by the pairs they pass, in graph order."""

    ops: list[_Op] = field(default_factory=list)


def _key(pair: Pair) -> tuple[str, str]:
    return pair[0].name, pair[1].name


def _matrix(t: gs.Tensor) -> list[int] | None:
    """t's dims where all are static and there are at least two."""
    shape = t.shape
    if not static(shape) or len(shape) < 2:
        return None
    return list(shape)


def _sole_product(t: gs.Tensor, outputs: set[str]) -> gs.Node | None:
    """The MatMul that writes t, where it alone reads t's nodes' output."""
    if len(t.inputs) != 1 or len(t.outputs) != 1 or t.name in outputs:
        return None
    node = t.inputs[0]
    return node if node.op == "MatMul" else None


def _products(graph: gs.Graph, outputs: set[str], main: Set[int]) -> list[_Op]:
    """Every Zr = Ar Cr - Ai Ci beside Zi = Ar Ci + Ai Cr, on matrices of static shape,
    its sum among the `main` graph's nodes (a subgraph's read values, but stay there)."""
    by_operands = {(n.inputs[0].name, n.inputs[1].name): n for n in graph.nodes if n.op == "MatMul"}
    found = []
    for sub in graph.nodes:
        if sub.op != "Sub":
            continue
        p1, p2 = (_sole_product(t, outputs) for t in sub.inputs)
        if p1 is None or p2 is None:
            continue
        (ar, cr), (ai, ci) = p1.inputs, p2.inputs
        p3, p4 = by_operands.get((ar.name, ci.name)), by_operands.get((ai.name, cr.name))
        if p3 is None or p4 is None or len({id(p) for p in (p1, p2, p3, p4)}) < 4:
            continue
        if any(_sole_product(p.outputs[0], outputs) is None for p in (p3, p4)):
            continue
        add = p3.outputs[0].outputs[0]
        summed = {p3.outputs[0].name, p4.outputs[0].name}
        if id(add) not in main or add.op != "Add" or {t.name for t in add.inputs} != summed:
            continue
        a, c = _matrix(ar), _matrix(cr)
        if a is None or c is None or a != _matrix(ai) or c != _matrix(ci) or ar is ai:
            continue
        pairs = ((ar, ai), (cr, ci))
        found.append(
            _Op("MatMul", pairs, (sub.outputs[0], add.outputs[0]), [p1, p2, p3, p4, sub, add])
        )
    return found


def _sums(known: list[Pair], claimed: set[int], main: Set[int]) -> list[_Op]:
    """Add and Sub of a pair in `known` (and of those they give) with another pair, part
    by part, on equal static shapes: X + Y as (Xr + Yr, Xi + Yi); only the `main` graph's
    nodes (a subgraph's read the parts, which leave the run for them)."""
    found, todo, seen = [], list(known), {_key(p) for p in known}
    while todo:
        re, im = todo.pop()
        for node_re in re.outputs:
            if node_re.op not in SUMS or id(node_re) in claimed or id(node_re) not in main:
                continue
            at = next(k for k, t in enumerate(node_re.inputs) if t is re)
            for node_im in im.outputs:
                if (
                    node_im.op != node_re.op
                    or id(node_im) in claimed
                    or id(node_im) not in main
                    or node_im.inputs[at] is not im
                ):
                    continue
                other = (node_re.inputs[1 - at], node_im.inputs[1 - at])
                out = (node_re.outputs[0], node_im.outputs[0])
                shapes = [_matrix(t) for t in (re, im, *out)]
                if shapes[0] is None or any(s != shapes[0] for s in shapes):
                    continue  # the other pair broadcasts into these (`_Blocks.of`)
                ins = ((re, im), other) if at == 0 else (other, (re, im))
                found.append(_Op(node_re.op, ins, out, [node_re, node_im]))
                claimed |= {id(node_re), id(node_im)}
                if _key(out) not in seen:
                    seen.add(_key(out))
                    todo.append(out)
                break
    return found


def _runs(ops: list[_Op], order: dict[int, int]) -> list[_Run]:
    """The ops joined by the pairs one gives and another reads, each run in graph order."""
    parent = list(range(len(ops)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    giver = {_key(op.out): k for k, op in enumerate(ops)}
    for k, op in enumerate(ops):
        for pair in op.ins:
            if _key(pair) in giver:
                parent[root(k)] = root(giver[_key(pair)])
    runs: dict[int, _Run] = {}
    for k in sorted(range(len(ops)), key=lambda k: max(order[id(n)] for n in ops[k].nodes)):
        runs.setdefault(root(k), _Run()).ops.append(ops[k])
    return list(runs.values())


def _constant(t: gs.Tensor, memo: dict[str, bool]) -> bool:
    """Whether t is computed from initializers and constants alone (walked without
    recursion: a long chain before a run would pass Python's limit)."""
    todo = [t]
    while todo:
        top = todo[-1]
        if top.name in memo:
            todo.pop()
            continue
        if isinstance(top, gs.Constant):
            memo[top.name] = True
        elif len(top.inputs) != 1 or top.inputs[0].op.startswith("Random"):
            memo[top.name] = False  # a graph input, or no constant
        else:
            waiting = [i for i in top.inputs[0].inputs if i.name and i.name not in memo]
            if waiting:
                todo.extend(waiting)
                continue
            memo[top.name] = all(memo[i.name] for i in top.inputs[0].inputs if i.name)
        todo.pop()
    return memo[t.name]


def _flops(op: _Op) -> int:
    """The multiply-adds of a product's four real MatMuls."""
    (a, _), (c, _) = op.ins
    *lead, m, k = a.shape
    return 4 * int(np.prod(lead, dtype=np.int64)) * m * k * c.shape[-1]


def _read_outside(t: gs.Tensor, inside: set[int], outputs: set[str]) -> bool:
    return t.name in outputs or any(id(n) not in inside for n in t.outputs)


def _worth(run: _Run, outputs: set[str], memo: dict[str, bool]) -> bool:
    """Whether the run's blocks, with the nodes that enter and leave them, cost less
    than its nodes (`fusion.COST`); both sides are counted node by node."""
    node = COST["node"]
    inside = {id(n) for op in run.ops for n in op.nodes}
    given = {_key(op.out) for op in run.ops}
    now = sum(node * len(op.nodes) + (_flops(op) if op.op == "MatMul" else 0) for op in run.ops)
    then = sum(node + (2 * _flops(op) if op.op == "MatMul" else 0) for op in run.ops)
    entering = {_key(p): p for op in run.ops for p in op.ins if _key(p) not in given}
    then += node * 4 * sum(not all(_constant(t, memo) for t in p) for p in entering.values())
    leaving = [t for op in run.ops for t in op.out if _read_outside(t, inside, outputs)]
    then += node * len(leaving)
    return then < now


class _Blocks:
    """The block matrices of the pairs of one graph, made once each (a constant pair's in
    numpy), their nodes put in by `emit` (`Emitter`: fresh names, numpy inputs as
    constants)."""

    def __init__(self, emit: Emitter):
        self.emit = emit
        self.made: dict[tuple, gs.Tensor] = {}

    def of(self, pair: Pair, shape: list[int]) -> gs.Tensor:
        """B(X) = [[Xr, -Xi], [Xi, Xr]] over the last two axes, X broadcast to `shape`
        where it is smaller (a sum's other operand)."""
        key = _key(pair) if _matrix(pair[0]) == shape else (*_key(pair), *shape)
        if key not in self.made:
            self.made[key] = self._entered(pair, shape)
        return self.made[key]

    def _entered(self, pair: Pair, shape: list[int]) -> gs.Tensor:
        re, im = pair
        base = f"{re.name}_block"
        if isinstance(re, gs.Constant) and isinstance(im, gs.Constant):
            r, i = (np.broadcast_to(t.values, shape) for t in pair)
            block = np.concatenate([np.concatenate([r, -i], -1), np.concatenate([i, r], -1)], -2)
            return gs.Constant(self.emit.unique(base), block)  # one initializer, however read
        if any(_matrix(t) != shape for t in pair):
            dims = np.array(shape, np.int64)
            re, im = (self.emit.emit("Expand", [t, dims], name=f"{t.name}_expanded") for t in pair)
        minus = self.emit.emit("Neg", [im], name=f"{im.name}_negated")
        top = self.emit.emit("Concat", [re, minus], {"axis": -1}, name=f"{base}_top")
        bottom = self.emit.emit("Concat", [im, re], {"axis": -1}, name=f"{base}_bottom")
        return self.emit.emit("Concat", [top, bottom], {"axis": -2}, name=base)

    def give(self, op: _Op) -> None:
        """The op on blocks: its out pair's block."""
        if op.op == "MatMul":
            ins = [self.of(p, _matrix(p[0])) for p in op.ins]
        else:
            ins = [self.of(p, _matrix(op.out[0])) for p in op.ins]
        self.made[_key(op.out)] = self.emit.emit(op.op, ins, name=f"{op.out[0].name}_block")

    def leave(self, t: gs.Tensor, block: gs.Tensor, half: int) -> None:
        """t, the real (`half` 0) or imaginary (1) part, sliced from its block; the node
        that wrote it no longer does."""
        m, n = t.shape[-2:]
        starts, ends = np.array([half * m, 0], np.int64), np.array([(half + 1) * m, n], np.int64)
        t.inputs.clear()
        self.emit.emit("Slice", [block, starts, ends, np.array([-2, -1], np.int64)],
                       name=f"{t.name}_slice", outputs=[t])  # fmt: skip


def _may_hold_products(graph: onnx.GraphProto) -> bool:
    """Whether a Sub reads two MatMuls' outputs: the model is worth reading as a graph."""
    made = {out for node in graph.node if node.op_type == "MatMul" for out in node.output}
    return any(n.op_type == "Sub" and set(n.input) <= made for n in graph.node)


def blocks(model: onnx.ModelProto) -> list[str]:
    """Puts block products in the place of each run of complex products on parts that
    costs less as blocks (see the module's docstring); edits `model` in place. Returns
    one note per run."""
    if not _may_hold_products(model.graph):
        return []
    try:
        inferred = infer_shapes(model)
    except Exception:  # onnx raises several types: the parts' shapes are unknown
        return []
    graph = gs.import_onnx(inferred)
    outputs = {t.name for t in graph.outputs}
    order = {id(n): k for k, n in enumerate(graph.nodes)}  # the main graph's nodes
    products = _products(graph, outputs, order.keys())
    if not products:
        return []
    claimed = {id(n) for op in products for n in op.nodes}
    ops = products + _sums([op.out for op in products], claimed, order.keys())
    put, memo, notes = _Blocks(Emitter(graph, default_opset(model) or 1)), {}, []
    for run in _runs(ops, order):
        if not any(op.op == "MatMul" for op in run.ops) or not _worth(run, outputs, memo):
            continue
        inside = {id(n) for op in run.ops for n in op.nodes}
        for op in run.ops:
            put.give(op)
        for op in run.ops:
            for half, t in enumerate(op.out):
                if _read_outside(t, inside, outputs):
                    put.leave(t, put.made[_key(op.out)], half)
        products = sum(op.op == "MatMul" for op in run.ops)
        size = 2 * run.ops[0].ins[0][0].shape[-2]
        notes.append(
            f"{products} complex products on parts ({sum(len(op.nodes) for op in run.ops)} "
            f"nodes, the first giving {run.ops[0].out[0].name}) as {len(run.ops)} products "
            f"and sums of real block matrices, the first {size} rows high"
        )
    if notes:
        graph.cleanup().toposort()
        exported = gs.export_onnx(graph, do_type_check=False)
        model.graph.CopyFrom(exported.graph)
    return notes
