"""Pass `rewrite`: hands every complex-touching node to its rule (rewrite options:
`mul_strategy`; a target with `contrib`, onnxruntime, lets rules emit onnxruntime's own
ops)."""

from __future__ import annotations

from ..graphs import graphs_in
from ..options import Options
from ..rewrite import rewrite
from .state import State


def run(state: State, options: Options) -> State:
    graph, analysis, report = state.graph, state.analysis, state.report
    if not analysis.has_complex:
        return state
    report.inputs = list(analysis.inputs)
    report.outputs = [t.name for t in graph.outputs if t.name in analysis.complex]
    given = _given_names(state)

    def own(names: list[str]) -> list[str]:
        return names if given is None else [n for n in names if n in given]

    # Subgraph inputs are the node's packed values, not sources of their own.
    for a in analysis.walk():
        report.initializers += own(a.initializers)
        report.constants += own(a.constants)
        report.casts += own(a.casts)
        report.rewritten += len(a.nodes)
    ctx = rewrite(
        graph,
        analysis,
        state.opset,
        options.rewrite.mul_strategy,
        contrib=options.target.chosen.contrib,
        reciprocal_divides=options.target.chosen.reciprocal_divides,
        where_drops_negative_zero=options.target.chosen.where_drops_negative_zero,
        streamed=state.streamed,
    )
    report.emitted, report.explanations = ctx.emitted, ctx.explanations
    state.held = ctx.forms.held()
    return state


def _given_names(state: State) -> set[str] | None:
    """The values the model as given names, where `normalize` read it as another: the
    constants and Casts that reading made are not the model's own. None otherwise."""
    if state.report.normalized is None or state.source is None:
        return None
    names = set()
    for g in graphs_in(state.source.graph):
        names.update(t.name for t in g.initializer)
        names.update(out for node in g.node for out in node.output)
    return names
