"""`onnx-decomplex-merge SHARD_REPORT...`: the reports of a sharded folder run merged into
one, then compared with a baseline as a folder run is.

A command of its own, not a mode of `onnx-decomplex IN OUT`: it takes any number of
reports (a shell glob), and none of the rewrite, validation or TensorRT options apply.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click
from rich.console import Console

from onnx_decomplex import __version__
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.files.transaction import Paths, terminate
from onnx_decomplex.folder.baseline import read_report
from onnx_decomplex.folder.merge import merge_reports
from onnx_decomplex.options import ReportOptions

from .folder import check_paths, finish, print_table, read_baseline
from .groups import build, options_of
from .params import REPORT_SETTINGS

EXIT_ERROR = 1


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument(
    "reports",
    metavar="SHARD_REPORT...",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
)
@options_of(ReportOptions, "Report", **REPORT_SETTINGS)
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and failures.")
@click.version_option(__version__, "--version", package_name="onnx-decomplex")
def main(reports, quiet, **values):
    """Merge the JSON reports of `onnx-decomplex IN OUT --shard K/N`, for K = 1 to N, into
    the report of the whole folder, and compare it with --baseline as a folder run does.

    The reports must be shards 1 to N of one run: the same schema version, tool version
    and options, each shard once, each model in one shard only, the shard its path
    hashes to.

    Exit status: 0 every model passed, or nothing regressed against --baseline; 1 a
    model failed, a regression, or reports that do not merge; 2 bad usage.
    """
    # A terminated run unwinds like an interrupted one: its temporary files go.
    signal.signal(signal.SIGTERM, terminate)
    reporting = build(ReportOptions, values)
    if reporting.update_baseline and reporting.baseline is None:
        raise click.UsageError("--update-baseline needs --baseline PATH")
    console = Console(quiet=quiet, highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        paths = Paths()
        for path in reports:
            paths.read(path, "shard report")
        check_paths(paths, reporting)
        merged = merge_reports([(path, read_report(path, "shard report")) for path in reports])
        old = read_baseline(reporting, None)
        count = len(reports)
        print_table(console, merged.records, merged.data["wall_seconds"], f"{count} shards, ")
        status = finish(console, err, merged.records, merged.data, old, reporting)
    except DecomplexError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(status)


if __name__ == "__main__":
    main()
