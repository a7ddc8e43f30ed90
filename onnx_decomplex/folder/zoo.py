"""Folder mode: every model under a folder, one record each, one report for all.

A model's failure is recorded, never raised, so one bad file cannot stop the run.
Records are sorted by path, so a report does not depend on `jobs`.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import re
import time
import traceback
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import onnx

from .. import __version__
from ..contract import IORow
from ..errors import DecomplexError, UnsupportedError
from ..files.external import data_files
from ..options import Options
from ..pipeline import Files, convert_file, siblings
from ..report import initializer_bytes, op_histogram

SCHEMA_VERSION = 3
READS_VERSIONS = (1, 2, 3)
"""Report versions a baseline may have: version 1 has no `max_tol`, versions 1 and 2
no split of the errors by edge values."""

OK, NO_COMPLEX = "ok", "no-complex"
UNSUPPORTED, VALIDATION_FAILED, ERROR = "unsupported", "validation-failed", "error"
STATUSES = (OK, NO_COMPLEX, UNSUPPORTED, VALIDATION_FAILED, ERROR)
PASSING = frozenset({OK, NO_COMPLEX})


@dataclass
class OutputError:
    """The worst error of one graph output; None where it was infinite. `max_tol` is
    the error as a share of the tolerance (see `validate.OutputResult`); None in a
    version 1 report. Where the inputs held edge values, the errors split by whether
    elements depend on them (`validate.EdgeSplit`): `edge_*` of those, `ordinary_*` of
    the others; None without edge values, and in reports before version 3. `floor_tol`:
    the share of the tolerance widened by the noise floor of `floor_of` (float32 or
    float64), where the output passed by that (`validate.OutputResult`)."""

    name: str
    passed: bool
    max_abs: float | None
    max_rel: float | None
    max_tol: float | None = None
    edge_elements: int | None = None
    edge_max_tol: float | None = None
    edge_not_finite: int | None = None
    ordinary_max_rel: float | None = None
    ordinary_max_tol: float | None = None
    floor_tol: float | None = None
    floor_of: str | None = None


@dataclass
class ModelRecord:
    """What happened to one model. Field names are the JSON report's (see docs/report.md)."""

    path: str
    status: str
    message: str = ""
    complex_found: dict[str, int] = field(default_factory=dict)
    nodes_before: int = 0
    nodes_after: int = 0
    ops_before: dict[str, int] = field(default_factory=dict)
    ops_after: dict[str, int] = field(default_factory=dict)
    initializer_bytes_before: int = 0
    initializer_bytes_after: int = 0
    reference: str | None = None
    outputs: list[OutputError] = field(default_factory=list)
    framework: list[OutputError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    io: list[IORow] = field(default_factory=list)
    rewrite_seconds: float = 0.0
    validate_seconds: float = 0.0
    departure: str | None = None

    @property
    def passed(self) -> bool:
        return self.status in PASSING

    @property
    def worst_abs(self) -> float | None:
        """The largest max_abs over every comparison, or None with no finite one."""
        found = [o.max_abs for o in self.outputs + self.framework if o.max_abs is not None]
        return max(found) if found else None


@dataclass(frozen=True)
class Shard:
    """Share `index` of `count` (1-based) of a folder's models, for a CI job matrix.

    A model's shard depends on its relative path alone (see `shard_of`), so that adding
    or removing a model never moves another to a different shard.
    """

    index: int
    count: int

    def __post_init__(self):
        if not 1 <= self.index <= self.count:
            raise ValueError(f"shard {self}: K must be 1 to N (shards are numbered from 1)")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`K/N`, with 1 <= K <= N.

        Raises:
            ValueError: Not of that form, saying why.
        """
        m = re.fullmatch(r"(\d+)/(\d+)", text.strip())
        if m is None:
            raise ValueError(f"shard '{text}' is not K/N (such as 1/4)")
        return cls(int(m[1]), int(m[2]))

    def holds(self, rel: str) -> bool:
        """Whether the model at `rel` (relative to the folder, with /) is in this shard."""
        return shard_of(rel, self.count) == self.index


def shard_of(rel: str, count: int) -> int:
    """The shard, 1 to `count`, of the model at `rel`: sha256(rel) mod count, plus 1."""
    digest = hashlib.sha256(rel.encode()).digest()
    return int.from_bytes(digest, "big") % count + 1


def find_models(root: Path, exclude: Path | None = None, shard: Shard | None = None) -> list[Path]:
    """Every .onnx file under `root`, recursively, sorted, skipping `exclude` and, with
    a shard, the models of other shards."""
    found = []
    for path in sorted(root.rglob("*.onnx")):
        if exclude is not None and path.resolve().is_relative_to(exclude.resolve()):
            continue
        if shard is not None and not shard.holds(path.relative_to(root).as_posix()):
            continue
        if path.is_file():
            found.append(path)
    return found


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _failed(src: Path, rel: str, status: str, message: str) -> ModelRecord:
    """A failed model's record, with what its file says before any rewrite."""
    record = ModelRecord(rel, status, message)
    try:
        model = onnx.load(str(src), load_external_data=False)
    except Exception:  # the model itself may be what failed
        return record
    ops = op_histogram(model)
    record.nodes_before = sum(ops.values())
    record.ops_before = dict(sorted(ops.items()))
    record.initializer_bytes_before = initializer_bytes(model)
    return record


def _split(edges) -> tuple:
    """The edge-value fields of an OutputError, from a `validate.EdgeSplit` or None."""
    if edges is None:
        return (None,) * 5
    return (edges.elements, _finite(edges.max_tol), edges.not_finite,
            _finite(edges.ordinary_max_rel), _finite(edges.ordinary_max_tol))  # fmt: skip


def _errors(v) -> list[OutputError]:
    return [
        OutputError(
            o.name,
            o.passed,
            _finite(o.max_abs),
            _finite(o.max_rel),
            _finite(o.max_tol),
            *_split(o.edges),
            o.floor_tol,
            o.floor_of,
        )  # fmt: skip
        for o in v.outputs
    ]


def run_model(src: Path, dst: Path, rel: str, options: Options) -> ModelRecord:
    """Converts one model and records the outcome; never raises.

    A sibling `NAME.npz` supplies the inputs, and, when it saves them, the outputs
    that stand in for the reference evaluator (see `validate.load_saved`). A sibling
    `NAME.expected.npz` holds the outputs of the framework that exported the model,
    which the rewrite must match too.
    """
    saved, expected = siblings(src)
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        result = convert_file(src, dst, options, files=Files(inputs=saved, expected=expected))
    except UnsupportedError as e:
        return _failed(src, rel, UNSUPPORTED, str(e))
    except DecomplexError as e:
        return _failed(src, rel, ERROR, str(e))
    except Exception as e:  # a bug; recorded so that the other models still run
        where = traceback.extract_tb(e.__traceback__)[-1]
        return _failed(src, rel, ERROR, f"{src}: internal error {type(e).__name__}: {e} "
                                        f"({Path(where.filename).name}:{where.lineno})")  # fmt: skip
    report, v = result.report, result.validation
    record = ModelRecord(
        rel,
        OK if report.has_complex else NO_COMPLEX,
        complex_found=report.found() if report.has_complex else {},
        nodes_before=sum(report.ops_before.values()),
        nodes_after=sum(report.ops_after.values()),
        ops_before=dict(sorted(report.ops_before.items())),
        ops_after=dict(sorted(report.ops_after.items())),
        initializer_bytes_before=report.initializer_bytes_before,
        initializer_bytes_after=report.initializer_bytes_after,
        warnings=report.warnings,
        io=report.io if report.changed else [],
        rewrite_seconds=report.seconds,
    )
    if v is not None:
        record.reference = v.reference
        record.outputs = _errors(v)
    if result.framework is not None:
        record.framework = _errors(result.framework)
    record.validate_seconds = sum(
        x.reference_seconds + x.runtime_seconds for x in result.validations
    )
    failed = [f"{o.name} (against {x.reference})" for x in result.validations
              for o in x.outputs if not o.passed]  # fmt: skip
    if failed:
        record.status = VALIDATION_FAILED
        record.message = f"{src}: validation failed for {', '.join(failed)}"
        if v is not None and v.departure is not None:
            record.departure = v.departure.describe()
            record.message += f"; {record.departure}"
    return record


def _run_one(args) -> ModelRecord:
    return run_model(*args)


def run_folder(
    root: Path,
    out: Path,
    options: Options,
    jobs: int = 1,
    on_done: Callable[[ModelRecord], None] | None = None,
    runner: Callable[[tuple], ModelRecord] = _run_one,
    shard: Shard | None = None,
) -> list[ModelRecord]:
    """Converts every model under `root` into the same relative path under `out`.

    Args:
        root: The models folder.
        out: The output folder; its models are skipped when it lies inside `root`.
        options: Per-model options.
        jobs: Models converted at once, each in its own process when over 1.
        on_done: Called with each record as it completes (for a progress bar).
        runner: Converts one model and records it, never raising: `run_model` on
            (src, dst, rel, options); a module-level function, for worker processes.
        shard: Convert only this shard's models.

    Returns:
        One record per model, sorted by relative path.
    """
    tasks = []
    for src in find_models(root, exclude=out, shard=shard):
        rel = src.relative_to(root).as_posix()
        tasks.append((src, out / rel, rel, options))
    records = []

    def done(record: ModelRecord) -> None:
        records.append(record)
        if on_done:
            on_done(record)

    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            done(runner(task))
    else:
        _run_in_workers(tasks, jobs, runner, done)
    return sorted(records, key=lambda r: r.path)


def _run_in_workers(tasks: list, jobs: int, runner, done: Callable[[ModelRecord], None]) -> None:
    """Runs `tasks` in `jobs` worker processes.

    A worker that dies (killed, or out of memory) breaks the pool, and every task it had
    not finished fails with it. Those run again, one worker at a time, so that a task
    that kills its worker again is known, recorded as an error, and costs no other.
    """
    # spawn, not fork: a forked onnxruntime can deadlock on its thread pools.
    context = multiprocessing.get_context("spawn")
    pending = list(tasks)
    while pending:
        finished = set()
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(runner, task): i for i, task in enumerate(pending)}
            for future in as_completed(futures):
                if future.exception() is None:  # a runner records its errors: never raises
                    finished.add(futures[future])
                    done(future.result())
        left = [task for i, task in enumerate(pending) if i not in finished]
        if left and jobs == 1:
            # One worker takes tasks in order: it died on the first one unfinished.
            (src, _, rel, _), *left = left
            done(_failed(src, rel, ERROR, f"{src}: the worker process converting it died "
                                          "(killed, or out of memory)"))  # fmt: skip
        pending, jobs = left, 1


