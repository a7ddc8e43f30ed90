"""Pass `validate`: the staged output run in the runtime the target is for (onnxruntime,
or OpenVINO where installed; validate options: `runtime`), compared with the reference
and with the framework's own outputs.

The inputs are written to `save_inputs` once made, and the outputs compared to
`save_outputs` once compared, passed or not. A model passed through unchanged is
compared only with its framework's outputs (or when an engine is built from it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from onnx.external_data_helper import load_external_data_for_model

from ..errors import DecomplexError, OptionError, SaveError
from ..files.external import external_length, external_tensors, memory_bytes
from ..files.transaction import write_atomic
from ..options import Options
from ..validate import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    Deadline,
    Settings,
    choose_runtime,
    load_expected,
    load_saved,
    npz_bytes,
    random_inputs,
    replay_outputs,
    resolve_shapes,
    validate,
)
from ..validate.trace import Rewrite
from .state import State


def run(state: State, options: Options) -> State:
    checked = not (state.passed_through and state.engine is None and state.files.expected is None)
    if not options.validate.validate or not checked:
        return state
    try:
        _compare(state, options)
    except MemoryError:
        raise DecomplexError(
            "validation's inputs or outputs do not fit in memory: give smaller "
            "--input-shapes (--no-validate writes it unchecked)"
        ) from None
    except (OptionError, SaveError):
        raise  # the command line or a --save-* path is what to change
    except DecomplexError as e:
        if state.dst is None:  # a conversion made elsewhere, checked: nothing to write
            raise
        # Validation could not run at all (or ran out of time): nothing is written.
        raise type(e)(f"{e} (--no-validate writes it unchecked)") from None
    return state


def _compare(state: State, options: Options) -> None:
    result, files, original, staged = state.result, state.files, state.original, state.staged
    settings = options.validate
    atol, rtol = settings.atol, settings.rtol
    feeds, expected = load_saved(str(files.inputs), original) if files.inputs else (None, None)
    if expected is None and state.had_external and not state.passed_through:
        # The reference evaluator needs every weight in memory.
        _check_weights_fit(original, state.src.parent)
        load_external_data_for_model(original, str(state.src.parent))
    if result.report.narrowed:
        # float32 numbers cannot meet float64 tolerances.
        atol, rtol = max(atol, DEFAULT_ATOL), max(rtol, DEFAULT_RTOL)
    if feeds is None:
        shapes = resolve_shapes(original, settings.input_shapes)
        feeds = random_inputs(original, shapes, settings.seed, edges=settings.edge_values)
    result.feeds = feeds
    if files.save_inputs is not None:
        write_atomic(Path(files.save_inputs), npz_bytes(feeds))
        result.saved.append(Path(files.save_inputs))
    runtime, note = choose_runtime(settings.runtime, options.target.chosen.runtime)
    # What both comparisons share, one time limit included.
    common = Settings(atol=atol, rtol=rtol, providers=settings.providers, runtime=runtime,
                      timeout=Deadline(settings.timeout), rewrite=_rewrite(state))  # fmt: skip
    if not state.passed_through or state.engine is not None:
        result.validation = validate(original, staged, feeds, common, expected=expected)
    if files.expected is not None:
        result.framework = validate(
            original, staged, feeds, common, expected=load_expected(files.expected, original),
            reference=f"expected outputs {Path(files.expected).name}",
        )  # fmt: skip
    for compared in result.validations:
        compared.notes += [note] if note else []
    if files.save_outputs is not None:
        # Against the reference; against the framework's outputs when only those ran.
        compared = result.validation or result.framework
        write_atomic(Path(files.save_outputs), npz_bytes(replay_outputs(compared)))
        result.saved.append(Path(files.save_outputs))
    result.tolerances = atol, rtol


def _rewrite(state: State) -> Rewrite | Callable[[], Rewrite | None] | None:
    """What the rewrite recorded, for a failure's trace: this run's, or (a conversion
    made elsewhere) a callable that makes it again."""
    if callable(state.held):
        return state.held
    if state.held is None:
        return None
    return Rewrite(state.held, state.report.explanations)


def _check_weights_fit(model, folder: Path) -> None:
    """Refuses, in one line, a validation whose weights would not fit in memory: the
    reference evaluator holds every one, and onnxruntime the rewrite's, so twice their
    bytes are needed; a process past the machine's memory is killed with no word."""
    weights = sum(external_length(t, folder) for t in external_tensors(model))
    memory = memory_bytes()
    if 2 * weights > memory:
        raise DecomplexError(
            f"validation would hold {weights / 2**30:.1f} GiB of weights twice (the reference "
            f"evaluator's and onnxruntime's), past this machine's {memory / 2**30:.1f} "
            "GiB of memory: give a replay's inputs and outputs (--load-inputs) to check it"
        )
