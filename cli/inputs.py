"""What validation reads besides the model, for a conversion and for `verify` alike: the
options that give inputs and expected outputs, checked against one another, and the
model's siblings where they are not given."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from onnx_decomplex.options import ValidateOptions
from onnx_decomplex.pipeline import Files, siblings


def check_validation_options(options: ValidateOptions, files: Files) -> None:
    """Refuses options that contradict one another: shapes for random inputs with
    inputs given, and what needs validation without it."""
    if options.input_shapes and files.inputs:
        raise click.UsageError(
            "--input-shapes makes random inputs and --load-inputs gives them: give one"
        )
    needs = {"--providers": options.providers, "--save-inputs": files.save_inputs,
             "--save-outputs": files.save_outputs}  # fmt: skip
    given = [name for name, value in needs.items() if value]
    if given and not options.validate:
        raise click.UsageError(f"{', '.join(given)}: only with validation (drop --no-validate)")


def with_siblings(console, src: Path, files: Files, input_shapes) -> Files:
    """--load-inputs and --expected-outputs, or where they are not given, IN's siblings
    NAME.npz and NAME.expected.npz, as folder mode reads them; says which it took. The
    framework's outputs beside IN were computed on the inputs beside it: with
    --load-inputs given, they are not taken."""
    if files.inputs is not None:
        return files
    saved, expected = siblings(src)
    if saved is not None:
        unused = " (--input-shapes is not used: these inputs have their shapes)"
        console.print(f"inputs: {saved}, beside the model{unused if input_shapes else ''}")
    if files.expected is None and expected is not None:
        console.print(f"expected outputs: {expected}, beside the model")
        return dataclasses.replace(files, inputs=saved, expected=expected)
    return dataclasses.replace(files, inputs=saved)