def input_files(models: list[Path], written: list[Path]) -> list[tuple[Path, str]]:
    """What a folder run reads, by role: each model, the saved inputs and outputs beside
    it, and its data files where a path the run writes (of `written`) lies in its folder.

    A model's data files are read from inside its folder only (the read refuses any other,
    as onnx does), so only there can the run write over one; only those models are read
    here, ahead of their conversion: the others are read once, when they are converted.
    """
    holding = {folder for path in written for folder in _folders_of(path)}
    found = []
    for src in models:
        found.append((src, "input model"))
        saved, expected = siblings(src)
        found += [(path, f"{what} of {src}") for path, what in
                  ((saved, "saved inputs"), (expected, "expected outputs")) if path]  # fmt: skip
        if src.parent.resolve() not in holding:
            continue
        try:
            model = onnx.load(str(src), load_external_data=False)
        except Exception:  # not a model: its run will say so
            continue
        for location in data_files(model):
            found.append((src.parent / location, f"data file of {src}"))
    return found


def _folders_of(path: Path) -> list[Path]:
    """The folders a path lies in, as it resolves (a folder's own path included)."""
    resolved = path.resolve()
    return [resolved, *resolved.parents]


def summarize(records: list[ModelRecord]) -> dict:
    """Counts by status, and totals."""
    counts = Counter(r.status for r in records)
    return {
        "models": len(records),
        "by_status": {s: counts.get(s, 0) for s in STATUSES},
        "passed": sum(r.passed for r in records),
        "failed": sum(not r.passed for r in records),
        "nodes_before": sum(r.nodes_before for r in records),
        "nodes_after": sum(r.nodes_after for r in records),
        "rewrite_seconds": round(sum(r.rewrite_seconds for r in records), 6),
        "validate_seconds": round(sum(r.validate_seconds for r in records), 6),
    }


