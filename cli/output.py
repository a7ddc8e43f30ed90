"""Terminal output: the summary table and the per-output PASSED/FAILED lines."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from onnx_decomplex.pipeline import FileResult
from onnx_decomplex.report import Report
from onnx_decomplex.targets import TARGETS
from onnx_decomplex.trt.lint import LintResult
from onnx_decomplex.validate import ValidationResult

if TYPE_CHECKING:
    from rich.progress import Progress

PROGRESS_MIN_BYTES = 100 << 20
"""Writing less external data than this is quick: no bar."""


def size(n: float) -> str:
    """Bytes, short: 680B, 8.2K, 1.5M, 2.0G."""
    for unit in ("B", "K", "M"):
        if n < 1024:
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return f"{n:.1f}G"


@contextmanager
def weights_progress(console: Console) -> Iterator:
    """A progress callback for writing external data: a bar on `console` when it is
    a terminal and there are PROGRESS_MIN_BYTES or more to write."""
    bar: Progress | None = None
    task = None

    def update(done: int, total: int) -> None:
        nonlocal bar, task
        if total < PROGRESS_MIN_BYTES or not console.is_terminal:
            return
        if bar is None:
            from rich.progress import (  # loaded only when there is a bar to show
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TransferSpeedColumn,
            )

            columns = [TextColumn("writing weights"), BarColumn(), DownloadColumn(),
                       TransferSpeedColumn()]  # fmt: skip
            bar = Progress(*columns, console=console, transient=True)
            bar.start()
            task = bar.add_task("", total=total)
        bar.update(task, completed=done)

    try:
        yield update
    finally:
        if bar is not None:
            bar.stop()


def print_summary(console: Console, result: FileResult, verbose: bool) -> None:
    """One table: complex values found, node counts per op before and after, time."""
    report = result.report
    if not report.changed:
        console.print("no complex values: the model was written out unchanged")
        return
    print_normalized(console, report, verbose)
    table = Table(title="onnx-decomplex", show_edge=False, title_justify="left")
    table.add_column("")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    for kind, count in report.found().items():
        table.add_row(f"complex {kind}", str(count), "0")
    table.add_row("nodes touching complex values", str(report.rewritten), "0")
    table.add_section()
    for op in sorted(set(report.ops_before) | set(report.ops_after)):
        table.add_row(op, str(report.ops_before.get(op, 0)), str(report.ops_after.get(op, 0)))
    table.add_section()
    table.add_row(
        "nodes", str(sum(report.ops_before.values())), str(sum(report.ops_after.values()))
    )
    table.add_row("rewrite time", "", f"{report.seconds * 1000:.1f} ms")
    console.print(table)
    print_io(console, report)
    print_lowering(console, report)
    if verbose:
        for line in report.explanations + report.lowering_notes:
            console.print(f"  {line}", highlight=False)
        took = [f"{name} {s * 1000:.0f} ms" for name, s in report.pass_seconds.items() if s >= 5e-4]
        console.print(f"passes: {', '.join(took)}", highlight=False)


def print_io(console: Console, report: Report) -> None:
    """Every graph input and output, `name  dtype[shape] -> dtype[shape]`: what a caller
    now feeds and gets (the model's metadata records the packed ones)."""
    table = Table(show_edge=False, box=None, pad_edge=False)
    for header in ("", "name", "before", "", "after"):
        table.add_column(header, no_wrap=True)
    for row in report.io:
        # Text, not markup: "[batch,64]" is not a style.
        table.add_row(row.kind, Text(row.name), Text(row.before), "->", Text(row.after))
    console.print(table)


def print_normalized(console: Console, report: Report, verbose: bool) -> None:
    """How an exporter's mixed graph was read, one line; with -v, each node."""
    if report.normalized is None:
        return
    packed = f"; declared packed: {', '.join(report.packed_io)}" if report.packed_io else ""
    axis0 = f"; {len(report.axis0)} complex pairs on axis 0" if report.axis0 else ""
    console.print(
        f"read as the native-complex model it means: {len(report.readings)} nodes read other "
        f"than as written{packed}{axis0}",
        highlight=False,
    )
    if verbose:
        for line in report.readings:
            console.print(f"  {line}", highlight=False)


def print_lowering(console: Console, report: Report) -> None:
    """What the target's lowering and float64 narrowing changed, one line each."""
    if report.lowered:
        ops = ", ".join(f"{n} {op}" for op, n in sorted(report.lowered.items()))
        matrices = f" (DFT matrices: {size(report.matrix_bytes)})" if report.matrix_bytes else ""
        target = TARGETS.get(report.target)
        why = f"for {target.runs_on}" if target and target.runs_on else "in standard ops"
        console.print(f"lowered {why}: {ops}{matrices}")
    if report.narrowed:
        clamped = f", {report.clamped} values clamped to +-FLT_MAX" if report.clamped else ""
        console.print(f"float64 narrowed to float32 in {len(report.narrowed)} places{clamped}")


def print_lint(
    console: Console, lint: LintResult | None, label: str = "", lowered: Report | None = None
) -> None:
    """The static TensorRT check: PASSED/FAILED, then each finding."""
    if lint is None:
        return
    status = "[green]PASSED[/green]" if lint.passed else "[red]FAILED[/red]"
    counts = f"{len(lint.errors)} errors, {len(lint.warnings)} warnings"
    what = f" {label}" if label else ""
    console.print(f"TensorRT parser check{what}: {status} ({counts}; table: {lint.source})")
    if lowered is not None:
        print_lowering(console, lowered)
    for f in lint.findings:
        color = "red" if f.level == "error" else "yellow"
        console.print(f"  [{color}]{f.level}[/{color}] {f}", highlight=False)


def print_engine(console: Console, result: FileResult) -> None:
    """The engine built, and its comparison with the reference."""
    e = result.engine
    if e is None:
        return
    console.print(
        f"engine: {e.plan} ({e.bytes / 2**20:.1f} MiB, TensorRT {e.version}, built in "
        f"{e.seconds:.1f} s)",
        highlight=False,
    )
    print_validation(console, result.engine_validation)


def _relative(o) -> str:
    """The relative error on the ordinary elements (those no edge value reaches), "none"
    where every element depends on an edge value; on every element without edge values."""
    split = o.edges
    if split is None:
        return f"max rel error {o.max_rel:.3g}"
    if split.ordinary == 0:
        return "max rel error none on ordinary elements (each depends on an edge value)"
    return f"max rel error {split.ordinary_max_rel:.3g} on ordinary elements"


def output_line(o) -> str:
    """One output's verdict. PASSED: its worst error as a share of the tolerance (1 is
    its edge; of the tolerance widened by its precision's noise floor, where that is
    what it passed by), then the relative error. FAILED: led by what failed (the inputs
    without edge values, non-finite values that differ, a shape), then the errors with
    the edge values, the max absolute error among them."""
    share = (f"{o.max_tol:.2g} of the tolerance" if o.floor_tol is None else
             f"{o.floor_tol:.2g} of the tolerance widened by {o.floor_of}'s noise floor")  # fmt: skip
    if o.passed:
        return f"PASSED {o.name}: {share}, {_relative(o)}"
    measured = f"{share}, max abs error {o.max_abs:.3g}, {_relative(o)}"
    lead = (
        f"{o.note}; with edge values, " if o.note and o.edges else f"{o.note}; " if o.note else ""
    )
    return f"FAILED {o.name}: {lead}{measured}"


def print_validation(console: Console, v: ValidationResult | None) -> None:
    """`output_line` per output, the elements that depend on edge values on a line of
    their own, and the reference's notes."""
    if v is None:
        return
    shapes = ", ".join(f"{k}:{'x'.join(map(str, s)) or 'scalar'}" for k, s in v.shapes.items())
    console.print(
        f"validation: reference ({v.reference}) {v.reference_seconds * 1000:.1f} ms, "
        f"{v.runtime} {v.runtime_seconds * 1000:.1f} ms, atol={v.atol:g} rtol={v.rtol:g}, "
        f"inputs {shapes or 'none'}",
        highlight=False,
    )
    for o in v.outputs:
        line = output_line(o)
        color = "green" if o.passed else "red"
        status, rest = line.split(" ", 1)
        console.print(f"  [{color}]{status}[/{color}] {rest}", highlight=False)
        split = o.edges
        if split and split.elements:
            console.print(
                f"    edge values: {split.elements} elements depend on them, worst "
                f"{split.max_tol:.2g} of the tolerance, {split.not_finite} not finite in "
                "the model's own precision",
                highlight=False,
            )
    if v.departure is not None:
        console.print(f"  {v.departure.describe()}", highlight=False)
    for line in v.notes:
        console.print(f"  note: {line}", highlight=False)
