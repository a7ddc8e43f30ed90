"""Pass `tidy`: one cleanup and toposort of the rewritten graph, exported with the
model's versions and metadata. A model that held nothing to rewrite stays as it is."""

from __future__ import annotations

import onnx
import onnx_graphsurgeon as gs

from ..dtypes import is_complex_onnx
from ..options import Options
from ..tidy import drop_labels, keep_model_fields, tidy
from .analyze import with_shapes
from .state import State


def run(state: State, options: Options) -> State:
    if state.rewritten:
        graph = tidy(state.graph)
        drop_labels(graph)
        out = gs.export_onnx(graph, do_type_check=False)
        keep_model_fields(state.native, out)
        fill_output_shapes(out, state.native)
        state.model = out
    state.graph = None
    return state


def fill_output_shapes(model: onnx.ModelProto, native: onnx.ModelProto | None = None) -> None:
    """Gives graph outputs with no shape the one inferred on the rewritten model; where
    inference finds none (a transform of a Loop's output), dims of no name at the rank
    the output has in `native` (one more for a complex one, now packed), so that the
    checker, which asks every graph output for a shape, takes it."""
    missing = [o for o in model.graph.output if not o.type.tensor_type.HasField("shape")]
    if not missing:
        return
    inferred = with_shapes(model)
    known = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output]}
    declared = {o.name: o for o in native.graph.output} if native is not None else {}
    for o in missing:
        v = known.get(o.name)
        if v is not None and v.type.tensor_type.HasField("shape"):
            o.type.tensor_type.shape.CopyFrom(v.type.tensor_type.shape)
            continue
        d = declared.get(o.name)
        if d is not None and d.type.tensor_type.HasField("shape"):
            packed = is_complex_onnx(d.type.tensor_type.elem_type) and not is_complex_onnx(
                o.type.tensor_type.elem_type
            )
            for _ in range(len(d.type.tensor_type.shape.dim) + packed):
                o.type.tensor_type.shape.dim.add()
