"""Pass `check`: shape inference, the full ONNX checker and the guarantee that nothing
complex is left, once, on the model the earlier passes made. A model that still
points at external data is checked by the save pass, where its files are."""

from __future__ import annotations

from ..check import check
from ..options import Options
from .state import State


def run(state: State, options: Options) -> State:
    if state.model is not state.native:
        state.model = check(state.model, external=None if state.may_point else False)
    return state
