"""What analysis finds in one graph: plain data, read by the rewrite and its rules."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx_graphsurgeon as gs

from .errors import Unsupported


@dataclass
class Analysis:
    """What analysis found in one graph.

    Attributes:
        complex: Tensor name -> its complex dtype, for every complex value.
        inputs: Names of complex graph inputs.
        initializers: Names of complex initializers.
        constants: Names of complex `Constant` node outputs.
        casts: Names of outputs of casts to a complex type.
        nodes: Nodes that touch a complex value, in topological order.
        unsupported: Nodes that receive a complex value and cannot be rewritten.
        came_from: Complex value -> (node, complex input) that made it, for the path
            from a complex source shown when a node is refused.
        subgraphs: For each `If`, `Loop` or `Scan` node that touches complex values,
            its subgraphs with their own analyses.
        tensors: The graph's tensors by name, as analysis read them; the rewrite
            starts from the same graph.
    """

    complex: dict[str, np.dtype] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    initializers: list[str] = field(default_factory=list)
    constants: list[str] = field(default_factory=list)
    casts: list[str] = field(default_factory=list)
    nodes: list[gs.Node] = field(default_factory=list)
    unsupported: list[Unsupported] = field(default_factory=list)
    came_from: dict[str, tuple[str, str]] = field(default_factory=dict)
    subgraphs: dict[str, list[tuple[gs.Graph, Analysis]]] = field(default_factory=dict)
    tensors: dict[str, gs.Tensor] = field(default_factory=dict, repr=False)

    def path(self, tensor: str, limit: int = 8) -> tuple[str, ...]:
        """Tensor and node names from a complex source to `tensor`, last `limit` hops."""
        steps = [tensor]
        seen = {tensor}
        while tensor in self.came_from and len(steps) < 2 * limit:
            node, tensor = self.came_from[tensor]
            if tensor in seen:
                break
            seen.add(tensor)
            steps += [node, tensor]
        if tensor in self.came_from:
            steps.append("...")
        return tuple(reversed(steps))

    @property
    def has_complex(self) -> bool:
        # A subgraph may hold complex values that never leave it; its node is listed.
        return bool(self.complex or self.nodes)

    def walk(self):
        """This analysis and those of every subgraph below it."""
        yield self
        for subs in self.subgraphs.values():
            for _, sub in subs:
                yield from sub.walk()
