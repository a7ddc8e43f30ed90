"""`onnx-decomplex verify ORIGINAL CONVERTED`: the validation of a conversion that
exists already, with the options, verdict and exit codes of a conversion's own."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.options import Options, ValidateOptions
from onnx_decomplex.pipeline import Files, verify_file
from onnx_decomplex.shapes import SYNTAX
from onnx_decomplex.validate import DEFAULT_DIM, PROVIDERS, import_runtime

from . import params
from .exits import EXIT_VALIDATION, exit_with
from .groups import GroupedCommand, build, option, options_of
from .inputs import check_validation_options, with_siblings
from .output import print_validation


@click.command(cls=GroupedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("original", metavar="ORIGINAL", type=params.READ["type"])
@click.argument("converted", metavar="CONVERTED", type=params.READ["type"])
@options_of(
    ValidateOptions,
    "Validation",
    validate=None,
    **params.validate_settings(DEFAULT_DIM, SYNTAX, PROVIDERS),
)
@options_of(Files, "Validation", inputs=params.READ, expected=params.READ,
            save_inputs=params.FILE, save_outputs=params.FILE, normalized=None)  # fmt: skip
@option("-q", "--quiet", is_flag=True, group="Output", help="Print only errors and failures.")
def verify(original: Path, converted: Path, quiet: bool, **values) -> None:
    """Validate CONVERTED, a conversion of the ONNX model ORIGINAL made already (on another
    machine, by another version, or by hand), as a conversion validates its own output:
    CONVERTED in the runtime its target is for (onnxruntime, or OpenVINO for --target
    openvino; --runtime to choose) against ORIGINAL in the reference evaluator, and against
    the framework's outputs (NAME.expected.npz beside ORIGINAL, or --expected-outputs).

    Exit status: 0 passed; 1 error; 2 bad usage; 3 validation failed; 4 validation ran
    past --validate-timeout. Nothing is written but --save-inputs and --save-outputs.
    """
    console = Console(quiet=quiet, highlight=False, soft_wrap=True)
    settings, files = build(ValidateOptions, values), build(Files, values)
    check_validation_options(settings, files)
    try:
        import_runtime(settings.runtime)  # before any work: a missing runtime is one line
        providers = params.providers(settings.providers)
    except DecomplexError as e:
        exit_with(e)
    files = with_siblings(console, original, files, settings.input_shapes)
    options = Options(validate=settings).replace(providers=providers)
    try:
        result = verify_file(original, converted, options, files=files)
    except DecomplexError as e:
        exit_with(e)
    print_validation(console, result.validation)
    print_validation(console, result.framework)
    if not result.ok:
        failed = [f"{o.name} (against {v.reference})" for v in result.validations
                  for o in v.outputs if not o.passed]  # fmt: skip
        click.echo(f"error: {converted}: validation failed for {', '.join(failed)}", err=True)
        sys.exit(EXIT_VALIDATION)
    if not result.validations:
        exit_with(DecomplexError("nothing was compared", file=str(converted)))
    if not quiet:
        click.echo(f"verified {converted} against {original}")
