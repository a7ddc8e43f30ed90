"""Graph cleanup, run once after all rules rather than once per rule."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from .graphs import graphs_in, gs_graphs, gs_holds_graphs, gs_sorted
from .shapes import static


def fresh_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_1`, `base_2`, ... : the first name not in `taken`, which takes it."""
    name, i = base, 0
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    taken.add(name)
    return name


def name_nodes(graph: gs.Graph) -> None:
    """Gives every unnamed node, in subgraphs too, a stable name, `{op}_{index}`, so
    emitted names are stable."""
    graphs = gs_graphs(graph)
    taken = {n.name for g in graphs for n in g.nodes if n.name}
    for g in graphs:
        for i, node in enumerate(g.nodes):
            if node.name:
                continue
            name, k = f"{node.op}_{i}", 0
            while name in taken:
                k += 1
                name = f"{node.op}_{i}_{k}"
            node.name = name
            taken.add(name)


def _unlink_unused(graph: gs.Graph) -> bool:
    """Takes out the nodes no graph output needs, unlinking each by identity.

    graphsurgeon's cleanup unlinks a node from each of its tensors with `list.remove`,
    which compares nodes by value: on a large rewrite, a third of its time. What it
    finds afterwards is the same, so its own subgraph handling stands where a node
    holds one (this leaves such graphs to it).
    """
    if any(gs_holds_graphs(n) for n in graph.nodes):
        return
    needed, stack = set(), [t for t in graph.outputs]
    seen = {id(t) for t in stack}
    while stack:
        for node in stack.pop().inputs:
            if id(node) in needed:
                continue
            needed.add(id(node))
            for t in node.inputs:
                if id(t) not in seen:
                    seen.add(id(t))
                    stack.append(t)
    unused = [n for n in graph.nodes if id(n) not in needed]
    if not unused:
        return True
    gone = {id(n) for n in unused}
    touched = {id(t): t for n in unused for t in [*n.inputs, *n.outputs]}
    for t in touched.values():
        # list's own methods: graphsurgeon's would unlink the other side by value again.
        for links in (t.inputs, t.outputs):
            kept = [n for n in links if id(n) not in gone]
            if len(kept) != len(links):
                list.clear(links)
                list.extend(links, kept)
    for n in unused:
        list.clear(n.inputs)
        list.clear(n.outputs)
    graph.nodes = [n for n in graph.nodes if id(n) in needed]
    return True


def _bypass_identities(graph: gs.Graph) -> None:
    """The nodes that read an Identity's output read its input instead, where the output
    is not a graph output; the Identity is then unused."""
    outputs = {id(t) for t in graph.outputs}
    for node in graph.nodes:
        single = node.op == "Identity" and len(node.inputs) == len(node.outputs) == 1
        if single and id(node.outputs[0]) not in outputs:
            _read_instead(node.outputs[0], node.inputs[0])


def _drop_identities(graph: gs.Graph) -> None:
    """Makes the producer of an Identity's input produce its output directly.

    A rule that must give a result a fixed name (a real output, a view_as_real)
    copies it with Identity while other, later unused nodes still read the result.
    Once those are gone, the copy is not needed.
    """
    kept = {id(t) for t in [*graph.inputs, *graph.outputs]}
    dropped = set()
    for node in graph.nodes:
        if node.op != "Identity" or not node.inputs or not node.outputs:
            continue
        src = node.inputs[0]
        if not isinstance(src, gs.Variable) or id(src) in kept or not _only_use(src):
            continue
        producer = src.inputs[0]
        dst = node.outputs[0]
        node.inputs.clear()
        node.outputs.clear()
        producer.outputs[producer.outputs.index(src)] = dst
        dropped.add(id(node))
    if dropped:
        graph.nodes = [n for n in graph.nodes if id(n) not in dropped]


def _only_use(t: gs.Variable) -> bool:
    """One node makes `t`, and one reads it."""
    return len(t.inputs) == 1 and len(t.outputs) == 1


def _read_instead(old: gs.Tensor, new: gs.Tensor) -> None:
    """Every node that reads `old` reads `new` in its place."""
    for consumer in list(old.outputs):
        for i, t in enumerate(consumer.inputs):
            if t is old:
                consumer.inputs[i] = new


def _merge_reshapes(graph: gs.Graph) -> None:
    """A Reshape of a Reshape reads the first one's input, where the second's target is a
    constant that `_through` can say in terms of that input."""
    taken = None
    for node in graph.nodes:
        if node.op != "Reshape" or len(node.inputs) != 2 or node.attrs.get("allowzero", 0):
            continue
        middle, target = node.inputs
        if len(middle.inputs) != 1 or middle.inputs[0].op != "Reshape":
            continue
        inner = middle.inputs[0]
        merged = _through(target.values, inner) if isinstance(target, gs.Constant) else None
        if merged is None:
            continue
        if not np.array_equal(merged, target.values):
            taken = taken if taken is not None else _names(graph)
            target = gs.Constant(fresh_name(f"{node.name}_target", taken), merged)
        node.inputs[0], node.inputs[1] = inner.inputs[0], target


def _names(graph: gs.Graph) -> set[str]:
    """The names of the values `graph`'s nodes and its inputs and outputs use (without
    graphsurgeon's map of tensors, which a large graph builds once)."""
    values = [*graph.inputs, *graph.outputs]
    values += [t for n in graph.nodes for t in [*n.inputs, *n.outputs]]
    return {t.name for t in values}


