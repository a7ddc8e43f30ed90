"""Pass `engine`: with `--build-engine`, the TensorRT engine built from the staged
output once it passed validation, and run on the same inputs."""

from __future__ import annotations

import dataclasses

from ..options import Options
from ..trt.engine import EngineError, build_engine, run_engine
from ..validate import validate
from .state import State


def run(state: State, options: Options) -> State:
    result = state.result
    if state.engine is None or not result.ok:
        return state
    try:
        result.engine = build_engine(
            state.staged, state.engine, state.profile, state.toolkit, state.transaction
        )
    except EngineError as e:
        raise dataclasses.replace(e, message=f"{e.message} (nothing was written)") from None
    if not options.validate.validate or result.feeds is None:
        return state
    names = [o.name for o in state.source.graph.output]

    def on_engine(packed):
        outputs = run_engine(result.engine.plan, packed, state.toolkit)
        return [outputs[n] for n in names]

    first = result.validation or result.framework
    atol, rtol = result.tolerances
    result.engine_validation = validate(
        state.original, None, result.feeds, atol=atol, rtol=rtol,
        expected=first.expected, reference=first.reference, runner=on_engine,
        runtime=f"TensorRT {state.toolkit.version}",
    )  # fmt: skip
    return state
