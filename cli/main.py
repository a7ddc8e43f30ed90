"""`onnx-decomplex IN OUT`: parse options, call the library, print."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click
from rich.console import Console

from onnx_decomplex import __version__
from onnx_decomplex.baseline import DEFAULT_MAX_ERROR_GROWTH, DEFAULT_MAX_NODE_GROWTH
from onnx_decomplex.errors import DecomplexError, OptionError, ValidationTimeout
from onnx_decomplex.pipeline import (
    MUL_STRATEGIES,
    TARGETS,
    ConvertOptions,
    check_tensorrt,
    siblings,
)
from onnx_decomplex.shapes import SYNTAX
from onnx_decomplex.trt.engine import EngineOptions
from onnx_decomplex.validate import (
    DEFAULT_ATOL,
    DEFAULT_DIM,
    DEFAULT_RTOL,
    DEFAULT_TIMEOUT,
    EDGES_BY_DEFAULT,
    PROVIDERS,
    import_onnxruntime,
)
from onnx_decomplex.zoo import find_models

from . import params
from .folder import Reporting, parse_shard, run_folder_mode
from .groups import GroupedCommand, option
from .output import print_engine, print_lint, print_summary, print_validation, weights_progress

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_VALIDATION = 3
EXIT_TIMEOUT = 4


def _terminated(signum, frame) -> None:
    sys.exit(128 + signum)


def _exit_with(error: DecomplexError) -> None:
    """The one-line error, and exit status 1 (2 for an option's value that does not fit
    the model, 4 past the validation time limit)."""
    click.echo(f"error: {error}", err=True)
    if isinstance(error, OptionError):
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_TIMEOUT if isinstance(error, ValidationTimeout) else EXIT_ERROR)


@click.command(cls=GroupedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("src", metavar="IN", type=click.Path(path_type=Path))
@click.argument("dst", metavar="OUT", required=False, type=click.Path(path_type=Path))
@option(
    "--external-data/--no-external-data",
    default=None,
    group="Output",
    help="Keep tensor data in OUT.data beside OUT. Default: when IN keeps its data that way, "
    "or the model is over 2 GB.",
)
@option(
    "--validate/--no-validate",
    default=True,
    group="Validation",
    help="Compare the rewrite (onnxruntime) with the original (onnx.reference). On by default.",
)
@option(
    "--input-shapes",
    multiple=True,
    metavar="SPEC",
    callback=params.shapes,
    group="Validation",
    help=f"Shapes for inputs with symbolic dims: {SYNTAX}. Several in one value are "
    "comma-separated (a comma followed by name: starts the next), or repeat the option. "
    f"Each must fit the model: fixed dims keep their size, and no dim is 0. Dims nobody "
    f"fixes are {DEFAULT_DIM}.",
)
@option(
    "--load-inputs",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    group="Validation",
    help=".npz of inputs for the original model, by input name (complex or packed arrays). "
    "Default: IN's sibling NAME.npz, when there is one.",
)
@option(
    "--expected-outputs",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    group="Validation",
    help=".npz of the exporting framework's own outputs on --load-inputs, by output name "
    "(complex or packed arrays): the rewrite must match them too. Default: IN's sibling "
    "NAME.expected.npz, when there is one.",
)
@option(
    "--providers",
    metavar="LIST",
    group="Validation",
    help=f"onnxruntime execution providers for the rewrite, comma-separated in priority "
    f"order: {', '.join(PROVIDERS)}, or full names such as CUDAExecutionProvider. Default: cpu.",
)
@option(
    "--save-inputs",
    type=click.Path(path_type=Path, dir_okay=False),
    group="Validation",
    help=".npz to write the inputs validation used to (complex arrays, by input name), "
    "passed or failed: --load-inputs replays them.",
)
@option(
    "--save-outputs",
    type=click.Path(path_type=Path, dir_okay=False),
    group="Validation",
    help=".npz to write the outputs validation compared to, passed or failed: the rewrite's "
    "by output name (complex arrays), the reference's as expected:NAME.",
)
@option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    group="Validation",
    help="Seed for random inputs.",
)
@option(
    "--atol",
    type=float,
    default=DEFAULT_ATOL,
    show_default=True,
    group="Validation",
    help="Absolute tolerance.",
)
@option(
    "--rtol",
    type=float,
    default=DEFAULT_RTOL,
    show_default=True,
    group="Validation",
    help="Relative tolerance, against |expected|.",
)
@option(
    "--validate-timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    group="Validation",
    help="Seconds validation may take, per model; past them the run stops, writes nothing "
    "and exits 4. 0: no limit.",
)
@option(
    "--edge-values/--no-edge-values",
    default=EDGES_BY_DEFAULT,
    show_default=True,
    group="Validation",
    help="Random complex inputs also hold 0, values on each axis beyond 1, and magnitudes "
    "of 1e20 and 1e-30 (1e15 and 1e-15 for complex128).",
)
@option(
    "--mul-strategy",
    type=click.Choice(MUL_STRATEGIES),
    default="auto",
    show_default=True,
    group="Rewrite",
    help="Products of two runtime complex operands: four real products, or Gauss's three. "
    "auto: four for elementwise Mul, three for MatMul, Gemm and convolutions.",
)
@option(
    "--target-opset",
    type=click.IntRange(min=11),
    callback=params.target_opset,
    group="Rewrite",
    help="Convert the model to this opset first (upgrades only, up to the newest the "
    "installed onnx knows). At 23 or newer, RoPE's complex-times-position-table becomes "
    "one RotaryEmbedding node.",
)
@option(
    "--save-normalized",
    type=click.Path(path_type=Path, dir_okay=False),
    group="Rewrite",
    help="Also write the native-complex model the rewrite was checked against: an "
    "exporter's mixed graph read as it means (the input itself when nothing needed reading).",
)
@option(
    "--target",
    type=click.Choice(TARGETS),
    default="onnx",
    show_default=True,
    group="Rewrite",
    help="The runtime the output is for. onnx: standard ops only, for any runtime. "
    "onnxruntime: also onnxruntime's own ops where faster (RoPE as com.microsoft."
    "RotaryEmbedding below opset 23). tensorrt: also lower what TensorRT's parser lacks "
    "(DFT/STFT to MatMul, Compress to Gather), narrow float64 to float32, and lint the "
    "result; implied by --build-engine.",
)
@option(
    "--keep-double",
    is_flag=True,
    group="TensorRT",
    help="With --target tensorrt, leave float64 as it is.",
)
@option(
    "--check-tensorrt",
    is_flag=True,
    group="TensorRT",
    help="Only lint what TensorRT's parser would get (IN: a model or a folder), against the "
    "table in the repo; writes nothing, needs no TensorRT. Exit 1 on any error.",
)
@option(
    "--build-engine",
    "plan",
    type=click.Path(path_type=Path, dir_okay=False),
    group="TensorRT",
    help="Build a TensorRT engine (.plan or .engine) from OUT, and run it on the validation "
    "inputs. Needs TensorRT 10 or 11 and an NVIDIA GPU.",
)
@option(
    "--trt-min-shapes",
    multiple=True,
    metavar="SPEC",
    callback=params.shapes,
    group="TensorRT",
    help=f"Profile shapes for dynamic inputs: {SYNTAX}; a complex input's logical shape "
    "(the trailing 2 is added) or its packed one. Checked against the model before "
    "TensorRT is loaded.",
)
@option("--trt-opt-shapes", multiple=True, metavar="SPEC", callback=params.shapes,
        group="TensorRT",
        help="As --trt-min-shapes; also the validation shapes. One kind alone fixes the shape.")  # fmt: skip
@option("--trt-max-shapes", multiple=True, metavar="SPEC", callback=params.shapes,
        group="TensorRT", help="As --trt-min-shapes.")  # fmt: skip
@option(
    "--pool-limit",
    multiple=True,
    metavar="POOL:SIZE",
    callback=params.pool_limits,
    group="TensorRT",
    help="Memory pool limit, as in workspace:2G (a unit is required: B, K, M, G).",
)
@option(
    "--timing-cache",
    type=click.Path(path_type=Path, dir_okay=False),
    group="TensorRT",
    help="Timing cache file: read if present, written after the build.",
)
@option(
    "--builder-optimization-level",
    type=click.IntRange(0, 5),
    group="TensorRT",
    help="TensorRT's builder optimization level (default 3).",
)
@option("--fp16", is_flag=True, group="TensorRT", help="Allow FP16 kernels (TensorRT 10 only).")
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
    callback=parse_shard,
    group="Folder mode",
    help="Convert only shard K of N (numbered from 1), for a CI job matrix: a model's shard "
    "is a hash of its path. onnx-decomplex-merge merges the shards' reports.",
)
@option(
    "--report",
    type=click.Path(path_type=Path, dir_okay=False),
    group="Folder mode",
    help="Write the JSON report (schema in the README) here.",
)
@option(
    "--junit",
    type=click.Path(path_type=Path, dir_okay=False),
    group="Folder mode",
    help="Write JUnit XML here: one testcase per model.",
)
@option(
    "--baseline",
    "baseline_path",
    type=click.Path(path_type=Path, dir_okay=False),
    group="Folder mode",
    help="An earlier JSON report: exit 1 on any regression against it.",
)
@option(
    "--update-baseline",
    is_flag=True,
    group="Folder mode",
    help="Write this run's report to --baseline (creating it), and exit 0.",
)
@option(
    "--max-error-growth",
    type=click.FloatRange(min=1),
    default=DEFAULT_MAX_ERROR_GROWTH,
    show_default=True,
    group="Folder mode",
    help="A worst output error that grows past this factor is a regression.",
)
@option(
    "--max-node-growth",
    type=click.FloatRange(min=0),
    default=DEFAULT_MAX_NODE_GROWTH,
    show_default=True,
    group="Folder mode",
    help="A node count that grows past this percentage is a regression.",
)
@option("-q", "--quiet", is_flag=True, group="Output", help="Print only errors and failures.")
@option("-v", "--verbose", is_flag=True, group="Output", help="Explain each rewritten node.")
@click.version_option(__version__, "-V", "--version", prog_name="onnx-decomplex")
def main(
    src,
    dst,
    external_data,
    validate,
    input_shapes,
    load_inputs,
    expected_outputs,
    providers,
    save_inputs,
    save_outputs,
    seed,
    atol,
    rtol,
    validate_timeout,
    edge_values,
    mul_strategy,
    target_opset,
    save_normalized,
    target,
    keep_double,
    check_tensorrt,
    plan,
    trt_min_shapes,
    trt_opt_shapes,
    trt_max_shapes,
    pool_limit,
    timing_cache,
    builder_optimization_level,
    fp16,
    jobs,
    shard,
    report,
    junit,
    baseline_path,
    update_baseline,
    max_error_growth,
    max_node_growth,
    quiet,
    verbose,
):
    """Rewrite the complex tensors of the ONNX model IN into packed-real form, in OUT.

    A complex tensor of shape S becomes a real one of shape S+[2] holding (real, imag):
    complex64 becomes float32, complex128 becomes float64. Inputs and outputs keep their names.

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
    signal.signal(signal.SIGTERM, _terminated)
    console = Console(quiet=quiet, highlight=False, soft_wrap=True)
    folder_only = {"--jobs": jobs != 1, "--shard": shard, "--report": report,
                   "--junit": junit, "--baseline": baseline_path,
                   "--update-baseline": update_baseline}  # fmt: skip
    engine_only = {"--trt-min-shapes": trt_min_shapes, "--trt-opt-shapes": trt_opt_shapes,
                   "--trt-max-shapes": trt_max_shapes, "--pool-limit": pool_limit,
                   "--timing-cache": timing_cache, "--fp16": fp16,
                   "--builder-optimization-level": builder_optimization_level is not None}  # fmt: skip
    given = [name for name, value in engine_only.items() if value]
    if given and plan is None:
        raise click.UsageError(f"{', '.join(given)}: only with --build-engine")
    if check_tensorrt:
        if dst is not None or plan is not None:
            raise click.UsageError("--check-tensorrt writes nothing: give IN only")
        sys.exit(_check_tensorrt(console, src, mul_strategy, target_opset, keep_double))
    if dst is None:
        raise click.UsageError("missing argument 'OUT'")
    _check_validation_options(validate, input_shapes, load_inputs, providers, save_inputs,
                              save_outputs)  # fmt: skip
    try:
        if validate:
            import_onnxruntime()  # before any work: a missing runtime is one line
        providers = params.providers(providers)
    except DecomplexError as e:
        _exit_with(e)
    options = ConvertOptions(
        validate=validate,
        input_shapes=input_shapes,
        seed=seed,
        atol=atol,
        rtol=rtol,
        validate_timeout=validate_timeout or None,
        edge_values=edge_values,
        external_data=external_data,
        mul_strategy=mul_strategy,
        target_opset=target_opset,
        target=target,
        keep_double=keep_double,
        providers=providers,
    )
    if src.is_dir():
        if plan is not None:
            raise click.UsageError("--build-engine is for one model, not a folder")
        if load_inputs or expected_outputs:
            raise click.UsageError(
                "--load-inputs and --expected-outputs are for one model; in folder mode, put "
                "NAME.npz and NAME.expected.npz beside NAME.onnx"
            )
        if save_normalized or save_inputs or save_outputs:
            raise click.UsageError(
                "--save-normalized, --save-inputs and --save-outputs are for one model, not a "
                "folder"
            )
        if update_baseline and baseline_path is None:
            raise click.UsageError("--update-baseline needs --baseline PATH")
        err = Console(stderr=True, highlight=False, soft_wrap=True)
        try:
            status = run_folder_mode(
                console,
                err,
                src,
                dst,
                options,
                jobs=jobs,
                shard=shard,
                reporting=Reporting(
                    report, junit, baseline_path, update_baseline, max_error_growth, max_node_growth
                ),  # fmt: skip
            )
        except DecomplexError as e:
            _exit_with(e)
        sys.exit(status)
    given = [name for name, value in folder_only.items() if value]
    if given:
        raise click.UsageError(f"{', '.join(given)}: only when IN is a folder")
    engine = None
    if plan is not None:
        engine = EngineOptions(
            plan=plan,
            shapes={"min": trt_min_shapes, "opt": trt_opt_shapes, "max": trt_max_shapes},
            pool_limits=pool_limit,
            timing_cache=timing_cache,
            optimization_level=builder_optimization_level,
            fp16=fp16,
        )
    if validate:
        load_inputs, expected_outputs = _siblings(
            console, src, load_inputs, expected_outputs, input_shapes
        )
    err = Console(stderr=True, quiet=quiet, highlight=False, soft_wrap=True)
    try:
        with weights_progress(err) as progress:
            result = options.convert(
                src, dst, inputs_file=load_inputs, progress=progress, engine=engine,
                expected_file=expected_outputs, normalized_path=save_normalized,
                save_inputs=save_inputs, save_outputs=save_outputs,
            )  # fmt: skip
    except DecomplexError as e:
        _exit_with(e)
    for line in result.report.warnings:
        click.echo(f"warning: {src}: {line}", err=True)
    print_summary(console, result, verbose)
    print_lint(console, result.lint)
    print_validation(console, result.validation)
    print_validation(console, result.framework)
    print_engine(console, result)
    unsaved = [str(p) for p in (save_inputs, save_outputs) if p and p not in result.saved]
    if unsaved:
        click.echo(f"warning: {src}: validation did not run: {' and '.join(unsaved)} not "
                   "written", err=True)  # fmt: skip
    if not result.ok:
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
    if not quiet:
        also = [str(p) for p in (save_normalized, result.engine and plan, *result.saved) if p]
        click.echo(f"wrote {dst}" + "".join(f" and {p}" for p in also))


