"""Pass `rewrite`: hands every complex-touching node to its rule (rewrite options:
`mul_strategy`; the onnxruntime target lets rules emit onnxruntime's own ops)."""

from __future__ import annotations

from ..options import Options
from ..rewrite import rewrite
from .state import State


def run(state: State, options: Options) -> State:
    graph, analysis, report = state.graph, state.analysis, state.report
    if not analysis.has_complex:
        return state
    report.inputs = list(analysis.inputs)
    report.outputs = [t.name for t in graph.outputs if t.name in analysis.complex]
    # Subgraph inputs are the node's packed values, not sources of their own.
    for a in analysis.walk():
        report.initializers += a.initializers
        report.constants += a.constants
        report.casts += a.casts
        report.rewritten += len(a.nodes)
    ctx = rewrite(
        graph,
        analysis,
        state.opset,
        options.rewrite.mul_strategy,
        contrib=options.target.target == "onnxruntime",
        streamed=state.streamed,
    )
    report.emitted, report.explanations = ctx.emitted, ctx.explanations
    return state