def _through(target: np.ndarray, inner: gs.Node) -> np.ndarray | None:
    """`target`, a Reshape's, for the input of the Reshape `inner` before it: a 0 copies a
    dim of the middle shape, which is the input's own where `inner` copied it too (a 0
    at the same place), and a known size where `inner` set it; None where it is neither."""
    target = np.asarray(target)
    zeros = np.flatnonzero(target == 0)
    if not zeros.size:
        return target
    first = inner.inputs[1]
    if not isinstance(first, gs.Constant) or inner.attrs.get("allowzero", 0):
        return None
    first = np.asarray(first.values)
    if zeros[-1] >= first.size or np.any(first[zeros] < 0):
        return None
    merged = target.copy()
    merged[zeros] = first[zeros]
    return merged


def _bypass_same_reshapes(graph: gs.Graph) -> None:
    """The readers of a Reshape to the static shape its input already has read its input;
    one that writes a graph output from a value a node makes becomes an Identity, which
    `_drop_identities` takes out where nothing else reads that value: its producer then
    writes the output itself."""
    outputs = {id(t) for t in graph.outputs}
    for node in graph.nodes:
        if node.op != "Reshape" or len(node.inputs) != 2 or node.attrs.get("allowzero", 0):
            continue
        x, target = node.inputs
        shape = _static_shape(x)
        if shape is None or not isinstance(target, gs.Constant):
            continue
        if _reshaped(np.asarray(target.values).ravel(), shape) != shape:
            continue
        if id(node.outputs[0]) not in outputs:
            _read_instead(node.outputs[0], x)
        elif x.inputs and id(x) not in outputs:
            node.op, node.attrs = "Identity", {}
            node.inputs.pop()


SHAPE_KEEPING = frozenset({"RotaryEmbedding"})
"""Ops whose output has their first input's shape, which shape inference may not know
(onnxruntime's own ops)."""


def _static_shape(t: gs.Tensor) -> list[int] | None:
    """`t`'s shape where every dim is known: its label's, or that of the first input of
    the op that made it, where the op keeps its shape."""
    shape = t.shape
    if shape is None and len(t.inputs) == 1 and t.inputs[0].op in SHAPE_KEEPING:
        shape = t.inputs[0].inputs[0].shape
    if not static(shape):
        return None
    return list(shape)


def _reshaped(target: np.ndarray, shape: list[int]) -> list[int] | None:
    """The shape a Reshape to `target` gives a value of `shape`: a 0 copies the dim in
    its place, a -1 takes what is left; None where the target cannot apply."""
    out = [shape[i] if v == 0 and i < len(shape) else int(v) for i, v in enumerate(target)]
    if out.count(-1) == 1:
        known = int(np.prod([d for d in out if d != -1]))
        total = int(np.prod(shape))
        if known == 0 or total % known:
            return None
        out[out.index(-1)] = total // known
    return out if int(np.prod(out)) == int(np.prod(shape)) else None


def tidy(graph: gs.Graph) -> gs.Graph:
    """Removes what the rewrite left unused and sorts nodes topologically, where they
    are not sorted already. In a graph without subgraphs (whose nodes may read a value
    by name), a Reshape of a Reshape reads the first one's input, and the readers of a
    Reshape to its input's own static shape, or of an Identity, that is no graph output
    read its input, first.

    graphsurgeon's cleanup runs where `_unlink_unused` leaves a graph to it, and where
    there is more to clean: local functions, or a graph input some node produces."""
    if not any(gs_holds_graphs(n) for n in graph.nodes):
        # Subgraphs may read a value by name: their readers are not all in sight.
        _bypass_identities(graph)
        _merge_reshapes(graph)
        _bypass_same_reshapes(graph)
    unlinked = _unlink_unused(graph)
    if not unlinked:
        graph.cleanup(remove_unused_graph_inputs=False)
    _drop_identities(graph)
    if not unlinked or graph.functions or any(t.inputs for t in graph.inputs):
        graph.cleanup(remove_unused_graph_inputs=False)
    return graph if gs_sorted(graph) else graph.toposort()


def drop_labels(graph: gs.Graph) -> None:
    """Takes the dtype and shape off the values `graph`'s nodes make, but its outputs':
    the export would write them as value_info, which `keep_model_fields` drops."""
    outputs = {id(t) for t in graph.outputs}
    for node in graph.nodes:
        for t in node.outputs:
            if id(t) not in outputs:
                t.dtype = t.shape = None


EMITTED_DOMAINS = {"com.microsoft": 1}
"""Domains rules may emit besides the default one (for the onnxruntime target), with
the version to import when the model does not import them already."""


def import_emitted(model: onnx.ModelProto, used: set[str]) -> None:
    """Imports each of the `used` domains that rules and forms emit (`EMITTED_DOMAINS`)
    that `model` does not import yet."""
    imported = {o.domain for o in model.opset_import}
    for domain in sorted(used & set(EMITTED_DOMAINS) - imported):
        model.opset_import.append(onnx.helper.make_opsetid(domain, EMITTED_DOMAINS[domain]))


def keep_model_fields(src: onnx.ModelProto, dst: onnx.ModelProto) -> None:
    """Carries over what the graph export does not: versions (and the import of a
    domain the rewrite emitted), metadata, functions.

    value_info is dropped, in subgraphs too: complex labels are gone, and exporters that lower
    complex values themselves leave real labels with the wrong shapes. The check
    re-derives every label by shape inference.
    """
    dst.ir_version = src.ir_version
    del dst.opset_import[:]
    dst.opset_import.extend(src.opset_import)
    used = set()
    for g in graphs_in(dst.graph):  # one walk: the domains used, the labels dropped
        used.update(n.domain for n in g.node)
        del g.value_info[:]
    import_emitted(dst, used)
    for field in ("producer_name", "producer_version", "domain", "model_version", "doc_string"):
        setattr(dst, field, getattr(src, field))
    del dst.metadata_props[:]
    dst.metadata_props.extend(src.metadata_props)
    if not dst.functions and src.functions:
        dst.functions.extend(src.functions)