def to_json(
    records: list[ModelRecord],
    root: Path,
    options: Options,
    seconds: float,
    shard: Shard | None = None,
) -> dict:
    """The JSON report of a run: a version, what was run, the models and a summary."""
    return report_json(
        records,
        models_dir=str(root),
        options=options.reported(),
        seconds=seconds,
        shard=shard,
    )


def report_json(
    records: list[ModelRecord],
    *,
    models_dir: str,
    options: dict,
    seconds: float,
    shard: Shard | None,
    tool_version: str = __version__,
) -> dict:
    """The JSON report (see docs/report.md), made now, of `records` sorted by path."""
    records = sorted(records, key=lambda r: r.path)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool_version": tool_version,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "models_dir": models_dir,
        "options": options,
        "shard": {"index": shard.index, "count": shard.count} if shard else None,
        "wall_seconds": round(seconds, 6),
        "models": [asdict(r) for r in records],
        "summary": summarize(records),
    }


def records_from_json(report: dict) -> list[ModelRecord]:
    """The model records of a JSON report (a baseline), checking its version."""
    version = report.get("schema_version")
    if version not in READS_VERSIONS:
        raise DecomplexError(
            f"report schema version {version!r}; this tool reads versions "
            f"{', '.join(map(str, READS_VERSIONS))}"
        )
    records = []
    for m in report["models"]:
        outputs = [OutputError(**o) for o in m.get("outputs", [])]
        framework = [OutputError(**o) for o in m.get("framework", [])]
        io = [IORow(**r) for r in m.get("io", [])]
        records.append(ModelRecord(**{**m, "outputs": outputs, "framework": framework, "io": io}))
    return records
