"""Pass `tidy`: one cleanup and toposort of the rewritten graph, exported with the
model's versions and metadata. A model that held nothing to rewrite stays as it is."""

from __future__ import annotations

import onnx
import onnx_graphsurgeon as gs

from ..options import Options
from ..tidy import keep_model_fields, tidy
from .analyze import with_shapes
from .state import State


def run(state: State, options: Options) -> State:
    if state.analysis.has_complex or state.report.normalized is not None:
        _unlink_unused(state.graph)
        out = gs.export_onnx(tidy(state.graph), do_type_check=False)
        keep_model_fields(state.native, out)
        fill_output_shapes(out)
        state.model = out
    state.graph = None
    return state


def _unlink_unused(graph: gs.Graph) -> None:
    """Takes out the nodes no graph output needs, unlinking each by identity.

    graphsurgeon's cleanup unlinks a node from each of its tensors with `list.remove`,
    which compares nodes by value: on a large rewrite, a third of its time. What it
    finds afterwards is the same, so its own subgraph handling stands where a node
    holds one (this leaves such graphs to it).
    """
    if any(n.attrs and next(n.subgraphs(), None) is not None for n in graph.nodes):
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
        return
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


def fill_output_shapes(model: onnx.ModelProto) -> None:
    """Gives graph outputs with no shape the one inferred on the rewritten model."""
    missing = [o for o in model.graph.output if not o.type.tensor_type.HasField("shape")]
    if not missing:
        return
    inferred = with_shapes(model)
    known = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output]}
    for o in missing:
        v = known.get(o.name)
        if v is not None and v.type.tensor_type.HasField("shape"):
            o.type.tensor_type.shape.CopyFrom(v.type.tensor_type.shape)
