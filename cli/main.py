"""`onnx-decomplex IN OUT`: parse options, call the library, print."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from onnx_decomplex import __version__
from onnx_decomplex.baseline import DEFAULT_MAX_ERROR_GROWTH, DEFAULT_MAX_NODE_GROWTH
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.pipeline import MUL_STRATEGIES, ConvertOptions
from onnx_decomplex.shapes import parse_shapes
from onnx_decomplex.validate import DEFAULT_ATOL, DEFAULT_DIM, DEFAULT_RTOL

from .folder import run_folder_mode
from .groups import GroupedCommand, option
from .output import print_summary, print_validation, weights_progress

EXIT_ERROR = 1
EXIT_VALIDATION = 3


def _exit_with(error: DecomplexError) -> None:
    """The one-line error, and exit status 1."""
    click.echo(f"error: {error}", err=True)
    sys.exit(EXIT_ERROR)


@click.command(cls=GroupedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("src", metavar="IN", type=click.Path(path_type=Path))
@click.argument("dst", metavar="OUT", type=click.Path(path_type=Path))
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
    group="Validation",
    help=f"Shapes for inputs with symbolic dims: name:1x8x128 or name:[1,8,128], comma- or "
    f"option-separated. Dims nobody fixes are {DEFAULT_DIM}.",
)
@option(
    "--load-inputs",
    type=click.Path(path_type=Path),
    group="Validation",
    help=".npz of inputs for the original model, by input name (complex or packed arrays).",
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
    group="Rewrite",
    help="Convert the model to this opset first (upgrades only). At 23 or newer, RoPE's "
    "complex-times-position-table becomes one RotaryEmbedding node.",
)
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
@click.version_option(__version__, "--version", package_name="onnx-decomplex")
def main(
    src,
    dst,
    external_data,
    validate,
    input_shapes,
    load_inputs,
    seed,
    atol,
    rtol,
    mul_strategy,
    target_opset,
    jobs,
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

    When IN is a folder, every .onnx under it is converted into the same path under OUT,
    each validated against a sibling NAME.npz of inputs (and saved outputs) when there is one.

    Exit status: 0 done; 1 error, nothing written (folder: a model failed, or a regression
    against --baseline); 2 bad usage; 3 written, but validation failed.
    """
    console = Console(quiet=quiet, highlight=False, soft_wrap=True)
    folder_only = {"--jobs": jobs != 1, "--report": report, "--junit": junit,
                   "--baseline": baseline_path, "--update-baseline": update_baseline}  # fmt: skip
    try:
        shapes = parse_shapes(input_shapes)
    except DecomplexError as e:
        _exit_with(e)
    options = ConvertOptions(
        validate=validate,
        input_shapes=shapes,
        seed=seed,
        atol=atol,
        rtol=rtol,
        external_data=external_data,
        mul_strategy=mul_strategy,
        target_opset=target_opset,
    )
    if src.is_dir():
        if load_inputs:
            raise click.UsageError(
                "--load-inputs is for one model; in folder mode, put NAME.npz beside NAME.onnx"
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
                report=report,
                junit=junit,
                baseline_path=baseline_path,
                update_baseline=update_baseline,
                max_error_growth=max_error_growth,
                max_node_growth=max_node_growth,
            )
        except DecomplexError as e:
            _exit_with(e)
        sys.exit(status)
    given = [name for name, value in folder_only.items() if value]
    if given:
        raise click.UsageError(f"{', '.join(given)}: only when IN is a folder")
    err = Console(stderr=True, quiet=quiet, highlight=False, soft_wrap=True)
    try:
        with weights_progress(err) as progress:
            result = options.convert(src, dst, inputs_file=load_inputs, progress=progress)
    except DecomplexError as e:
        _exit_with(e)
    print_summary(console, result, verbose)
    print_validation(console, result)
    if not result.ok:
        failed = ", ".join(o.name for o in result.validation.outputs if not o.passed)
        click.echo(
            f"error: {src}: validation failed for {failed}; {dst} was written for inspection",
            err=True,
        )
        sys.exit(EXIT_VALIDATION)
    if not quiet:
        click.echo(f"wrote {dst}")


if __name__ == "__main__":
    main()
