"""Pass `save`: the output (and the normalized model, when asked) staged under a
temporary name beside its target; renamed into place by the commit pass only. Real
weights the rewrite did not read are copied from file to file, never loaded. Output
options: `external_data` (default: as the input keeps its data)."""

from __future__ import annotations

from ..files.external import holds_external
from ..files.save import stage_copy, stage_model
from ..options import Options
from .state import FileResult, State


def run(state: State, options: Options) -> State:
    external_data = options.output.external_data
    if external_data is None and state.had_external:
        external_data = True  # stored that way, written back that way
    src, transaction = state.src, state.transaction
    if state.passed_through:
        state.staged = stage_copy(
            src, state.model, state.dst, state.had_external, transaction, state.progress
        )
    else:
        pointing = state.may_point and holds_external(state.model)
        state.staged = stage_model(
            state.model,
            state.dst,
            transaction,
            external_data,
            source_dir=src.parent,
            progress=state.progress,
            check=pointing,  # the check pass left it to this one
            pointing=pointing,
        )
    if state.files.normalized is not None:
        stage_model(state.original, state.files.normalized, transaction, external_data,
                    source_dir=src.parent)  # fmt: skip
    state.result = FileResult(state.report, lint=state.lint)
    return state
