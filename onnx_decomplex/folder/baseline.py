"""Read a folder run's JSON report back, every field checked, and compare a run with an
earlier report (the baseline): what regressed, what improved.

A regression is:
- a model that passed (ok or no-complex) and no longer does, or is gone;
- a model that failed in a new way (another status), or a new model that fails;
- an output whose worst error, as a share of the tolerance (`max_tol`; the absolute
  error against a version 1 baseline), grew past `max_error_growth` times the
  baseline's, measured from a floor of `ERROR_FLOOR` of the tolerance, so that noise
  far below it is not a regression (an error above it already fails validation).
  A share does not grow with the values' scale: an error of 1e13 on values of 1e20
  (the edge values) is as small as one of 1e-7 on values of 1;
- a rewritten model whose node count grew by more than `max_node_growth` percent.

A model that fails the same way as in the baseline (the fixture the tool must
refuse, say) is known, not a regression.
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

from ..contract import IORow
from ..errors import DecomplexError
from ..options import DEFAULT_MAX_ERROR_GROWTH, DEFAULT_MAX_NODE_GROWTH
from .zoo import (
    READS_VERSIONS,
    STATUSES,
    ModelRecord,
    OutputError,
    Shard,
    records_from_json,
)

# Errors are compared from 1% of the tolerance up: float32 kernels differ by a few ulps
# between CPUs, and an error that was exactly 0 must not make that a regression.
ERROR_FLOOR = 1e-2


@dataclass
class Change:
    """One difference from the baseline, about one model."""

    path: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}: {self.what}"


@dataclass
class Comparison:
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    known: list[Change] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.regressions


def _errors(old: ModelRecord, new: ModelRecord, growth: float, atol: float, cmp: Comparison):
    before = {o.name: o for o in old.outputs}
    for o in new.outputs:
        b = before.get(o.name)
        if b is None:
            continue
        if b.max_tol is not None and o.max_tol is not None:
            was, now, floor, unit = b.max_tol, o.max_tol, ERROR_FLOOR, " of the tolerance"
        else:
            was, now, floor, unit = b.max_abs, o.max_abs, ERROR_FLOOR * atol, ""
        if was is None or now is None:
            continue
        if now > growth * max(was, floor):
            what = f"output '{o.name}' worst error grew from {was:.3g} to {now:.3g}{unit} (over {growth:g}x)"  # fmt: skip
            cmp.regressions.append(Change(new.path, what))
        elif was > growth * max(now, floor):
            what = f"output '{o.name}' worst error fell from {was:.3g} to {now:.3g}{unit}"
            cmp.improvements.append(Change(new.path, what))


def _nodes(old: ModelRecord, new: ModelRecord, growth_pct: float, cmp: Comparison):
    if old.nodes_after and new.nodes_after > old.nodes_after * (1 + growth_pct / 100):
        cmp.regressions.append(
            Change(
                new.path,
                f"node count grew from {old.nodes_after} to {new.nodes_after} "
                f"(over {growth_pct:g}%)",
            )  # fmt: skip
        )
    elif new.nodes_after < old.nodes_after:
        cmp.improvements.append(
            Change(new.path, f"node count fell from {old.nodes_after} to {new.nodes_after}")
        )


def compare(
    baseline: list[ModelRecord],
    current: list[ModelRecord],
    *,
    max_error_growth: float = DEFAULT_MAX_ERROR_GROWTH,
    max_node_growth: float = DEFAULT_MAX_NODE_GROWTH,
    atol: float = 1e-5,
) -> Comparison:
    """Regressions, improvements and known failures of `current` against `baseline`."""
    cmp = Comparison()
    old_by_path = {r.path: r for r in baseline}
    new_paths = {r.path for r in current}
    for path in sorted(set(old_by_path) - new_paths):
        if old_by_path[path].passed:
            cmp.regressions.append(Change(path, "in the baseline, but not found"))
    for new in current:
        old = old_by_path.get(new.path)
        if old is None:
            if not new.passed:
                cmp.regressions.append(Change(new.path, f"new model, {new.status}: {new.message}"))
            continue
        if old.status != new.status:
            if new.passed:
                cmp.improvements.append(Change(new.path, f"was {old.status}, now {new.status}"))
            else:
                cmp.regressions.append(
                    Change(new.path, f"was {old.status}, now {new.status}: {new.message}")
                )
            continue
        if not new.passed:
            cmp.known.append(Change(new.path, f"{new.status}, as in the baseline"))
            continue
        _errors(old, new, max_error_growth, atol, cmp)
        _nodes(old, new, max_node_growth, cmp)
    return cmp


_JSON_KINDS = {"dict": "an object", "list": "a list", "str": "a string", "int": "a number",
               "float": "a number", "bool": "a boolean", "NoneType": "null"}  # fmt: skip


def _json_kind(value) -> str:
    return _JSON_KINDS.get(type(value).__name__, type(value).__name__)


def _check_fields(entry, cls, where: str) -> None:
    """`entry` is a JSON object whose keys are `cls`'s fields, each of the JSON type
    that field holds (a number for a float, and so on), with finite numbers."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where} is {_json_kind(entry)}, not an object")
    kinds = {f.name: str(f.type) for f in fields(cls)}
    for key, value in entry.items():
        kind = kinds.get(key)
        if kind is None:
            raise ValueError(f"{where} has an unknown field '{key}'")
        if value is None and "None" in kind:
            continue
        if kind.startswith(("float", "int")):
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            ok = ok and math.isfinite(value) and (kind.startswith("float") or value == int(value))
        elif kind.startswith("str"):
            ok = isinstance(value, str)
        elif kind.startswith("bool"):
            ok = isinstance(value, bool)
        elif kind.startswith("dict"):
            ok = isinstance(value, dict) and all(
                isinstance(v, int) and not isinstance(v, bool) for v in value.values()
            )
        elif kind.startswith("list[str]"):
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        else:  # list[OutputError]
            ok = isinstance(value, list)
        if not ok:
            raise ValueError(f"{where} field '{key}' is {json.dumps(value)[:40]}, not {kind}")


