"""The library entry points: the passes of a run, in order, and the loops over them.

```
paths -> load -> profile -> normalize -> analyze -> rewrite -> tidy -> lower -> check
      -> contract -> lint -> save -> validate -> engine -> commit
```

Each pass is one module of `onnx_decomplex.passes` with one signature,
`run(state, options) -> state`: it reads the options of its concern, changes the
`State` and fills its part of the report. `decomplex` runs the passes that work in
memory; `convert_file` runs them all, between reading IN and renaming OUT into place.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx

from . import targets
from .contract import read_contract
from .errors import DecomplexError
from .files.save import Progress
from .files.transaction import Transaction
from .options import MUL_STRATEGIES, TARGETS, Options
from .passes import (
    analyze,
    check,
    commit,
    contract,
    engine,
    lint,
    load,
    lower,
    normalize,
    paths,
    profile,
    rewrite,
    save,
    tidy,
    validate,
)
from .passes.normalize import MIN_OPSET, default_opset, upgrade_opset
from .passes.state import FileResult, Files, State
from .report import Report
from .trt.engine import EngineOptions
from .trt.lint import LintResult
from .validate.trace import Rewrite

__all__ = [
    "MIN_OPSET",
    "MUL_STRATEGIES",
    "PASSES",
    "TARGETS",
    "FileResult",
    "Files",
    "Pass",
    "check_tensorrt",
    "convert_file",
    "decomplex",
    "default_opset",
    "siblings",
    "upgrade_opset",
    "verify_file",
]


@dataclass(frozen=True)
class Pass:
    """A named step of a run.

    Attributes:
        name: What `--help`, errors and tests call it.
        run: `run(state, options) -> state`.
        files: Whether it reads or writes files (only a file run has them).
    """

    name: str
    run: Callable[[State, Options], State]
    files: bool = False


PASSES = (
    Pass("paths", paths.run, files=True),
    Pass("load", load.run, files=True),
    Pass("profile", profile.run, files=True),
    Pass("normalize", normalize.run),
    Pass("analyze", analyze.run),
    Pass("rewrite", rewrite.run),
    Pass("tidy", tidy.run),
    Pass("lower", lower.run),
    Pass("check", check.run),
    Pass("contract", contract.run),
    Pass("lint", lint.run),
    Pass("save", save.run, files=True),
    Pass("validate", validate.run, files=True),
    Pass("engine", engine.run, files=True),
    Pass("commit", commit.run, files=True),
)
"""Every pass, in the order a file run takes them."""

IN_MEMORY = tuple(p.name for p in PASSES if not p.files)
"""The passes of `decomplex`: from a loaded model to the checked rewrite."""


def run(state: State, names: tuple[str, ...] | None = None) -> State:
    """Runs the passes named (every pass when None) over `state`, in order."""
    with _no_cycle_collection():
        for p in PASSES:
            if names is None or p.name in names:
                start = time.perf_counter()
                state = p.run(state, state.options)
                state.report.pass_seconds[p.name] = time.perf_counter() - start
    return state


@contextlib.contextmanager
def _no_cycle_collection():
    """Python's cycle collector off while the passes run, as it was after.

    A large graph is millions of small objects, which the collector walks again and
    again as the passes allocate more: a sixth of a rewrite's time at 18k nodes. The
    graphs the passes drop are collected once the run is over.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _options(options: Options | None, values: dict) -> Options:
    """`options` (the defaults when None) with the fields in `values` changed."""
    options = options or Options()
    return options.replace(**values) if values else options


