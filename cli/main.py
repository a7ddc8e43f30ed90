"""`onnx-decomplex IN OUT`: parse options, call the library, print."""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
from rich.console import Console

from onnx_decomplex import __version__
from onnx_decomplex.errors import DecomplexError, OptionError
from onnx_decomplex.files.transaction import terminate
from onnx_decomplex.options import (
    MUL_STRATEGIES,
    TARGETS,
    EngineOptions,
    Options,
    OutputOptions,
    ReportOptions,
    RewriteOptions,
    TargetOptions,
    ValidateOptions,
)
from onnx_decomplex.pipeline import FileResult, Files, check_tensorrt, convert_file
from onnx_decomplex.shapes import SYNTAX
from onnx_decomplex.validate import DEFAULT_DIM, PROVIDERS, import_runtime

from . import params
from .exits import EXIT_ERROR, EXIT_VALIDATION, exit_with
from .groups import GroupedCommand, build, option, options_of
from .inputs import check_validation_options, with_siblings
from .output import print_engine, print_lint, print_summary, print_validation, weights_progress

if TYPE_CHECKING:
    from onnx_decomplex.folder.zoo import Shard

EXITS_AFTER = "exits_after"
"""`main`'s context key, set by `run`: the process ends when `main` returns."""


def run() -> None:
    """The `onnx-decomplex` command: `main` (`verify` for `onnx-decomplex verify`), and
    then the process ends at once.

    A large model's run leaves millions of objects. The operating system takes the
    process's memory back whole; the interpreter would first collect them and free
    them one by one (a fifth of a second at 18k nodes). Everything is written and
    committed by then; the streams are flushed and exit handlers run (a profiler's,
    coverage's) as at any end. A one-model run also leaves the collector off
    (`pipeline` turns it back on only where it was on).
    """
    try:
        if sys.argv[1:2] == ["verify"]:  # onnx-decomplex verify ORIGINAL CONVERTED
            from .verify import verify  # its module loads for verify runs only

            verify.main(sys.argv[2:], prog_name="onnx-decomplex verify")
        else:
            main.main(obj={EXITS_AFTER: True})
        code = 0
    except SystemExit as e:
        code = e.code
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # as the interpreter prints a message it exits with
        code = 1
    exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if exit_functions is None:  # not CPython: the interpreter's own end
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    exit_functions()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


_READ = params.READ
VALIDATE_SETTINGS = params.validate_settings(DEFAULT_DIM, SYNTAX, PROVIDERS)
_SHAPES = {"multiple": True, "metavar": "SPEC", "callback": params.shapes}


