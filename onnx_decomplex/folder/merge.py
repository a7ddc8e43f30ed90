"""The reports of a sharded folder run, merged into the report of the whole run.

A zoo too large for one machine runs as N jobs of a CI matrix, each with `--shard K/N`,
and each job writes the report of its shard. They merge when they are the N shards of
one run: the same schema version, tool version and options; shards 1 to N of the same
N, each once; every model in the shard its path hashes to, and in one report only.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DecomplexError
from .baseline import Report
from .zoo import ModelRecord, report_json, shard_of

SAME = ("schema_version", "tool_version", "options")
"""What every shard's report must share with the others."""


def merge_reports(reports: list[tuple[Path, Report]]) -> Report:
    """The report of a whole run, from the reports of its shards, in any order.

    The merged report has no shard, its models sorted by path, its summary recomputed,
    the first shard's `models_dir`, and the longest shard's `wall_seconds` (shards run
    at once).

    Raises:
        DecomplexError: The reports are not the N shards of one run; one line naming
            the report and what does not fit.
    """
    if not reports:
        raise DecomplexError("no reports to merge")
    by_index = _shards(reports)
    records = _records(by_index)
    head = by_index[1][1].data
    data = report_json(
        records,
        models_dir=head.get("models_dir", ""),
        options=head.get("options", {}),
        seconds=max(r.data.get("wall_seconds", 0.0) for _, r in reports),
        shard=None,
        tool_version=head.get("tool_version", ""),
    )
    return Report(data, sorted(records, key=lambda r: r.path))


def _shards(reports: list[tuple[Path, Report]]) -> dict[int, tuple[Path, Report]]:
    """Each report by its shard's index, once each is known to be a shard of the
    first one's run, and all N are there."""
    for path, report in reports:
        if report.shard is None:
            raise DecomplexError(
                "not the report of a shard (its 'shard' is null): merge the reports that "
                "runs with --shard K/N wrote",
                file=str(path),
            )
    first_path, first = reports[0]
    count = first.shard.count
    by_index: dict[int, tuple[Path, Report]] = {}
    for path, report in reports:
        for key in SAME:
            if report.data.get(key) != first.data.get(key):
                raise DecomplexError(
                    f"not the same {key} as {first_path}: "
                    f"{_difference(report.data.get(key), first.data.get(key))}; "
                    "not shards of one run",
                    file=str(path),
                )
        if report.shard.count != count:
            raise DecomplexError(
                f"shard {report.shard} is one of {report.shard.count}, and {first_path} "
                f"(shard {first.shard}) one of {count}",
                file=str(path),
            )
        if report.shard.index in by_index:
            raise DecomplexError(
                f"shard {report.shard} twice: here and in {by_index[report.shard.index][0]}",
                file=str(path),
            )
        by_index[report.shard.index] = (path, report)
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise DecomplexError(
            f"no report of shard {', '.join(missing)}: merge the reports of all {count} shards"
        )
    return by_index


def _records(by_index: dict[int, tuple[Path, Report]]) -> list[ModelRecord]:
    """The shards' records, in shard order, each model once and in the shard its path
    hashes to."""
    seen: dict[str, Path] = {}
    records: list[ModelRecord] = []
    for index in sorted(by_index):
        path, report = by_index[index]
        for record in report.records:
            if record.path in seen:
                raise DecomplexError(
                    f"model '{record.path}' is in {seen[record.path]} too", file=str(path)
                )
            if not report.shard.holds(record.path):
                raise DecomplexError(
                    f"model '{record.path}' belongs to shard "
                    f"{shard_of(record.path, report.shard.count)}/{report.shard.count}, "
                    f"not {report.shard}",
                    file=str(path),
                )
            seen[record.path] = path
            records.append(record)
    return records


def _difference(value, other) -> str:
    """`value` against `other`, JSON: by key for two objects (the options)."""
    if isinstance(value, dict) and isinstance(other, dict):
        keys = sorted(k for k in value.keys() | other.keys() if value.get(k) != other.get(k))
        return ", ".join(f"{k} {_json(value.get(k))}, not {_json(other.get(k))}" for k in keys)
    return f"{_json(value)}, not {_json(other)}"


def _json(value) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."
