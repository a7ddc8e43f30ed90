"""Visit complex-touching nodes in topological order and hand each to its rule."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from .analysis import Analysis
from .constants import evaluate
from .context import Context
from .dtypes import real_of
from .files.stream import Streamed
from .graphs import is_default_domain
from .rules import patterns, registry


def _packed_shape(t: gs.Tensor) -> list | None:
    return None if t.shape is None else [*t.shape, 2]


def rewrite(
    graph: gs.Graph,
    analysis: Analysis,
    opset: int,
    mul_strategy: str = "auto",
    contrib: bool = False,
    streamed: Streamed | None = None,
    reciprocal_divides: bool = False,
    where_drops_negative_zero: bool = False,
) -> Context:
    """Rewrites every complex value of `graph` into packed-real form, in place.

    Complex graph inputs and outputs keep their names and dims, with a trailing 2.
    Rewritten nodes are detached; `tidy` removes what is left unused.

    Args:
        graph: A topologically sorted graph.
        analysis: The result of `analyze(graph)`, with nothing unsupported.
        opset: The default-domain opset of the model.
        mul_strategy: Passed to the context: "auto", "four" or "gauss".
        contrib: Whether onnxruntime's com.microsoft ops may be emitted.
        reciprocal_divides: Whether the runtime divides a / b as a (1 / b), so that
            no divisor may be subnormal (OpenVINO).
        where_drops_negative_zero: Whether the runtime's Where turns a -0 of its second
            input into +0 (onnxruntime's CPU).
        streamed: Where the forms of large complex initializers left on disk are
            made (see `stream`); None to read every initializer.

    Returns:
        The context, which holds the explanations and counts of what was done.
    """
    ctx = Context(
        graph, analysis, opset, mul_strategy, contrib, reciprocal_divides,
        where_drops_negative_zero, rewrite_graph=_rewrite_graph, streamed=streamed,
    )  # fmt: skip
    _rewrite_graph(ctx, graph, analysis)
    return ctx


def _rewrite_graph(ctx: Context, graph: gs.Graph, analysis: Analysis) -> None:
    """Rewrites `graph`, the main graph or a subgraph (`ctx.rewrite_subgraph`).

    A subgraph's captured complex values keep the forms its enclosing graph made (a
    conversion the subgraph needs is made inside it). Complex subgraph inputs and
    outputs become packed tensors, so that the node passes packed values in and
    out, and both If branches agree.
    """
    inputs = []
    for t in graph.inputs:
        if ctx.is_complex(t):
            packed = gs.Variable(t.name, dtype=ctx.real_dtype(t), shape=_packed_shape(t))
            ctx.set_packed(t, packed)
            inputs.append(packed)
        else:
            inputs.append(t)
    _rewrite_nodes(ctx, graph, analysis)
    graph.outputs = _bind_outputs(ctx, graph.outputs, {id(t) for t in inputs})
    graph.inputs = inputs


def _rewrite_nodes(ctx: Context, graph: gs.Graph, analysis: Analysis) -> None:
    """Hands each complex-touching node to its rule, in order. What a rule emits takes
    its node's place, so that a sorted graph mostly stays sorted (`tidy` sorts it only
    where it does not)."""
    tensors = analysis.tensors or graph.tensors()
    placed = _Placed(graph)
    start = placed.start()
    for name in analysis.initializers:
        ctx.set_initializer(tensors[name])
    placed.before(None, start)  # first of all
    for node in analysis.nodes:
        ctx.node = node
        start = placed.start()
        if not _fold(ctx, node):
            registry.get(node.op, node.domain or "").fn(ctx, node)
        placed.before(node, start)
    touched = {id(n) for n in analysis.nodes}
    for node in [n for n in graph.nodes if id(n) not in touched] + placed.emitted:
        if node.op == "Concat":  # a view_as_real
            start = placed.start()
            patterns.fold_view_as_real(ctx, [node])
            placed.before(node, start)
    ctx.node = None
    rewritten = {id(n) for n in analysis.nodes if id(n) not in ctx.kept}
    for node in analysis.nodes:
        if id(node) in rewritten:
            node.inputs.clear()
            node.outputs.clear()
    graph.nodes = [n for n in placed.nodes() if id(n) not in rewritten]


class _Placed:
    """The nodes emitted while each node of a graph was handled, set aside from the
    graph's list (the emitter appends there) to stand before that node."""

    def __init__(self, graph: gs.Graph):
        self.graph = graph
        self.placed: dict[int, list[gs.Node]] = {}
        self.emitted: list[gs.Node] = []  # in the order emitted

    def start(self) -> int:
        """Where the next node emitted will be."""
        return len(self.graph.nodes)

    def before(self, node: gs.Node | None, start: int) -> None:
        """Sets aside what was emitted since `start`, to stand before `node` (before every
        node, for None)."""
        nodes = self.graph.nodes
        if len(nodes) > start:
            new = nodes[start:]
            del nodes[start:]
            self.placed.setdefault(id(node), []).extend(new)
            self.emitted += new

    def nodes(self) -> list[gs.Node]:
        """The graph's nodes with what each one's handling emitted before it, at any
        depth (a node emitted may have emitted more while handled)."""
        out = []

        def put(node: gs.Node) -> None:
            for earlier in self.placed.get(id(node), ()):
                put(earlier)
            out.append(node)

        for node in [*self.placed.get(id(None), ()), *self.graph.nodes]:
            put(node)
        return out