@click.command(cls=GroupedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("src", metavar="IN", type=click.Path(path_type=Path))
@click.argument("dst", metavar="OUT", required=False, type=click.Path(path_type=Path))
@options_of(OutputOptions, "Output")
@options_of(ValidateOptions, "Validation", **VALIDATE_SETTINGS)
@options_of(Files, "Validation", inputs=_READ, expected=_READ, save_inputs=params.FILE,
            save_outputs=params.FILE, normalized={**params.FILE, "group": "Rewrite"})  # fmt: skip
@options_of(
    RewriteOptions,
    "Rewrite",
    mul_strategy={"type": click.Choice(MUL_STRATEGIES)},
    target_opset={"type": click.IntRange(min=11), "callback": params.target_opset},
)
@options_of(TargetOptions, "Rewrite", target={"type": click.Choice(TARGETS)},
            keep_double={"group": "TensorRT"})  # fmt: skip
@option(
    "--check-tensorrt",
    is_flag=True,
    group="TensorRT",
    help="Only lint what TensorRT's parser would get (IN: a model or a folder), against the "
    "table in the repo; writes nothing, needs no TensorRT. Exit 1 on any error.",
)
@options_of(
    EngineOptions,
    "TensorRT",
    plan=params.FILE,
    trt_min_shapes=_SHAPES,
    trt_opt_shapes=_SHAPES,
    trt_max_shapes=_SHAPES,
    pool_limit={"multiple": True, "metavar": "POOL:SIZE", "callback": params.pool_limits},
    timing_cache=params.FILE,
    builder_optimization_level={"type": click.IntRange(0, 5)},
)  # fmt: skip
@option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    group="Folder mode",
    help="Models converted at once, each in its own process.",
)
@option(
    "--shard",
    metavar="K/N",
    callback=params.shard,
    group="Folder mode",
    help="Convert only shard K of N (numbered from 1), for a CI job matrix: a model's shard "
    "is a hash of its path. onnx-decomplex-merge merges the shards' reports.",
)
@options_of(ReportOptions, "Folder mode", **params.REPORT_SETTINGS)
@option("-q", "--quiet", is_flag=True, group="Output", help="Print only errors and failures.")
@option(
    "-v",
    "--verbose",
    is_flag=True,
    group="Output",
    help="Explain each rewritten node, and time each pass.",
)
@click.version_option(__version__, "-V", "--version", prog_name="onnx-decomplex")
def main(src, dst, check_tensorrt, jobs, shard, quiet, verbose, **values):
    """Rewrite the complex tensors of the ONNX model IN into packed-real form, in OUT.

    A complex tensor of shape S becomes a real one of shape S+[2] holding (real, imag):
    complex64 becomes float32, complex128 becomes float64. Inputs and outputs keep their names.
    `onnx-decomplex verify ORIGINAL CONVERTED` validates a conversion made already.

    Validation reads a sibling NAME.npz of inputs (and saved outputs) beside the model
    NAME.onnx when there is one, and the framework's outputs in NAME.expected.npz when
    there are some, unless --load-inputs and --expected-outputs give others. When IN is
    a folder, every .onnx under it is converted into the same path under OUT, each with
    its own siblings.

    Exit status: 0 done; 1 error (folder: a model failed, or a regression against
    --baseline); 2 bad usage (an option's value that cannot be read, or does not fit the
    model); 3 validation failed; 4 validation ran past --validate-timeout. A single
    model's run that does not exit 0 writes nothing but --save-inputs and --save-outputs:
    OUT and every other file stay as they were.
    """
    # A terminated run unwinds like an interrupted one: its temporary files go.
    signal.signal(signal.SIGTERM, terminate)
    console = Console(quiet=quiet, highlight=False, soft_wrap=True)
    engine = _engine_options(build(EngineOptions, values))
    plan = engine and engine.plan
    files, reporting = build(Files, values), build(ReportOptions, values)
    options = _options(values)
    if check_tensorrt:
        if dst is not None or plan is not None:
            raise click.UsageError("--check-tensorrt writes nothing: give IN only")
        sys.exit(_check_tensorrt(console, src, options))
    if dst is None:
        raise click.UsageError("missing argument 'OUT'")
    check_validation_options(options.validate, files)
    options = _with_providers(options)
    if src.is_dir():
        _check_folder_usage(plan, files, reporting)
        sys.exit(_run_folder(console, src, dst, options, jobs, shard, reporting))
    given = [*(["--jobs"] if jobs != 1 else []), *(["--shard"] if shard else []),
             *reporting.changed()]  # fmt: skip
    if given:
        raise click.UsageError(f"{', '.join(given)}: only when IN is a folder")
    if options.validate.validate:
        files = with_siblings(console, src, files, options.validate.input_shapes)
    result = _convert(src, dst, options, files, engine, quiet)
    _print_result(console, src, result, files, verbose)
    if not result.ok:
        _exit_failed(src, dst, result, plan)
    if not quiet:
        also = [str(p) for p in (files.normalized, result.engine and plan, *result.saved) if p]
        click.echo(f"wrote {dst}" + "".join(f" and {p}" for p in also))


def _options(values: dict) -> Options:
    """The run's options, by concern; a value that does not fit is bad usage."""
    try:
        return Options(
            rewrite=build(RewriteOptions, values),
            target=build(TargetOptions, values),
            validate=build(ValidateOptions, values),
            output=build(OutputOptions, values),
        )
    except OptionError as e:
        raise click.UsageError(str(e)) from None


def _with_providers(options: Options) -> Options:
    """`options` with --providers resolved to full names; with validation, its runtime
    imported before any work, so that a missing runtime is one line."""
    try:
        if options.validate.validate:
            import_runtime(options.validate.runtime, options.target.chosen.runtime)
        providers = params.providers(options.validate.providers)
    except DecomplexError as e:
        exit_with(e)
    return options.replace(providers=providers)


