"""Compare a folder run with an earlier report: what regressed, what improved.

A regression is:
- a model that passed (ok or no-complex) and no longer does, or is gone;
- a model that failed in a new way (another status), or a new model that fails;
- an output whose worst absolute error grew past `max_error_growth` times the
  baseline's, measured from a floor of `ERROR_FLOOR` times atol, so that noise far
  below the tolerance is not a regression (an error above the tolerance already
  fails validation);
- a rewritten model whose node count grew by more than `max_node_growth` percent.

A model that fails the same way as in the baseline (the fixture the tool must
refuse, say) is known, not a regression.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .zoo import ModelRecord

# Errors are compared from 1% of atol up: float32 kernels differ by a few ulps
# between CPUs, and an error that was exactly 0 must not make that a regression.
ERROR_FLOOR = 1e-2
DEFAULT_MAX_ERROR_GROWTH = 10.0
DEFAULT_MAX_NODE_GROWTH = 10.0


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
    floor = ERROR_FLOOR * atol
    for o in new.outputs:
        b = before.get(o.name)
        if b is None or b.max_abs is None or o.max_abs is None:
            continue
        if o.max_abs > growth * max(b.max_abs, floor):
            cmp.regressions.append(
                Change(
                    new.path,
                    f"output '{o.name}' worst error grew from {b.max_abs:.3g} "
                    f"to {o.max_abs:.3g} (over {growth:g}x)",
                )  # fmt: skip
            )
        elif b.max_abs > growth * max(o.max_abs, floor):
            cmp.improvements.append(
                Change(
                    new.path,
                    f"output '{o.name}' worst error fell from {b.max_abs:.3g} to {o.max_abs:.3g}",
                )  # fmt: skip
            )


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
