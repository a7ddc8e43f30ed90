"""Folder mode: `onnx-decomplex MODELS_DIR OUT_DIR`, with reports and a baseline."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from onnx_decomplex.contract import read_contract
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.files.save import data_file
from onnx_decomplex.files.transaction import Paths, write_atomic
from onnx_decomplex.folder import baseline, zoo
from onnx_decomplex.folder.junit import write_junit
from onnx_decomplex.options import Options, ReportOptions

from .output import size

# More models than this, or a model this large, get a progress bar (on a terminal).
PROGRESS_FROM = 4
PROGRESS_FROM_BYTES = 100 * 2**20

# A model's path folds onto more lines rather than narrow its column below this.
MODEL_MIN_WIDTH = 20

_STYLE = {
    zoo.OK: "green",
    zoo.NO_COMPLEX: "dim",
    zoo.UNSUPPORTED: "yellow",
    zoo.VALIDATION_FAILED: "red",
    zoo.ERROR: "red",
}

_COLUMNS = [("model", "left"), ("status", "left"), ("complex", "right"), ("nodes", "right"),
            ("init bytes", "right"), ("abs err", "right"), ("time", "right")]  # fmt: skip


def _error(x: float | None) -> str:
    return "" if x is None else f"{x:.2g}"


def _seconds(s: float) -> str:
    """At most 7 characters: 850 ms, 12.5 s, 1234 s."""
    if s < 10:
        return f"{s * 1000:.0f} ms"
    return f"{s:.1f} s" if s < 1000 else f"{s:.0f} s"


def _cells(r: zoo.ModelRecord, stacked: bool) -> dict[str, str]:
    """A row's cells, by column; `stacked` puts each before/after pair on two lines and
    the status under the model's path."""
    arrow = "\n-> " if stacked else " -> "
    found = sum(r.complex_found.values())
    status = f"[{_STYLE[r.status]}]{r.status}[/]"
    if r.passed or r.status == zoo.VALIDATION_FAILED:
        nodes = f"{r.nodes_before}{arrow}{r.nodes_after}"
        sizes = f"{size(r.initializer_bytes_before)}{arrow}{size(r.initializer_bytes_after)}"
    else:  # no rewrite: what the file holds, when it could be read
        nodes = str(r.nodes_before or "")
        sizes = size(r.initializer_bytes_before) if r.nodes_before else ""
    return {
        "model": f"{escape(r.path)}\n{status}" if stacked else escape(r.path),
        "status": status,
        "complex": str(found) if found else "",
        "nodes": nodes,
        "init bytes": sizes,
        "abs err": _error(r.worst_abs),
        "time": _seconds(r.rewrite_seconds + r.validate_seconds),
    }


def _table(records: list[zoo.ModelRecord], *, fold: bool, stacked: bool) -> Table:
    """Every column but the model's keeps its cells whole (no_wrap): a number is never
    cut. With `fold`, a long path folds onto more lines."""
    table = Table(title="onnx-decomplex zoo", show_edge=False, title_justify="left",
                  pad_edge=False)  # fmt: skip
    columns = [(n, j) for n, j in _COLUMNS if not (stacked and n == "status")]
    for name, justify in columns:
        wraps = fold and name == "model"
        table.add_column(
            name,
            justify=justify,
            no_wrap=not wraps,
            overflow="fold" if wraps else "ellipsis",
            min_width=max(cell_len(r.status) for r in records) if stacked and wraps else None,
        )
    for r in records:
        cells = _cells(r, stacked)
        table.add_row(*(cells[name] for name, _ in columns))
    return table


def fit_table(console: Console, records: list[zoo.ModelRecord]) -> Table:
    """The first layout whose numbers fit the console's width: one line per model; the
    same with long paths folded; each status under its model's path and each
    before/after pair on two lines (fits 80 columns)."""
    table = _table(records, fold=False, stacked=False)
    natural = console.measure(table, options=console.options.update_width(10**6)).maximum
    if natural <= console.width:
        return table
    longest = max(cell_len(r.path) for r in records)
    if natural - longest + MODEL_MIN_WIDTH <= console.width:
        return _table(records, fold=True, stacked=False)
    return _table(records, fold=True, stacked=True)