def _check_folder_usage(plan: Path | None, files: Files, reporting: ReportOptions) -> None:
    """Refuses what is for one model only, and --update-baseline without a baseline."""
    if plan is not None:
        raise click.UsageError("--build-engine is for one model, not a folder")
    if files.inputs or files.expected:
        raise click.UsageError(
            "--load-inputs and --expected-outputs are for one model; in folder mode, put "
            "NAME.npz and NAME.expected.npz beside NAME.onnx"
        )
    if files.normalized or files.save_inputs or files.save_outputs:
        raise click.UsageError(
            "--save-normalized, --save-inputs and --save-outputs are for one model, not a folder"
        )
    if reporting.update_baseline and reporting.baseline is None:
        raise click.UsageError("--update-baseline needs --baseline PATH")


def _run_folder(
    console: Console,
    src: Path,
    dst: Path,
    options: Options,
    jobs: int,
    shard: Shard | None,
    reporting: ReportOptions,
) -> int:
    """Folder mode; its exit status."""
    from .folder import run_folder_mode  # its modules load for folder runs only

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return run_folder_mode(
            console, err, src, dst, options, jobs=jobs, shard=shard, reporting=reporting
        )
    except DecomplexError as e:
        exit_with(e)


def _convert(
    src: Path, dst: Path, options: Options, files: Files, engine: EngineOptions | None, quiet: bool
) -> FileResult:
    """One model's conversion, with a bar as its weights are copied; its result."""
    err = Console(stderr=True, quiet=quiet, highlight=False, soft_wrap=True)
    if (click.get_current_context().obj or {}).get(EXITS_AFTER):
        gc.disable()  # the process's end frees what the run leaves (see `run`)
    try:
        with weights_progress(err) as progress:
            return convert_file(src, dst, options, files=files, engine=engine, progress=progress)
    except DecomplexError as e:
        exit_with(e)


def _print_result(
    console: Console, src: Path, result: FileResult, files: Files, verbose: bool
) -> None:
    """The warnings, the summary, the lint, the comparisons and the engine."""
    for line in result.report.warnings:
        click.echo(f"warning: {src}: {line}", err=True)
    print_summary(console, result, verbose)
    print_lint(console, result.lint)
    print_validation(console, result.validation)
    print_validation(console, result.framework)
    print_engine(console, result)
    replay = (files.save_inputs, files.save_outputs)
    unsaved = [str(p) for p in replay if p and p not in result.saved]
    if unsaved:
        click.echo(f"warning: {src}: validation did not run: {' and '.join(unsaved)} not "
                   "written", err=True)  # fmt: skip


def _exit_failed(src: Path, dst: Path, result: FileResult, plan: Path | None) -> NoReturn:
    """The one line a failed validation ends with: which outputs failed, what was
    written; exit status EXIT_VALIDATION."""
    failed = [f"{o.name} (against {v.reference})" for v in result.validations
              for o in v.outputs if not o.passed]  # fmt: skip
    no_engine = "; no engine was built" if plan is not None and result.engine is None else ""
    saved = " and ".join(map(str, result.saved))
    written = f"nothing but {saved} was written" if saved else "nothing was written"
    click.echo(
        f"error: {src}: validation failed for {', '.join(failed)}; {written} "
        f"(--no-validate writes {dst} unchecked){no_engine}",
        err=True,
    )
    sys.exit(EXIT_VALIDATION)


def _engine_options(engine: EngineOptions) -> EngineOptions | None:
    """`engine`, or None without --build-engine, where giving one of its options is a
    usage error."""
    if engine.plan is not None:
        return engine
    if engine.changed():
        raise click.UsageError(f"{', '.join(engine.changed())}: only with --build-engine")
    return None


def _check_tensorrt(console, src: Path, options: Options) -> int:
    """Lints one model or every model of a folder; the exit status."""
    from onnx_decomplex.folder.zoo import find_models

    paths = find_models(src) if src.is_dir() else [src]
    if not paths:
        exit_with(DecomplexError(f"no .onnx files under {src}"))
    failed = 0
    for path in paths:
        try:
            report, result = check_tensorrt(path, options)
        except DecomplexError as e:
            console.print(f"[red]ERROR[/red] {e}")
            failed += 1
            continue
        print_lint(console, result, label=str(path), lowered=report)
        failed += not result.passed
    if len(paths) > 1:
        console.print(f"{len(paths) - failed} of {len(paths)} models would parse")
    return EXIT_ERROR if failed else 0


if __name__ == "__main__":
    run()