def _check_validation_options(validate, input_shapes, load_inputs, *replay) -> None:
    """Refuses options that contradict one another: shapes for random inputs with
    inputs given, and what needs validation without it."""
    if input_shapes and load_inputs:
        raise click.UsageError(
            "--input-shapes makes random inputs and --load-inputs gives them: give one"
        )
    names = ("--providers", "--save-inputs", "--save-outputs")
    given = [name for name, value in zip(names, replay, strict=True) if value]
    if given and not validate:
        raise click.UsageError(f"{', '.join(given)}: only with validation (drop --no-validate)")


def _siblings(console, src: Path, load_inputs, expected_outputs, input_shapes):
    """--load-inputs and --expected-outputs, or where they are not given, IN's siblings
    NAME.npz and NAME.expected.npz, as folder mode reads them; says which it took. The
    framework's outputs beside IN were computed on the inputs beside it: with
    --load-inputs given, they are not taken."""
    if load_inputs is not None:
        return load_inputs, expected_outputs
    saved, expected = siblings(src)
    if saved is not None:
        unused = " (--input-shapes is not used: these inputs have their shapes)"
        console.print(f"inputs: {saved}, beside the model{unused if input_shapes else ''}")
    if expected_outputs is None and expected is not None:
        expected_outputs = expected
        console.print(f"expected outputs: {expected}, beside the model")
    return saved, expected_outputs


def _check_tensorrt(console, src: Path, mul_strategy, target_opset, keep_double) -> int:
    """Lints one model or every model of a folder; the exit status."""
    paths = find_models(src) if src.is_dir() else [src]
    if not paths:
        _exit_with(DecomplexError(f"no .onnx files under {src}"))
    failed = 0
    for path in paths:
        try:
            report, result = check_tensorrt(
                path, mul_strategy=mul_strategy, target_opset=target_opset,
                keep_double=keep_double,
            )  # fmt: skip
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
    main()
