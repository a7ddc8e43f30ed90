"""Pass `analyze`: the model in onnx-graphsurgeon, and which of its values are complex.

Every node that cannot be rewritten is refused here, all of them in one error,
before anything is emitted. The on-disk constants that rewritten nodes read are
loaded; the other weights stay on disk.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import numpy_helper
from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data

from ..analyze import Analysis, analyze
from ..check import complex_in_functions
from ..constants import graph_tensors
from ..errors import DecomplexError, UnsupportedError
from ..files.stream import left_on_disk, on_disk
from ..graphs import gs_holds_graphs, label, topologically_sorted
from ..options import Options
from ..shapes import declared_dims, infer_shapes
from ..tidy import name_nodes
from .state import State


def run(state: State, options: Options) -> State:
    model, graph = state.model, state.graph
    if graph is not None and not any(gs_holds_graphs(n) for n in graph.nodes):
        tensors = state.tensors if state.tensors is not None else graph.tensors()
        label(graph, with_shapes(model), tensors)  # sorted already
    else:
        graph = gs.import_onnx(with_shapes(model))
        name_nodes(graph)
        if not topologically_sorted(model.graph):
            graph.toposort()
        tensors = None
    analysis = analyze(graph, tensors=tensors)
    in_functions = complex_in_functions(state.model)
    if in_functions:
        raise DecomplexError(
            f"complex values inside model-local functions: {', '.join(in_functions)}"
        )
    if analysis.unsupported:
        raise UnsupportedError.of(analysis.unsupported)
    _load_read_weights(analysis, state.external_dir, state.streamed is not None)
    state.graph, state.tensors, state.analysis = graph, None, analysis
    return state


def with_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy with inferred shapes; they only help rules pick a form, so failure is fine.

    Where shape inference leaves the -1 of a constant Reshape unknown though it is one
    symbolic dim of the input (`Reshape(f[seq, 64], [1, -1, 1, 64])` is `[1, seq, 1,
    64]`), that dim is named and inference runs again, so that rules can see that a
    table's length is the sequence's.
    """
    try:
        inferred = infer_shapes(model)
        for _ in range(4):
            named = _name_reshaped_dims(inferred)
            if not named:
                break
            # Inferred again from the named values alone: the others carry made-up names.
            kept = [v for v in inferred.graph.value_info if v.name in named]
            del inferred.graph.value_info[:]
            inferred.graph.value_info.extend(kept)
            inferred = infer_shapes(inferred)
        return inferred
    except Exception:
        return model


def _name_reshaped_dims(model: onnx.ModelProto) -> set[str]:
    """Names the -1 dim of main-graph Reshapes by a constant shape where it is exactly
    one symbolic dim of the input, and shape inference left it unknown (or gave it a
    made-up `unk__` name); returns the values named."""
    graph = model.graph
    infos = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    constants = graph_tensors(graph)
    targets: dict[str, list[int]] = {}  # a layer stack's Reshapes share a few shapes
    named = set()
    for n in graph.node:
        if n.op_type != "Reshape" or len(n.input) < 2 or n.input[1] not in constants:
            continue
        if uses_external_data(constants[n.input[1]]):
            continue
        if any(a.name == "allowzero" and a.i for a in n.attribute):
            continue
        if n.input[1] not in targets:
            targets[n.input[1]] = numpy_helper.to_array(constants[n.input[1]]).ravel().tolist()
        target = targets[n.input[1]]
        if target.count(-1) != 1 or 0 in target:
            continue
        source, out = infos.get(n.input[0]), infos.get(n.output[0])
        if source is None or out is None:
            continue
        source, dims = declared_dims(source), declared_dims(out)
        if source is None or dims is None:
            continue
        at = target.index(-1)
        made_up = isinstance(dims[at], str) and dims[at].startswith("unk__")
        if (dims[at] is not None and not made_up) or None in source:
            continue
        symbols = [d for d in source if isinstance(d, str)]
        size = int(np.prod([d for d in source if isinstance(d, int)], dtype=np.int64))
        rest = int(np.prod([d for d in target if d != -1], dtype=np.int64))
        if len(symbols) != 1 or rest == 0 or size != rest:
            continue
        out.type.tensor_type.shape.dim[at].dim_param = symbols[0]
        named.add(n.output[0])
    return named


def _load_read_weights(analysis: Analysis, external_dir, streamed: bool) -> None:
    """Loads the on-disk constants that rewritten nodes read; the rest stay on disk,
    and so do large complex initializers when they are `streamed` (see `stream`)."""
    for a in analysis.walk():
        for node in a.nodes:
            for t in node.inputs:
                tensor = on_disk(t)
                if tensor is None:
                    continue
                if streamed and left_on_disk(t) is not None:
                    continue
                if external_dir is None:
                    raise DecomplexError(
                        "its data is on disk and no external_dir was given", tensor=t.name
                    )
                load_external_data_for_tensor(tensor, str(external_dir))
