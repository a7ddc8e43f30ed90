"""Tolerances: one output of the rewrite compared with what the original gives there,
element by element, and split by what depends on edge values.

An element passes within atol + rtol |expected|; an infinite or NaN part must be matched
exactly. A complex output is compared as complex values (the rewrite's, packed, read
back), so its error is a modulus.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import is_complex_np
from ..reference import unpack
from .results import EdgeSplit, OutputResult, ValidationResult


def compare_output(
    name: str, expected: np.ndarray, actual: np.ndarray, atol: float, rtol: float
) -> OutputResult:
    """One output, `actual` (packed where `expected` is complex), against `expected`:
    equal for integers and booleans, within the tolerance for floats."""
    if is_complex_np(expected.dtype):
        if actual.shape != (*expected.shape, 2):
            return OutputResult(
                name,
                False,
                np.inf,
                np.inf,
                f"shape {actual.shape}, expected {(*expected.shape, 2)}",
            )
        actual = unpack(actual)
    elif actual.shape != expected.shape:
        return OutputResult(
            name, False, np.inf, np.inf, f"shape {actual.shape}, expected {expected.shape}"
        )
    if expected.dtype.kind in "biu" or expected.dtype.kind not in "fc":
        equal = np.array_equal(expected, actual)
        bad = 0.0 if equal else np.inf
        return OutputResult(name, equal, bad, bad, max_tol=bad)
    # Infinities and NaNs must be matched exactly, part by part: inf - x is inf, and
    # inf <= atol + rtol * inf would let any value through.
    odd = ~np.isfinite(expected)
    if np.any(odd) and not _same_non_finite(expected[odd], actual[odd], atol, rtol):
        return OutputResult(name, False, np.inf, np.inf, "infinities or NaNs differ", np.inf)
    diff, rel, share = errors(np.where(odd, 0, expected), np.where(odd, 0, actual), atol, rtol)
    ok = bool(np.all(share <= 1))
    if diff.size == 0:
        return OutputResult(name, ok, 0.0, 0.0)
    max_abs, max_rel, max_tol = (float(np.max(x)) for x in (diff, rel, share))
    return OutputResult(name, ok, max_abs, max_rel, max_tol=max_tol)


def judge_without_edges(result: ValidationResult, plain: ValidationResult) -> None:
    """Judges each output again with `plain`, the same inputs without edge values: it
    fails where it passed with edge values but fails without them. Splits each output's
    errors by whether its elements depend on the edge values (they change when the
    edge values are replaced)."""
    rows = zip(result.outputs, plain.outputs, result.expected, result.actual, plain.expected,
               strict=True)  # fmt: skip
    for o, p, e, a, q in rows:
        if o.passed and not p.passed:
            note = f": {p.note}" if p.note else ""
            # What it passed by no longer stands.
            o.passed, o.floor_tol, o.floor_of = False, None, None
            o.note = (f"on the same inputs without edge values, {p.max_tol:.2g} of the "
                      f"tolerance, max abs error {p.max_abs:.3g}{note}")  # fmt: skip
        if e.dtype.kind == "c" and a.shape == (*e.shape, 2):
            a = unpack(a)
        if e.dtype.kind not in "fc" or a.shape != e.shape or q.shape != e.shape:
            continue
        diff, rel, share = errors(e, a, result.atol, result.rtol)
        edge = _moved(e, q)
        ordinary = ~edge & np.isfinite(e)
        o.edges = EdgeSplit(
            elements=int(edge.sum()),
            max_tol=float(np.max(share[edge], initial=0.0)),
            not_finite=int((edge & ~np.isfinite(e)).sum()),
            ordinary_max_rel=float(np.max(rel[ordinary], initial=0.0)),
            ordinary_max_tol=float(np.max(share[ordinary], initial=0.0)),
            ordinary=int(ordinary.sum()),
        )


def _same_non_finite(expected, actual, atol: float, rtol: float) -> bool:
    """Values with an infinite or NaN part: those parts equal, the others close."""
    for part in (np.real, np.imag) if is_complex_np(expected.dtype) else (np.asarray,):
        e, a = part(expected), part(actual)
        finite = np.isfinite(e)
        if not np.array_equal(e[~finite], a[~finite], equal_nan=True):
            return False
        if not np.all(np.abs(e[finite] - a[finite]) <= atol + rtol * np.abs(e[finite])):
            return False
    return True


def errors(expected, actual, atol: float, rtol: float) -> tuple[np.ndarray, ...]:
    """Per element: |expected - actual|, that over |expected| and that over the tolerance
    atol + rtol |expected|: 0 for both where they are equal part by part (the same
    infinity, NaN beside NaN), inf where they differ by a NaN or an infinity."""
    expected = np.asarray(expected)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.abs(expected.astype(np.complex128) - actual)
        scale = np.abs(expected)
        same = _moved(expected, actual) == 0
        rel = np.where(same, 0.0, np.nan_to_num(diff / scale, nan=np.inf))
        share = np.where(same, 0.0, np.nan_to_num(diff / (atol + rtol * scale), nan=np.inf))
    return diff, rel, share


def _moved(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where `a` and `b` differ, part by part, NaN counting as equal to NaN."""
    a, b = np.asarray(a), np.asarray(b)
    parts = (np.real, np.imag) if np.iscomplexobj(a) or np.iscomplexobj(b) else (np.asarray,)
    same = np.ones(np.broadcast(a, b).shape, bool)
    for part in parts:
        x, y = part(a), part(b)
        same &= (x == y) | (np.isnan(x) & np.isnan(y))
    return ~same