def decomplex(
    model: onnx.ModelProto,
    options: Options | None = None,
    *,
    external_dir: str | Path | None = None,
    **values,
) -> tuple[onnx.ModelProto, Report]:
    """Rewrites every complex value of `model` into the packed-real layout.

    A complex tensor of shape S becomes a real one of shape S + [2] holding
    (real, imag): complex64 becomes float32, complex128 becomes float64. Graph
    inputs and outputs keep their names and symbolic dims. `model` is not modified.

    An exporter's mixed graph (typed-complex values read as packed, I/O declared
    packed) is first read as the native-complex model it means (`normalize`); the
    report keeps that model, which is what the rewrite must match.

    Args:
        model: A loaded model, with its external data loaded.
        options: The run's options (`onnx_decomplex.options`); the rewrite and
            target options apply here.
        external_dir: Where the external data of tensors not loaded yet lives (see
            `read_model(..., stream=True)`). Only the constants that rewritten nodes
            read are loaded; the others keep pointing at their files.
        **values: Option fields to change, by name, as `Options.of` takes them:
            `mul_strategy` ("four" real products, "gauss" (three), or "auto": four
            for elementwise Mul and small matrix products, three for other MatMuls,
            Gemm and convolutions);
            `target_opset` (convert to this default-domain opset first, upgrades
            only; at 23 or newer, a complex value times a position table becomes one
            RotaryEmbedding node); `target` ("onnx": standard ops only;
            "onnxruntime": onnxruntime's own ops too, where faster; "tensorrt": what
            TensorRT's parser lacks is lowered too, and float64 narrowed to float32);
            `keep_double` (with "tensorrt", leave float64 as it is).

    Returns:
        The rewritten model, checked by shape inference and the full ONNX checker
        (the input model itself when it holds no complex value), and a report. A
        model that still points at external data is checked by `save_model`, where
        its files are.

    Raises:
        UnsupportedError: Complex values reach ops that cannot be rewritten; every
            such node is listed.
        OptionError: An option's value is not one the rewrite knows.
        DecomplexError: Anything else that stops the rewrite.
    """
    state = State(
        _options(options, values),
        model=model,
        source=model,
        external_dir=Path(external_dir) if external_dir is not None else None,
    )
    state = run(state, IN_MEMORY)
    return state.model, state.report


SAVED_SUFFIX = ".npz"
"""A model's sibling NAME.npz holds its validation inputs, and may hold saved outputs."""

EXPECTED_SUFFIX = ".expected.npz"
"""A model's sibling NAME.expected.npz holds its framework's outputs, by output name."""


def siblings(src: Path) -> tuple[Path | None, Path | None]:
    """The files beside a model NAME.onnx that validation reads when no others are
    given, in folder mode and for one model alike: NAME.npz (inputs, as
    `Files.inputs`) and NAME.expected.npz (its framework's outputs, as
    `Files.expected`); None for one that does not exist."""
    saved = src.with_suffix(SAVED_SUFFIX)
    expected = src.with_name(src.stem + EXPECTED_SUFFIX)
    return (saved if saved.is_file() else None), (expected if expected.is_file() else None)


def convert_file(
    src: str | Path,
    dst: str | Path,
    options: Options | None = None,
    *,
    files: Files | None = None,
    engine: EngineOptions | None = None,
    progress: Progress | None = None,
    **values,
) -> FileResult:
    """The main job: load, rewrite, check, validate, build an engine, save atomically.

    The input is never modified, and no file the run reads is written. Every file is written
    under a temporary name beside its target, validated there, and renamed into place only
    when the whole run, validation included, passes: a failed run leaves OUT and every other
    path as it was (`result.written` is then empty). A model with external data is streamed:
    the real weights the rewrite does not read are copied from file to file, never loaded,
    unless validation needs them (the reference runs in memory; saved outputs spare it).

    Validation runs the rewrite in onnxruntime with `providers` (full names, see
    `validate.resolve_providers`; CPU when None) against the reference and the
    framework's outputs (see `Files`), and stops past `validate_timeout` seconds (0 or
    None: no limit) with a `ValidationTimeout`. With `edge_values` (the default), random
    complex inputs also hold the values where complex math breaks (`validate.EDGE_VALUES`).

    With `engine`, the target is "tensorrt". The shape profile, then TensorRT and a
    GPU are checked before anything is rewritten (a bad profile is refused where
    TensorRT is missing too); the engine is built from the rewritten model once it
    passes validation, and run on the same inputs, which take the profile's opt shapes
    unless `input_shapes` says otherwise.

    Args:
        src: The input model.
        dst: Where the output goes.
        options: The run's options (`onnx_decomplex.options`).
        files: The other files the run reads and writes.
        engine: Build a TensorRT engine with these options.
        progress: Told as the output's data file grows.
        **values: Option fields to change, by name (`Options.of`).

    Raises:
        OptionError: An option's value does not fit the model (shapes, profile,
            target opset), naming `src`.
        DecomplexError: Naming `src`, and the node and tensor where one applies.
    """
    src = Path(src)
    try:
        with Transaction() as transaction:
            state = State(
                _options(options, values),
                src=src,
                dst=Path(dst),
                files=files or Files(),
                engine=engine,
                progress=progress,
                transaction=transaction,
            )
            return run(state).result
    except DecomplexError as e:
        raise e.at_file(str(src)) from None