# Data movement on a constant is done once, here, rather than at every run: a table
# reshaped for broadcasting stays a constant, and rules can see its values.
FOLDED = frozenset(
    {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Slice", "Concat",
     "Expand", "Tile", "Gather", "Split"}
)  # fmt: skip
MAX_FOLDED_ELEMENTS = 1 << 24


def _fold(ctx: Context, node: gs.Node) -> bool:
    """Computes a data-movement node whose inputs are all constants, in numpy."""
    if node.op not in FOLDED or not is_default_domain(node.domain):
        return False
    if not all(ctx.is_complex(t) for t in node.outputs):
        return False
    feeds = {}
    for t in node.inputs:
        value = ctx.constant(t) if t.name else np.array([])
        if value is None:
            return False
        feeds[t.name] = value
    feeds.pop("", None)
    proto = onnx.helper.make_node(
        node.op, [t.name for t in node.inputs], [t.name for t in node.outputs], **node.attrs
    )
    values = evaluate(proto, feeds, ctx.opset)
    if values is None:  # the rule will say what is wrong, if anything is
        return False
    if sum(v.size for v in values) > MAX_FOLDED_ELEMENTS:
        return False
    for t, value in zip(node.outputs, values, strict=True):
        ctx.set_constant(t, value)
    ctx.explain("data movement on a constant, done at rewrite time")
    return True


def _bind_outputs(ctx: Context, outputs: list[gs.Tensor], claimed: set[int]) -> list[gs.Tensor]:
    """The graph outputs after the rewrite: complex ones packed, under their names."""
    bound = []
    for t in outputs:
        if not ctx.is_complex(t):
            bound.append(t)
            continue
        packed = ctx.packed(t)  # a numpy array where the output is folded to a constant
        if isinstance(packed, gs.Tensor) and packed.name == t.name and id(packed) in claimed:
            # A graph input that is also an output, as in the original.
            bound.append(packed)
            continue
        # Rename the tensor that already holds the result, unless it is an input, a
        # constant, another output or made outside this graph: those need an Identity.
        made_here = (
            isinstance(packed, gs.Variable)
            and packed.inputs
            and id(packed.inputs[0]) in {id(n) for n in ctx.graph.nodes}
        )
        if made_here and id(packed) not in claimed:
            packed.name = t.name
        else:
            out = gs.Variable(t.name)
            ctx.emit("Identity", [packed], outputs=[out], name=ctx.unique(f"{t.name}_identity"))
            packed = out
        packed.dtype = real_of(ctx.dtype(t))
        packed.shape = _packed_shape(t)
        claimed.add(id(packed))
        bound.append(packed)
    return bound
