"""Walking a model's graphs, If/Loop/Scan bodies included, and the default domain.

Every graph a node holds is an attribute of type GRAPH (If's branches, Loop's and
Scan's bodies) or GRAPHS; the walks below go through them at any depth, in node
order, a graph before the graphs inside it.

ONNX spells its default domain "" or "ai.onnx"; onnx-graphsurgeon gives a node of
it the domain None. A DFT's axis moved from an attribute to an input at opset 20;
`dft_axis` reads either.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import AttributeProto
from onnx_graphsurgeon.importers.onnx_importer import OnnxImporter

DEFAULT_DOMAINS = frozenset({"", "ai.onnx"})
"""The spellings of the default ONNX domain."""


def is_default_domain(domain: str | None) -> bool:
    """True for the default ONNX domain, however it is spelled ("", "ai.onnx", None)."""
    return (domain or "") in DEFAULT_DOMAINS


def default_opset(model: onnx.ModelProto) -> int | None:
    """The version of the default domain that `model` imports, or None."""
    return next((o.version for o in model.opset_import if is_default_domain(o.domain)), None)


def dft_axis(opset: int, rank: int, given=None, attribute: int | None = None) -> int:
    """A DFT's transform axis, counted from 0 in its signal of `rank` (the (re, im) axis
    included): from opset 20 the `axis` input's value `given` (-2 where absent), before
    it the `axis` attribute (1 where absent)."""
    if opset >= 20:
        axis = -2 if given is None or not np.size(given) else int(np.reshape(given, ()))
    else:
        axis = 1 if attribute is None else int(attribute)
    return axis + rank if axis < 0 else axis


def opset_versions(model: onnx.ModelProto) -> dict[str, int]:
    """Every domain `model` imports, with its version; the default one spelled ""."""
    return {"" if is_default_domain(o.domain) else o.domain: o.version for o in model.opset_import}


def topologically_sorted(graph: onnx.GraphProto) -> bool:
    """Whether every node comes after the producers of its inputs, and none holds a
    subgraph (whose outer references a sort must follow too): then a sort of the graph
    can be spared. The ONNX checker asks this of every model, so a model read passes."""
    known = {v.name for v in graph.input} | {t.name for t in graph.initializer} | {""}
    for node in graph.node:
        if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in node.attribute):
            return False
        if not known.issuperset(node.input):
            return False
        known.update(node.output)
    return True


def gs_sorted(graph: gs.Graph) -> bool:
    """`topologically_sorted` for onnx-graphsurgeon's graph: a sort can be spared."""
    made = set()
    for node in graph.nodes:
        if gs_holds_graphs(node):
            return False
        for t in node.inputs:
            if t.inputs and id(t) not in made:
                return False
        made.update(id(t) for t in node.outputs)
    return True


_GRAPH, _GRAPHS = AttributeProto.GRAPH, AttributeProto.GRAPHS


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    """The graphs `node` holds directly: If's branches, Loop's and Scan's bodies."""
    for attr in node.attribute:
        kind = attr.type
        if kind == _GRAPH:
            yield attr.g
        elif kind == _GRAPHS:
            yield from attr.graphs


def graphs_in(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """`graph` and every subgraph in it, at any depth."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:  # `subgraphs`, without a generator per node
            kind = attr.type
            if kind == _GRAPH:
                yield from graphs_in(attr.g)
            elif kind == _GRAPHS:
                for sub in attr.graphs:
                    yield from graphs_in(sub)


def graph_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node of `graph`, subgraphs' included."""
    for g in graphs_in(graph):
        yield from g.node


def node_label(node: onnx.NodeProto, where: str = "") -> str:
    """How messages name a node: `node 'name' (Op)`, after where its graph is."""
    return f"{where}node '{node.name}' ({node.op_type})"


def labeled_graphs(
    graph: onnx.GraphProto, where: str = ""
) -> Iterator[tuple[onnx.GraphProto, str]]:
    """`graph` and every subgraph in it, each with the prefix that names where it is in
    messages: `where` for `graph`, then `node 'loop' (Loop) body: ` for a body, nested
    bodies' prefixes one after the other."""
    yield graph, where
    for node in graph.node:
        for attr in node.attribute:  # `node_graphs` only for a node with a body
            if attr.type in (_GRAPH, _GRAPHS):
                yield from node_graphs(node, where)
                break


def node_graphs(node: onnx.NodeProto, where: str = "") -> Iterator[tuple[onnx.GraphProto, str]]:
    """The graphs in `node`, at any depth, labeled as `labeled_graphs` labels them."""
    for sub in subgraphs(node):
        yield from labeled_graphs(sub, f"{node_label(node, where)} body: ")


def gs_holds_graphs(node: gs.Node) -> bool:
    """Whether onnx-graphsurgeon's `node` holds a graph (a branch or a body)."""
    for value in node.attrs.values():  # noqa: SIM110 (asked of every node: no generator)
        if isinstance(value, gs.Graph):
            return True
    return False


def gs_graphs(graph: gs.Graph) -> list[gs.Graph]:
    """`graph` and every subgraph in it, at any depth (onnx-graphsurgeon's graphs)."""
    found = [graph]
    for n in graph.nodes:
        if gs_holds_graphs(n):
            found += n.subgraphs(recursive=True)
    return found


def label(
    graph: gs.Graph, model: onnx.ModelProto, tensors: dict[str, gs.Tensor] | None = None
) -> None:
    """Gives the variables of `graph` the dtype, shape and type that
    `gs.import_onnx(model)` gives them, where `graph` was imported from a model with
    the same nodes and other value_info (`model` after shape inference, say): one
    import serves both. For a graph whose nodes hold no graphs.

    graphsurgeon labels a value from its first value_info, filling what that leaves
    open from later ones, then from the graph's inputs and outputs; a value named in
    none has no label. `tensors` is `graph.tensors()`, where the caller has it already.
    """
    p = model.graph
    constants = {t.name for t in p.initializer} | {t.values.name for t in p.sparse_initializer}
    read: dict[bytes, tuple] = {}  # one import of each type: a stack of like layers repeats

    def labels_of(v: onnx.ValueInfoProto) -> tuple:
        key = v.type.SerializeToString()
        if key not in read:
            t = OnnxImporter.import_tensor(v)
            read[key] = (t.dtype, t.shape, t.type)
        return read[key]

    found: dict[str, tuple] = {}
    for v in p.value_info:
        if v.name in constants:
            continue
        new = labels_of(v)
        old = found.get(v.name)
        # graphsurgeon's own merge, `or` and all
        found[v.name] = new if old is None else (old[0] or new[0], old[1] or new[1], old[2])
    for v in [*p.input, *p.output]:
        if v.name not in found and v.name not in constants:
            found[v.name] = labels_of(v)
    unlabeled = (None, None, "tensor_type")
    for t in (graph.tensors() if tensors is None else tensors).values():
        if isinstance(t, gs.Variable):
            dtype, shape, kind = found.get(t.name, unlabeled)
            t.dtype, t.shape, t.type = dtype, None if shape is None else list(shape), kind
