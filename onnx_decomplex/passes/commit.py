"""Pass `commit`: every staged file renamed into place, when the whole run passed;
otherwise nothing is written (the transaction removes what was staged)."""

from __future__ import annotations

import dataclasses

from ..options import Options
from .state import State


def run(state: State, options: Options) -> State:
    result = state.result
    if result.ok:
        result.written = state.transaction.commit()
        if result.engine is not None:
            result.engine = dataclasses.replace(result.engine, plan=state.engine.plan)
    return state