def print_table(
    console: Console, records: list[zoo.ModelRecord], seconds: float, where: str = ""
) -> None:
    """One row per model, then the counts by status; `where` (a shard, say) is added
    to the counts' line."""
    if not console.is_terminal:
        # CI logs are wide; rich would otherwise fold every row to 80 columns.
        console.width = max(console.width, 132)
    if records:
        console.print(fit_table(console, records))
    counts = zoo.summarize(records)["by_status"]
    parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    console.print(
        f"{len(records)} models: {parts or 'none'} ({where}{seconds:.1f} s)", highlight=False
    )


def write_json(path: Path, data: dict) -> None:
    """Writes through a temporary file, so that a report is whole or absent."""
    write_atomic(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


def _out_inside_in(src: Path, dst: Path) -> bool:
    """Whether OUT lies inside IN, which is fine: OUT's models are never inputs. IN
    and OUT the same, or IN inside OUT, are usage errors: outputs would be written over
    the inputs, or could land among them and be read as models by the next run."""
    if src.resolve() == dst.resolve():
        raise click.UsageError("IN and OUT are the same folder: give OUT a folder of its own")
    if src.resolve().is_relative_to(dst.resolve()):
        raise click.UsageError(
            "IN lies inside OUT, so outputs could be written among the inputs: give OUT "
            "a folder outside IN"
        )
    return dst.resolve().is_relative_to(src.resolve())


def _refuse_writing_over(src: Path, dst: Path, models: list[Path]) -> None:
    """Refuses, before any work, a run whose OUT (inside IN) already holds a model where
    an output would go, unless that model is an earlier run's output: one that records
    its I/O contract, or a copy of the input it would come from (a model with nothing
    complex is written as it is). Anything else there is the user's, never written over."""
    for model in models:
        out = dst / model.relative_to(src)
        if out.is_file() and not _earlier_output(out, model):
            raise DecomplexError(
                f"OUT lies inside IN, and this model under it is no output of an earlier run: "
                f"the output of {model} would be written over it; give OUT a folder of its own",
                file=str(out),
            )


def _earlier_output(out: Path, model: Path) -> bool:
    try:
        if read_contract(out) is not None:
            return True
    except Exception:  # not a model this tool wrote, whatever it is
        return False
    return out.read_bytes() == model.read_bytes()


def check_paths(paths: Paths, reporting: ReportOptions) -> None:
    """Adds the report, JUnit file and baseline to `paths`, then refuses, before
    anything is written, a path written where the run reads or writes another file."""
    paths.write(reporting.report, "--report file")
    paths.write(reporting.junit, "--junit file")
    if reporting.update_baseline:
        paths.write(reporting.baseline, "baseline")
    else:
        paths.read(reporting.baseline, "baseline")
    paths.check()


def _paths(
    src: Path, dst: Path, models: list[Path], shard: zoo.Shard | None, reporting: ReportOptions
) -> Paths:
    """What a folder run reads: the files of the models of every shard, since a shard's
    outputs and reports may land in the folder of another shard's model; and what it
    writes: its own models' outputs (`check_paths` adds the reports)."""
    outputs = []
    for model in models:
        rel = model.relative_to(src)
        if shard is not None and not shard.holds(rel.as_posix()):
            continue
        out = dst / rel
        outputs.append((out, f"output of {model}"))
        outputs.append((data_file(out), f"data file of the output of {model}"))
    reports = [reporting.report, reporting.junit]
    if reporting.update_baseline:
        reports.append(reporting.baseline)
    written = [path for path, _ in outputs] + [path for path in reports if path is not None]
    paths = Paths()
    for path, what in zoo.input_files(models, written):
        paths.read(path, what)
    for path, what in outputs:
        paths.write(path, what)
    return paths


def _run(console, src, dst, options, jobs, shard=None) -> tuple[list[zoo.ModelRecord], float]:
    models = zoo.find_models(src, exclude=dst, shard=shard)
    count = len(models)
    large = any(m.stat().st_size >= PROGRESS_FROM_BYTES for m in models)
    start = time.perf_counter()
    if (count > PROGRESS_FROM or large) and console.is_terminal:
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn()]  # fmt: skip
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("models", total=count)
            records = zoo.run_folder(
                src, dst, options, jobs, on_done=lambda r: progress.advance(task), shard=shard
            )
    else:
        records = zoo.run_folder(src, dst, options, jobs, shard=shard)
    return records, time.perf_counter() - start


