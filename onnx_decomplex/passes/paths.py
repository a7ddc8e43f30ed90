"""Pass `paths`: refuses, before anything is read or written, a path written that is
one read, or one written twice (reads the files concern of the state)."""

from __future__ import annotations

from pathlib import Path

from ..errors import DecomplexError
from ..files.save import check_paths, data_file
from ..files.transaction import Paths
from ..options import Options
from .state import State


def run(state: State, options: Options) -> State:
    src, files, engine = state.src, state.files, state.engine
    for path in (state.dst, files.normalized, engine and engine.plan):
        if path is not None:
            check_paths(src, path)
    if files.expected is not None and files.inputs is None and options.validate.validate:
        raise DecomplexError(
            "expected outputs need the inputs they were computed on (--load-inputs)",
            file=str(files.expected),
        )
    refuse(state)
    for path in (files.save_inputs, files.save_outputs):
        if path is not None:
            check_paths(src, path)  # a folder, or in a folder that does not exist
    return state


def refuse(state: State) -> None:
    """Refuses a path written that is one read (the input, its data files once the load
    has found them, the saved inputs and outputs) or one written twice."""
    src, files, engine = state.src, state.files, state.engine
    paths = Paths()
    paths.read(src, "input model")
    for location in state.data_files:
        paths.read(src.parent / location, f"input's data file '{location}'")
    paths.read(files.inputs, "--load-inputs file")
    paths.read(files.expected, "--expected-outputs file")
    for path, what in ((state.dst, "output"), (files.normalized, "normalized model")):
        if path is not None:
            paths.write(path, what)
            paths.write(data_file(Path(path)), f"{what}'s data file")
    if engine is not None:
        paths.write(engine.plan, "engine plan")
        paths.write(engine.timing_cache, "timing cache")
    paths.write(files.save_inputs, "--save-inputs file")
    paths.write(files.save_outputs, "--save-outputs file")
    paths.check()
