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
from onnx_decomplex.baseline import (
    DEFAULT_MAX_ERROR_GROWTH,
    DEFAULT_MAX_NODE_GROWTH,
    read_report,
)
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.files import Paths
from onnx_decomplex.merge import merge_reports

from .folder import Reporting, check_paths, finish, print_table, read_baseline

EXIT_ERROR = 1


def _terminated(signum, frame) -> None:
    sys.exit(128 + signum)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument(
    "reports",
    metavar="SHARD_REPORT...",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
)
@click.option(
    "--report",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the merged JSON report (schema in the README) here.",
)
@click.option(
    "--junit",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write JUnit XML of the merged report here: one testcase per model.",
)
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An earlier JSON report of the whole folder: exit 1 on any regression against it.",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Write the merged report to --baseline (creating it), and exit 0.",
)
@click.option(
    "--max-error-growth",
    type=click.FloatRange(min=1),
    default=DEFAULT_MAX_ERROR_GROWTH,
    show_default=True,
    help="A worst output error that grows past this factor is a regression.",
)
@click.option(
    "--max-node-growth",
    type=click.FloatRange(min=0),
    default=DEFAULT_MAX_NODE_GROWTH,
    show_default=True,
    help="A node count that grows past this percentage is a regression.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and failures.")
@click.version_option(__version__, "--version", package_name="onnx-decomplex")
def main(
    reports, report, junit, baseline_path, update_baseline, max_error_growth, max_node_growth, quiet
):
    """Merge the JSON reports of `onnx-decomplex IN OUT --shard K/N`, for K = 1 to N, into
    the report of the whole folder, and compare it with --baseline as a folder run does.

    The reports must be shards 1 to N of one run: the same schema version, tool version
    and options, each shard once, each model in one shard only, the shard its path
    hashes to.

    Exit status: 0 every model passed, or nothing regressed against --baseline; 1 a
    model failed, a regression, or reports that do not merge; 2 bad usage.
    """
    # A terminated run unwinds like an interrupted one: its temporary files go.
    signal.signal(signal.SIGTERM, _terminated)
    if update_baseline and baseline_path is None:
        raise click.UsageError("--update-baseline needs --baseline PATH")
    console = Console(quiet=quiet, highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        paths = Paths()
        for path in reports:
            paths.read(path, "shard report")
        reporting = Reporting(
            report, junit, baseline_path, update_baseline, max_error_growth, max_node_growth
        )
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