def read_baseline(
    reporting: ReportOptions, shard: zoo.Shard | None
) -> list[zoo.ModelRecord] | None:
    """The baseline's records a run compares with (a shard's own, for a shard), or None
    with no baseline, or one that --update-baseline is about to create."""
    baseline_path = reporting.baseline
    if baseline_path is None:
        return None
    if baseline_path.exists():
        report = baseline.read_report(baseline_path)
        return baseline.baseline_for(report, shard, baseline_path)
    if not reporting.update_baseline:
        raise DecomplexError(
            "no such baseline (--update-baseline creates it)", file=str(baseline_path)
        )
    return None


def finish(
    console: Console,
    err: Console,
    records: list[zoo.ModelRecord],
    data: dict,
    old: list[zoo.ModelRecord] | None,
    reporting: ReportOptions,
) -> int:
    """Compares with the baseline, writes the reports; returns the exit status: 0 when
    every model passed, or nothing regressed against a baseline, or the baseline was
    updated; 1 otherwise."""
    baseline_path = reporting.baseline
    cmp = None
    if old is not None:
        cmp = baseline.compare(
            old,
            records,
            max_error_growth=reporting.max_error_growth,
            max_node_growth=reporting.max_node_growth,
            atol=data["options"]["atol"],
        )
        data["baseline"] = {
            "path": str(baseline_path),
            "regressions": [str(c) for c in cmp.regressions],
            "improvements": [str(c) for c in cmp.improvements],
            "known_failures": [str(c) for c in cmp.known],
        }
        for c in cmp.improvements:
            console.print(f"[green]improved[/] {c}", highlight=False)
        for c in cmp.known:
            console.print(f"[dim]known[/] {c}", highlight=False)
        for c in cmp.regressions:
            err.print(f"[red]regression[/] {c}", highlight=False)
    if reporting.report is not None:
        write_json(reporting.report, data)
    if reporting.junit is not None:
        write_junit(records, reporting.junit, cmp)
    if reporting.update_baseline:
        write_json(baseline_path, {k: v for k, v in data.items() if k != "baseline"})
        console.print(f"baseline {baseline_path} updated", highlight=False)
        return 0
    if cmp is not None:
        if cmp.regressions:
            err.print(f"error: {len(cmp.regressions)} regression(s) against {baseline_path}")
            return 1
        return 0
    failed = [r for r in records if not r.passed]
    for r in failed:
        err.print(f"[red]{r.status}[/] {r.message}", highlight=False)
    return 1 if failed else 0


def run_folder_mode(
    console: Console,
    err: Console,
    src: Path,
    dst: Path,
    options: Options,
    *,
    jobs: int,
    reporting: ReportOptions,
    shard: zoo.Shard | None = None,
) -> int:
    """Runs the folder (one shard of it, with `shard`), writes the reports, compares;
    returns the exit status."""
    if dst.exists() and not dst.is_dir():
        raise DecomplexError("OUT must be a folder when IN is one", file=str(dst))
    if shard is not None and reporting.update_baseline:
        raise click.UsageError(
            "--update-baseline with --shard would make a baseline of one shard's models: "
            "merge the shards' reports with onnx-decomplex-merge ... --update-baseline"
        )
    nested = _out_inside_in(src, dst)
    models = zoo.find_models(src, exclude=dst)
    if nested:
        _refuse_writing_over(src, dst, models)
        skipped = len(zoo.find_models(src)) - len(models)
        err.print(
            f"[yellow]warning[/] OUT lies inside IN: the models under {dst} are outputs, "
            f"not inputs; {skipped} skipped",
            highlight=False,
        )
    if not models:
        raise DecomplexError("no .onnx files found", file=str(src))
    check_paths(_paths(src, dst, models, shard, reporting), reporting)
    old = read_baseline(reporting, shard)
    records, seconds = _run(console, src, dst, options, jobs, shard)
    print_table(console, records, seconds, f"shard {shard}, " if shard else "")
    for r in records:
        for line in r.warnings:
            err.print(f"[yellow]warning[/] {r.path}: {line}", highlight=False)
    data = zoo.to_json(records, src, options, seconds, shard)
    return finish(console, err, records, data, old, reporting)
