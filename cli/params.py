"""Option values, parsed and checked as click reads them.

A value that cannot be read (a malformed shape, a size with no unit, an opset the
installed onnx does not know, a provider onnxruntime lacks) is a usage error: exit 2,
one line naming the option and the value. The parsing itself lives in the library
modules that own each option.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
import onnx

from onnx_decomplex.errors import OptionError
from onnx_decomplex.shapes import parse_shapes
from onnx_decomplex.trt.profiles import parse_pool_limits
from onnx_decomplex.validate import RUNTIMES, resolve_providers

if TYPE_CHECKING:
    from onnx_decomplex.folder.zoo import Shard


def _usage(parse):
    """A click callback that reads an option's value with `parse`; the library's
    OptionError becomes click's BadParameter, which names the option."""

    def callback(ctx: click.Context, param: click.Parameter, value):
        try:
            return parse(value)
        except OptionError as e:
            raise click.BadParameter(str(e), ctx=ctx, param=param) from None

    return callback


def _opset(value: int | None) -> int | None:
    newest = onnx.defs.onnx_opset_version()
    if value is not None and value > newest:
        raise OptionError(
            f"{value}: onnx {onnx.__version__} knows opsets up to {newest}; upgrade onnx "
            "for a newer one"
        )
    return value


FILE = {"type": click.Path(path_type=Path, dir_okay=False)}
"""click's settings for a file the run writes (a folder is refused)."""

shapes = _usage(parse_shapes)
"""--input-shapes and --trt-*-shapes: {input name: dims}."""

pool_limits = _usage(parse_pool_limits)
"""--pool-limit: {pool: bytes}."""

target_opset = _usage(_opset)
"""--target-opset: no newer than the installed onnx converts to."""

REPORT_SETTINGS = {
    "report": FILE,
    "junit": FILE,
    "baseline": FILE,
    "max_error_growth": {"type": click.FloatRange(min=1)},
    "max_node_growth": {"type": click.FloatRange(min=0)},
}
"""click's settings for the `ReportOptions` fields, in a folder run and a merge alike."""


def shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Shard | None:
    """--shard K/N: a malformed value is a usage error."""
    if value is None:
        return None
    from onnx_decomplex.folder.zoo import Shard  # folder mode's modules load for folder runs only

    try:
        return Shard.parse(value)
    except ValueError as e:
        raise click.BadParameter(str(e), ctx=ctx, param=param) from None


def providers(value: str | tuple[str, ...]) -> list[str] | None:
    """--providers as onnxruntime's full names, in priority order; None when not given.

    Raises:
        click.BadParameter: A provider is unknown, or the installed onnxruntime lacks it.
        DecomplexError: onnxruntime is not installed.
    """
    if not value:
        return None
    try:
        return resolve_providers(value)
    except OptionError as e:
        ctx = click.get_current_context(silent=True)
        raise click.BadParameter(str(e), ctx=ctx, param_hint="'--providers'") from None


READ = {"type": click.Path(path_type=Path, exists=True, dir_okay=False)}
"""A file option that must name an existing file."""


def validate_settings(default_dim: int, syntax: str, providers: dict) -> dict:
    """click's settings for the ValidateOptions fields, shared by `onnx-decomplex` and
    `onnx-decomplex verify`."""
    return {
        "input_shapes": {
            "multiple": True,
            "metavar": "SPEC",
            "callback": shapes,
            "help": f"Shapes for inputs with symbolic dims: {syntax}. Several in one value are "
            "comma-separated (a comma followed by name: starts the next), or repeat the "
            "option. Each must fit the model: fixed dims keep their size, and no dim is 0. "
            f"Dims nobody fixes are {default_dim}.",
        },
        "providers": {
            "metavar": "LIST",
            "help": f"onnxruntime execution providers for the rewrite, comma-separated in "
            f"priority order: {', '.join(providers)}, or full names such as "
            "CUDAExecutionProvider. Default: cpu.",
        },
        "validate_timeout": {"type": click.FloatRange(min=0)},
        "runtime": {"type": click.Choice(RUNTIMES)},
    }
