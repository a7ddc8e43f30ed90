"""Pass `load`: reads the input model, its real weights left on disk (streamed)."""

from __future__ import annotations

from ..files.load import read_model
from ..files.stream import Streamed
from ..options import Options
from . import paths
from .state import State


def run(state: State, options: Options) -> State:
    state.model, state.data_files = read_model(state.src, stream=True)
    state.source = state.model
    state.external_dir = state.src.parent
    if state.had_external and state.dst is not None:
        paths.refuse(state)  # its data files are read too
        # Scratch space beside the output, removed with the run's other temporary files.
        state.streamed = Streamed(state.src.parent, lambda: state.transaction.folder(state.dst))
    return state
