"""Pass `normalize`: the model read as the native-complex model it means.

An exporter's mixed graph is read as it means (`onnx_decomplex.normalize`), the model
is upgraded to `target_opset` (rewrite options), and the model-local functions that
see complex values are inlined. For a target with no float64 (tensorrt, openvino),
the model the rewrite takes is then narrowed to float32 (`state.native` keeps what
it means). Graph inputs' defaults are set aside, as no rule may
fold a value the caller can override. Where none of that changes the model, the
import that read it is the one analysis takes.
"""

from __future__ import annotations

import time

import onnx
import onnx.inliner
import onnx_graphsurgeon as gs

from .. import graphs
from ..analyze import analyze
from ..check import complex_in_functions
from ..errors import DecomplexError, OptionError
from ..normalize import imported, normalize
from ..options import Options
from ..report import initializer_bytes, op_histogram
from ..shapes import convert_version
from ..targets.common.narrow import narrow_double
from .state import State

MIN_OPSET = 11


def run(state: State, options: Options) -> State:
    state.start = time.perf_counter()
    model = state.model
    report = state.report
    report.ops_before, report.initializer_bytes_before = (
        op_histogram(model),
        initializer_bytes(model),
    )
    model, state.defaults = _defaults_aside(model)
    graph = imported(model)
    tensors = graph.tensors()
    normalized = normalize(model, graph, tensors)
    read = model = normalized.model
    report.warnings = normalized.warnings
    if options.rewrite.target_opset is not None:
        model = upgrade_opset(model, options.rewrite.target_opset)
    state.opset = default_opset(model)
    if state.opset < MIN_OPSET:
        raise DecomplexError(f"opset {state.opset} is older than the oldest supported, {MIN_OPSET}")
    if normalized.changed:
        report.normalized = normalized.model
        report.readings, report.packed_io = normalized.readings, normalized.packed_io
        report.axis0 = normalized.axis0
    state.model = state.native = _inline_complex_functions(model)
    if options.target.chosen.narrows and not options.target.keep_double:
        # The rewrite then computes in float32, with float32's limits in its formulas.
        state.model, narrowed = narrow_double(state.native, state.external_dir)
        report.narrowed, report.clamped = narrowed.places, narrowed.clamped
    if state.model is read and not normalized.changed:
        state.graph, state.tensors = graph, tensors  # analysis takes this import
    return state


def default_opset(model: onnx.ModelProto) -> int:
    """The version of the default ONNX domain the model imports."""
    version = graphs.default_opset(model)
    if version is None:
        raise DecomplexError("the model imports no default ONNX opset")
    return version


def upgrade_opset(model: onnx.ModelProto, target: int) -> onnx.ModelProto:
    """`model` converted to default-domain opset `target` by onnx.version_converter.

    Only upgrades: a newer opset can say more (RotaryEmbedding, from 23), an older
    one could lose meaning. The IR version is raised to what the opset needs.
    """
    current = default_opset(model)
    newest = onnx.defs.onnx_opset_version()
    if target > newest:
        raise OptionError(
            f"target opset {target} is newer than onnx {onnx.__version__} knows; "
            f"it converts up to opset {newest}"
        )
    if target < current:
        raise OptionError(
            f"target opset {target} is older than the model's opset {current}; "
            "only upgrades are done"
        )
    if target == current:
        return model
    try:
        converted = convert_version(model, target)
    except Exception as e:  # the converter raises bare RuntimeErrors
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DecomplexError(f"cannot convert opset {current} to {target}: {first}") from None
    needed = onnx.helper.find_min_ir_version_for(list(converted.opset_import))
    converted.ir_version = max(model.ir_version, needed)
    return converted


def _inline_complex_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """Inlines the model-local functions whose calls take or make complex values.

    Rules match ONNX ops, not function bodies, so a complex value cannot cross a
    call. Functions that only see real values are kept as they are.
    """
    if not model.functions:
        return model
    local = {(f.domain, f.name) for f in model.functions}
    graph = gs.import_onnx(model)
    graph.toposort()
    analysis = analyze(graph)
    touched = {(u.op_type, u.node) for u in analysis.unsupported}
    calls = {
        (n.domain, n.op)
        for n in graph.nodes
        if (n.domain, n.op) in local and (n.op, n.name) in touched
    }
    if not calls and not complex_in_functions(model):
        return model
    ids = sorted(calls or local)
    return onnx.inliner.inline_selected_functions(model, ids, exclude=False)


def _defaults_aside(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[onnx.TensorProto]]:
    """An initializer that is also a graph input is a default the caller may override:
    a runtime input, which no rule may fold as a constant. Returns `model` without
    them (a copy, when there are some), and them, for the contract pass to put back."""
    names = {v.name for v in model.graph.input}
    defaults = [t for t in model.graph.initializer if t.name in names]
    if not defaults:
        return model, []
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    kept = [t for t in copy.graph.initializer if t.name not in names]
    del copy.graph.initializer[:]
    copy.graph.initializer.extend(kept)
    return copy, defaults