_TOP_FIELDS = {"schema_version": (int,), "tool_version": (str,), "created": (str,),
               "models_dir": (str,), "options": (dict,), "shard": (dict, type(None)),
               "wall_seconds": (int, float), "models": (list,), "summary": (dict,),
               "baseline": (dict,)}  # fmt: skip
"""A report's fields, with the JSON types each may hold: any other field is refused."""


@dataclass
class Report:
    """A JSON report read back, every field checked: `data` as decoded, its model records,
    and its shard (None for a whole folder, or shards merged)."""

    data: dict
    records: list[ModelRecord]
    shard: Shard | None = None


def _check_top(data: dict) -> None:
    for key, value in data.items():
        types = _TOP_FIELDS.get(key)
        if types is None:
            raise ValueError(f"the report has an unknown field '{key}'")
        ok = isinstance(value, types) and not isinstance(value, bool)
        if ok and isinstance(value, float):
            ok = math.isfinite(value)
        if not ok:
            kinds = " or ".join(dict.fromkeys(_JSON_KINDS[t.__name__] for t in types))
            raise ValueError(f"its '{key}' is {json.dumps(value)[:40]}, not {kinds}")


def _shard(value: dict | None) -> Shard | None:
    """A report's `shard`: null, or {"index": K, "count": N} with 1 <= K <= N."""
    if value is None:
        return None
    ints = [v for v in value.values() if isinstance(v, int) and not isinstance(v, bool)]
    if (
        set(value) == {"index", "count"}
        and len(ints) == 2
        and 1 <= value["index"] <= value["count"]
    ):
        return Shard(value["index"], value["count"])
    raise ValueError(
        f"its 'shard' is {json.dumps(value)[:60]}, not "
        '{"index": K, "count": N} with 1 <= K <= N'
    )


def parse_report(data) -> Report:
    """A decoded JSON report, every field checked.

    Raises:
        ValueError: Not a report of this tool, saying where.
    """
    if not isinstance(data, dict):
        raise ValueError(f"the report is {_json_kind(data)}, not an object")
    if data.get("schema_version") not in READS_VERSIONS:
        raise ValueError(
            f"report schema version {data.get('schema_version')!r}; this tool reads "
            f"versions {', '.join(map(str, READS_VERSIONS))}"
        )
    models = data.get("models")
    if not isinstance(models, list):
        raise ValueError("its 'models' is missing or not a list")
    _check_top(data)
    for i, m in enumerate(models):
        _check_fields(m, ModelRecord, f"models[{i}]")
        for key in ("path", "status"):
            if key not in m:
                raise ValueError(f"models[{i}] has no '{key}'")
        if m["status"] not in STATUSES:
            raise ValueError(f"models[{i}] status '{m['status']}' is none of {', '.join(STATUSES)}")
        for key, cls in (("outputs", OutputError), ("framework", OutputError), ("io", IORow)):
            for j, o in enumerate(m.get(key, [])):
                _check_fields(o, cls, f"models[{i}].{key}[{j}]")
                needed = {f.name for f in fields(cls) if f.default is MISSING}
                missing = needed - set(o)
                if missing:
                    raise ValueError(f"models[{i}].{key}[{j}] has no '{sorted(missing)[0]}'")
    return Report(data, records_from_json(data), _shard(data.get("shard")))


def parse_baseline(data) -> list[ModelRecord]:
    """The model records of a decoded JSON report (see `parse_report`)."""
    return parse_report(data).records


def read_report(path: str | Path, role: str = "baseline") -> Report:
    """An earlier JSON report, every field checked (see `parse_report`).

    Args:
        path: The report's file.
        role: What the file is to this run, for errors: "baseline", "shard report".

    Raises:
        DecomplexError: The file cannot be read, is not JSON, or is not a report of
            this tool; one line naming the file and what is wrong.
    """
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError) as e:
        raise DecomplexError(f"cannot read the {role}: {e}", file=str(path)) from None
    try:
        return parse_report(data)
    except (ValueError, DecomplexError) as e:
        message = e.message if isinstance(e, DecomplexError) else str(e)
        raise DecomplexError(f"not a report of this tool: {message}", file=str(path)) from None


def read_baseline(path: str | Path) -> list[ModelRecord]:
    """The model records of an earlier JSON report (see `read_report`)."""
    return read_report(path).records


def baseline_for(report: Report, shard: Shard | None, path: str | Path) -> list[ModelRecord]:
    """The records of a baseline that a run of `shard` (None: every model) compares
    with: the shard's own models of a whole-folder baseline.

    Raises:
        DecomplexError: The baseline is one shard's report: a run sees the models of
            its shard only, so every other model would count as gone or new.
    """
    if report.shard is not None:
        raise DecomplexError(
            f"the baseline is the report of shard {report.shard} alone; give the report "
            "of a whole run, or the shards' reports merged",
            file=str(path),
        )
    if shard is None:
        return report.records
    return [r for r in report.records if shard.holds(r.path)]
