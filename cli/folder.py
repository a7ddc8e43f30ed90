"""Folder mode: `onnx-decomplex MODELS_DIR OUT_DIR`, with reports and a baseline."""

from __future__ import annotations

import json
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from onnx_decomplex import baseline, zoo
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.files import Paths, write_atomic
from onnx_decomplex.junit import write_junit
from onnx_decomplex.pipeline import ConvertOptions
from onnx_decomplex.save import data_file

from .output import size

# More models than this, or a model this large, get a progress bar (on a terminal).
PROGRESS_FROM = 4
PROGRESS_FROM_BYTES = 100 * 2**20

_STYLE = {
    zoo.OK: "green",
    zoo.NO_COMPLEX: "dim",
    zoo.UNSUPPORTED: "yellow",
    zoo.VALIDATION_FAILED: "red",
    zoo.ERROR: "red",
}


def _error(x: float | None) -> str:
    return "" if x is None else f"{x:.2g}"


def print_table(console: Console, records: list[zoo.ModelRecord], seconds: float) -> None:
    """One row per model, then the counts by status."""
    if not console.is_terminal:
        # CI logs are wide; rich would otherwise fold every row to 80 columns.
        console.width = max(console.width, 132)
    table = Table(title="onnx-decomplex zoo", show_edge=False, title_justify="left")
    for name, justify in [("model", "left"), ("status", "left"), ("complex", "right"),
                          ("nodes", "right"), ("init bytes", "right"),
                          ("worst abs err", "right"), ("time", "right")]:  # fmt: skip
        table.add_column(name, justify=justify, no_wrap=True)
    for r in records:
        found = sum(r.complex_found.values())
        sizes = f"{size(r.initializer_bytes_before)} -> {size(r.initializer_bytes_after)}"
        table.add_row(
            r.path,
            f"[{_STYLE[r.status]}]{r.status}[/]",
            str(found) if found else "",
            f"{r.nodes_before} -> {r.nodes_after}" if r.passed else str(r.nodes_before or ""),
            sizes if r.passed else (size(r.initializer_bytes_before) if r.nodes_before else ""),
            _error(r.worst_abs),
            f"{(r.rewrite_seconds + r.validate_seconds) * 1000:.0f} ms",
        )
    console.print(table)
    counts = zoo.summarize(records)["by_status"]
    parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    console.print(f"{len(records)} models: {parts or 'none'} ({seconds:.1f} s)", highlight=False)


def _write_json(path: Path, data: dict) -> None:
    """Writes through a temporary file, so that a report is whole or absent."""
    write_atomic(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


def _check_paths(src: Path, dst: Path, report, junit, baseline_path, update_baseline) -> None:
    """Refuses, before any model runs, OUT inside IN or IN inside OUT (outputs would be
    written over inputs, or read as models next time), and a report, JUnit file or
    baseline written where the run reads or writes another file."""
    if dst.resolve().is_relative_to(src.resolve()) or src.resolve().is_relative_to(dst.resolve()):
        raise DecomplexError(
            "OUT and IN lie one inside the other: outputs could be written over inputs; "
            "give OUT a folder of its own",
            file=str(dst),
        )
    paths = Paths()
    models = zoo.find_models(src)
    for path, what in zoo.input_files(models):
        paths.read(path, what)
    for model in models:
        out = dst / model.relative_to(src)
        paths.write(out, f"output of {model}")
        paths.write(data_file(out), f"data file of the output of {model}")
    paths.write(report, "--report file")
    paths.write(junit, "--junit file")
    if update_baseline:
        paths.write(baseline_path, "baseline")
    else:
        paths.read(baseline_path, "baseline")
    paths.check()


def _run(console, src, dst, options, jobs) -> tuple[list[zoo.ModelRecord], float]:
    models = zoo.find_models(src, exclude=dst)
    count = len(models)
    large = any(m.stat().st_size >= PROGRESS_FROM_BYTES for m in models)
    start = time.perf_counter()
    if (count > PROGRESS_FROM or large) and console.is_terminal:
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn()]  # fmt: skip
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("models", total=count)
            records = zoo.run_folder(
                src, dst, options, jobs, on_done=lambda r: progress.advance(task)
            )
    else:
        records = zoo.run_folder(src, dst, options, jobs)
    return records, time.perf_counter() - start


def run_folder_mode(
    console: Console,
    err: Console,
    src: Path,
    dst: Path,
    options: ConvertOptions,
    *,
    jobs: int,
    report: Path | None,
    junit: Path | None,
    baseline_path: Path | None,
    update_baseline: bool,
    max_error_growth: float,
    max_node_growth: float,
) -> int:
    """Runs the folder, writes the reports, compares; returns the exit status."""
    if dst.exists() and not dst.is_dir():
        raise DecomplexError("OUT must be a folder when IN is one", file=str(dst))
    _check_paths(src, dst, report, junit, baseline_path, update_baseline)
    old = None
    if baseline_path is not None and baseline_path.exists():
        old = baseline.read_baseline(baseline_path)
    elif baseline_path is not None and not update_baseline:
        raise DecomplexError(
            "no such baseline (--update-baseline creates it)", file=str(baseline_path)
        )
    records, seconds = _run(console, src, dst, options, jobs)
    if not records:
        raise DecomplexError("no .onnx files found", file=str(src))
    print_table(console, records, seconds)
    for r in records:
        for line in r.warnings:
            err.print(f"[yellow]warning[/] {r.path}: {line}", highlight=False)
    data = zoo.to_json(records, src, options, seconds)
    cmp = None
    if old is not None:
        cmp = baseline.compare(
            old,
            records,
            max_error_growth=max_error_growth,
            max_node_growth=max_node_growth,
            atol=options.atol,
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
    if report is not None:
        _write_json(report, data)
    if junit is not None:
        write_junit(records, junit, cmp)
    if update_baseline:
        _write_json(baseline_path, {k: v for k, v in data.items() if k != "baseline"})
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
