"""Graph cleanup, run once after all rules rather than once per rule."""

from __future__ import annotations

import onnx_graphsurgeon as gs


def name_nodes(graph: gs.Graph) -> None:
    """Gives every unnamed node a stable name, `{op}_{index}`, so emitted names are stable."""
    taken = {n.name for n in graph.nodes if n.name}
    for i, node in enumerate(graph.nodes):
        if node.name:
            continue
        name, k = f"{node.op}_{i}", 0
        while name in taken:
            k += 1
            name = f"{node.op}_{i}_{k}"
        node.name = name
        taken.add(name)


def tidy(graph: gs.Graph) -> gs.Graph:
    """Removes what the rewrite left unused and sorts nodes topologically."""
    return graph.cleanup(remove_unused_graph_inputs=False).toposort()
