"""The exit statuses of the commands, and the one-line error they exit with."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from onnx_decomplex.errors import DecomplexError, OptionError, ValidationTimeout

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_VALIDATION = 3
EXIT_TIMEOUT = 4


def exit_with(error: DecomplexError) -> NoReturn:
    """The one-line error, and exit status 1 (2 for an option's value that does not fit
    the model, 4 past the validation time limit)."""
    click.echo(f"error: {error}", err=True)
    if isinstance(error, OptionError):
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_TIMEOUT if isinstance(error, ValidationTimeout) else EXIT_ERROR)
