"""Node creation for one graph: fresh names, numpy inputs as constants, opset spellings.

Every node made for an original node is named after it, `{node}_{role}`, and every
name is new in the graph: the rewrite and the TensorRT lowering both emit here.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from .tidy import fresh_name


class Emitter:
    """Appends nodes to one graph.

    Attributes:
        graph: The graph nodes are appended to.
        opset: The default-domain opset, which picks attribute or input spellings.
        node: The original node being replaced; default names start with its name.
        count: How many nodes were emitted.

    The names taken are `names` (shared with a parent graph's emitter), else those of
    `graph`'s tensors (`tensors`: `graph.tensors()`, where the caller has it) and nodes.
    """

    def __init__(
        self,
        graph: gs.Graph,
        opset: int,
        names: set[str] | None = None,
        tensors: dict[str, gs.Tensor] | None = None,
    ):
        self.graph = graph
        self.opset = opset
        self.node: gs.Node | None = None
        self.count = 0
        if names is None:
            names = set(graph.tensors() if tensors is None else tensors)
            names.update(n.name for n in graph.nodes)
        self._names = names

    def child(self, graph: gs.Graph) -> Emitter:
        """An emitter for a subgraph of this graph: names stay unique across both."""
        self._names.update(graph.tensors().keys())
        return Emitter(graph, self.opset, self._names)

    def unique(self, base: str) -> str:
        """`base`, or `base_1`, `base_2`, ... : the first name not yet in the graph."""
        return fresh_name(base, self._names)

    def fresh(self, role: str) -> str:
        """A new name for a tensor of the running node: `{node}_{role}`."""
        return self.unique(f"{self._prefix()}_{role}")

    def _prefix(self) -> str:
        if self.node is None:
            raise RuntimeError("emit() outside a rule needs an explicit name")
        return self.node.name

    def constant(self, value: np.ndarray, role: str = "c") -> gs.Constant:
        """`value` as a new constant of the running node, named `{node}_{role}`."""
        return gs.Constant(self.fresh(role), value)

    def emit(
        self,
        op: str,
        inputs: list,
        attrs: dict | None = None,
        *,
        outputs: int | list[gs.Tensor] = 1,
        name: str | None = None,
        domain: str = "",
    ):
        """Appends one node; numpy inputs become initializers.

        Args:
            op: The ONNX op type.
            inputs: Tensors, numpy arrays, or None for an omitted optional input.
            attrs: Node attributes.
            outputs: How many new outputs to make, or the exact tensors to produce
                (a rule passes an original real output to keep its name).
            name: The node name; by default `{node}_{op}` for the running node.
            domain: The op's domain; the default one when empty.

        Returns:
            The output tensor when `outputs` is 1, else the list of outputs.
        """
        node_name = self.unique(name or f"{self._prefix()}_{op.lower()}")
        ins = []
        for x in inputs:
            if x is None:
                ins.append(gs.Variable.empty())
            elif isinstance(x, np.ndarray):
                ins.append(gs.Constant(self.unique(f"{node_name}_c"), x))
            else:
                ins.append(x)
        if isinstance(outputs, int):
            if outputs == 1:
                outs = [gs.Variable(self.unique(node_name))]
            else:
                outs = [gs.Variable(self.unique(f"{node_name}_{i}")) for i in range(outputs)]
        else:
            outs = list(outputs)
        self.graph.nodes.append(
            gs.Node(op, node_name, dict(attrs or {}), ins, outs, domain=domain or None)
        )
        self.count += 1
        return outs[0] if isinstance(outputs, int) and outputs == 1 else outs

    def bind(self, out: gs.Tensor, value) -> None:
        """Makes tensor `out` hold `value`.

        A fresh result of an emitted node is produced under `out`'s name directly;
        anything else (an input, a constant, a shared tensor) is copied by Identity.
        """
        if (
            isinstance(value, gs.Variable)
            and len(value.inputs) == 1
            and not value.outputs
            and value not in self.graph.outputs
        ):
            producer = value.inputs[0]
            producer.outputs[producer.outputs.index(value)] = out
        else:
            self.emit("Identity", [value], outputs=[out])

    # ---- ops whose spelling depends on the opset ---------------------------------------

    def with_axes(self, op: str, x, axes, since: int, attrs: dict | None = None, name=None):
        """`op` with `axes` as an input (from opset `since`) or an attribute (before)."""
        attrs = dict(attrs or {})
        if axes is None:
            return self.emit(op, [x], attrs or None, name=name)
        axes = [int(a) for a in axes]
        if self.opset >= since:
            return self.emit(op, [x, np.array(axes, np.int64)], attrs or None, name=name)
        return self.emit(op, [x], {"axes": axes, **attrs}, name=name)

    def split_halves(self, x, axis: int, name: str | None = None):
        """Two equal halves of `x` along `axis` (num_outputs is required from opset 18)."""
        attrs = {"axis": axis, "num_outputs": 2} if self.opset >= 18 else {"axis": axis}
        return self.emit("Split", [x], attrs, outputs=2, name=name)