def verify_file(
    original: str | Path,
    converted: str | Path,
    options: Options | None = None,
    *,
    files: Files | None = None,
    **values,
) -> FileResult:
    """Validates a conversion that exists already: made on another machine, by another
    version, or by hand.

    `converted` runs in the runtime its recorded target is for (`validate.runtime` to
    choose) against `original` run in the reference (read as it means, as
    `convert_file` reads it), and against the framework's outputs in
    `files.expected`: the comparisons `convert_file` makes, with the same options, and
    the same result. Nothing is written but `files.save_inputs` and `files.save_outputs`.
    A model made for TensorRT (its contract says so) is judged at the default
    tolerances at least, as `convert_file` judges one it narrows.

    Raises:
        DecomplexError: Naming the file: a model cannot be read, or a side cannot run.
    """
    src, out = Path(original), Path(converted)
    options = _options(options, {**values, "validate": True})
    with Transaction() as transaction:
        state = State(options, src=src, files=files or Files(), transaction=transaction)
        try:
            state = run(state, ("paths", "load", "normalize"))
        except DecomplexError as e:
            raise e.at_file(str(src)) from None
        try:
            state.model = onnx.load(str(out), load_external_data=False)
            contract = read_contract(state.model)
        except DecomplexError as e:
            raise e.at_file(str(out)) from None
        except Exception as e:  # not a file onnx reads
            raise DecomplexError(f"not an ONNX model: {e}", file=str(out)) from None
        made_for = targets.TARGETS.get(contract.target) if contract is not None else None
        if made_for is not None:
            state.options = state.options.replace(target=made_for.name)
        if made_for is not None and made_for.narrows:
            state.report.narrowed.append(f"{out.name}: made for {made_for.runs_on}")
        state.staged, state.result = out, FileResult(state.report)
        state.held = functools.partial(_rewritten_again, state.native, state.options)
        try:
            return run(state, ("validate",)).result
        except DecomplexError as e:
            raise e.at_file(str(out)) from None


def _rewritten_again(native: onnx.ModelProto, options: Options) -> Rewrite | None:
    """What a rewrite of `native` records here and now: where this version made the
    conversion being verified, its tensors have these names."""
    model = onnx.ModelProto()
    model.CopyFrom(native)
    state = run(State(options, model=model, source=model), IN_MEMORY)
    return None if state.held is None else Rewrite(state.held, state.report.explanations)


def check_tensorrt(
    src: str | Path, options: Options | None = None, **values
) -> tuple[Report, LintResult]:
    """What `--build-engine` would hand TensorRT's parser, checked statically.

    The model is rewritten and lowered for TensorRT in memory, then linted against
    the parser table (`trt.lint`). Nothing is written, and TensorRT is not needed.

    Raises:
        DecomplexError: Naming `src`: the model cannot be read, rewritten or lowered.
    """
    src = Path(src)
    options = _options(options, {**values, "target": "tensorrt"})
    try:
        state = run(State(options, src=src), ("load", *IN_MEMORY))
        return state.report, state.lint
    except DecomplexError as e:
        raise e.at_file(str(src)) from None
