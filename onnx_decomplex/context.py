"""The one object rules talk to (`rules.protocol.RuleContext`).

It puts three parts behind one name: the forms of each complex value (`forms`),
node creation (`emit`), and the ops on parts that fold constants (`ops`, which it
is). Rules read `ctx.pair(x)`, `ctx.emit(...)` and `ctx.add(a, b)` alike.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx_graphsurgeon as gs

from .analysis import Analysis
from .emit import Emitter
from .files.stream import Streamed
from .forms import Forms
from .ops import Ops

GraphRewrite = Callable[["Context", gs.Graph, Analysis], None]

# What rules ask of the forms (see `Forms`), under the names rules know them by.
FROM_FORMS = (
    "is_complex", "dtype", "real_dtype", "constant", "set_constant", "alias",
    "packed", "pair", "real_part", "real", "as_pair", "as_packed", "pack_parts",
    "zeros_like", "set_packed", "set_pair", "set_parts", "known_zero_parts",
    "has_known_zero", "has_packed", "prefers_pair", "set_initializer",
)  # fmt: skip


class Context(Ops):
    """Rewrite state for one graph. Rules get it as their first argument.

    Attributes:
        graph: The graph being rewritten; emitted nodes are appended to it.
        analysis: Which values are complex.
        opset: The default-domain opset, which picks attribute or input spellings.
        mul_strategy: How products of two runtime complex operands are formed:
            "four", "gauss" (three products), or "auto".
        contrib: Whether onnxruntime's own ops (domain com.microsoft) may be
            emitted: the target is onnxruntime.
        reciprocal_divides: Whether the target's runtime divides a / b as a (1 / b)
            (OpenVINO): the formulas then divide by no subnormal (`cmath._Divisor`).
        where_drops_negative_zero: Whether the target's runtime's Where turns a -0 of its
            second input into +0 (onnxruntime's CPU): `Ops.where_signed` works round it.
        forms: The forms of every complex value.
        explanations: One line per rewrite, shown with `-v`.
        kept: Ids of nodes their rule changed in place, which stay in the graph.
    """

    def __init__(
        self,
        graph: gs.Graph,
        analysis: Analysis,
        opset: int,
        mul_strategy: str = "auto",
        contrib: bool = False,
        reciprocal_divides: bool = False,
        where_drops_negative_zero: bool = False,
        *,
        rewrite_graph: GraphRewrite | None = None,
        parent: Context | None = None,
        streamed: Streamed | None = None,
    ):
        if parent is not None:
            emitter = parent.emitter.child(graph)
        else:  # the tensors analysis read
            emitter = Emitter(graph, opset, tensors=analysis.tensors or None)
        super().__init__(emitter, analysis.complex)
        self.graph = graph
        self.analysis = analysis
        self.opset = opset
        self.mul_strategy = mul_strategy
        self.contrib = contrib
        self.reciprocal_divides = reciprocal_divides
        self.where_drops_negative_zero = where_drops_negative_zero
        self.explanations: list[str] = []
        self.kept: set[int] = set()
        self._own: tuple[set[int], set[int]] | None = None  # see `readers`
        self._rewrite_graph = rewrite_graph
        forms = (
            Forms(self, analysis.complex, streamed) if parent is None else parent.forms.child(self)
        )
        self.forms = forms
        for name in FROM_FORMS:
            setattr(self, name, getattr(forms, name))
        self.unique, self.set_real = emitter.unique, emitter.bind

    def child(self, graph: gs.Graph, analysis: Analysis) -> Context:
        """A context for a branch of `graph`: it sees every form made so far, and
        what it makes stays in the branch. Names stay unique across both."""
        return Context(
            graph, analysis, self.opset, self.mul_strategy, self.contrib,
            self.reciprocal_divides, self.where_drops_negative_zero,
            rewrite_graph=self._rewrite_graph, parent=self,
        )  # fmt: skip

    def rewrite_subgraph(self, graph: gs.Graph, analysis: Analysis) -> None:
        """Rewrites an `If` branch or a `Loop`/`Scan` body of the running node in place,
        with the forms this graph has made."""
        if self._rewrite_graph is None:
            raise RuntimeError("this context rewrites no subgraphs")
        ctx = self.child(graph, analysis)
        self._rewrite_graph(ctx, graph, analysis)
        self.explanations.extend(ctx.explanations)
        self.emitter.count += ctx.emitter.count

    def body_ops(self, graph: gs.Graph) -> Ops:
        """Ops that emit into `graph`, a body the running node's rule builds (a Loop's),
        named after the running node, names unique across both graphs."""
        ops = Ops(self.emitter.child(graph), {})
        ops.emitter.node = self.node
        return ops

    @property
    def node(self) -> gs.Node | None:
        """The node whose rule is running; emitted names start with its name."""
        return self.emitter.node

    @node.setter
    def node(self, node: gs.Node | None) -> None:
        self.emitter.node = node

    @property
    def emitted(self) -> int:
        """How many nodes were emitted."""
        return self.emitter.count

    def keep(self, node: gs.Node) -> None:
        """Keeps the running node in the graph (its rule changed it in place)."""
        self.kept.add(id(node))

    def explain(self, message: str) -> None:
        """Notes what the running rule did, for `-v`."""
        self.explanations.append(f"{self.node.name} ({self.node.op}): {message}")

    # ---- facts about original tensors --------------------------------------------------

    def shape(self, t: gs.Tensor) -> list | None:
        """The logical shape known for `t` (ints, dim names or None), or None."""
        if isinstance(t, gs.Constant):
            return list(t.shape)
        return list(t.shape) if t.shape is not None else None

    def rank(self, t: gs.Tensor) -> int | None:
        """The number of dims of `t`, when known."""
        shape = self.shape(t)
        return None if shape is None else len(shape)

    def broadcasts_into(self, small: gs.Tensor, big: gs.Tensor) -> bool:
        """True when broadcasting `small` against `big` provably keeps `big`'s shape."""
        s, b = self.shape(small), self.shape(big)
        if s is None or b is None or len(s) > len(b):
            return False
        for ds, db in zip(reversed(s), reversed(b), strict=False):
            if ds == 1 or (ds is not None and ds == db):
                continue
            return False
        return True

    def gauss(self, op: str, small: bool = False) -> bool:
        """Whether products of two runtime complex operands of `op` use three products.

        "auto" takes three where a product is a contraction, which saves a whole
        real product, and keeps four for elementwise Mul, where three save little
        time and lose accuracy (Gauss's form subtracts products of sums); and four
        for a `small` product (`rules.linalg.SMALL_MATMUL`), whose time is its nodes'
        dispatch: the targets run a run of those as products of block matrices
        (`targets.common.blocks`).
        """
        if self.mul_strategy == "auto":
            return op != "Mul" and not small
        return self.mul_strategy == "gauss"

    def readers(self, t: gs.Tensor) -> list[gs.Node] | None:
        """The nodes of this graph that read `t`, each once (`Mul(t, t)` reads it twice);
        None where `t` is this graph's output or a subgraph's node reads it, which a rule
        may not change. The graph's nodes and outputs are read once, at the first call: a
        node emitted since counts as another graph's, so the answer errs towards None."""
        if self._own is None:
            self._own = {id(n) for n in self.graph.nodes}, {id(o) for o in self.graph.outputs}
        nodes, outputs = self._own
        if id(t) in outputs:
            return None
        readers = list({id(n): n for n in t.outputs}.values())
        return readers if all(id(n) in nodes for n in readers) else None
