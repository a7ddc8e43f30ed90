"""The float64 rejudge: an output that fails while the original computes in float32
(or complex64, float16, bfloat16) is judged again against the original run in float64
(`upcast`), since float32's rounding, which both sides make, is not the rewrite's.

It passes when the rewrite is no further from the float64 run than `PRECISION_FACTOR`
times the float32 reference is, or when every element is within its tolerance plus
`noise.FACTOR` times float32's noise floor there (`noise`). Elements where float32
itself breaks down, in the reference and the rewrite alike, are left out first
(`_leave_out_breakdown`), and the note says how many. An output of a model that
computes in float64 has nothing wider to be judged against: it passes where every
element is within its tolerance plus `noise.FACTOR` times float64's own noise floor.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper
from onnx.external_data_helper import uses_external_data

from .. import cmath
from ..constants import attribute_value
from ..dtypes import TYPE_ATTRIBUTES, is_complex_np, np_of
from ..errors import DecomplexError, ValidationTimeout
from ..graphs import graphs_in
from ..reference import unpack
from . import noise
from .judge import compare_output
from .results import OutputResult, ValidationResult
from .runners import Deadline, run_reference

PRECISION_FACTOR = 4.0
"""A rewrite that fails at the model's own precision still passes when it is no
further than this many times the reference's own distance from a float64 run."""

_WIDER = {
    TensorProto.FLOAT: TensorProto.DOUBLE,
    TensorProto.FLOAT16: TensorProto.DOUBLE,
    TensorProto.BFLOAT16: TensorProto.DOUBLE,
    TensorProto.COMPLEX64: TensorProto.COMPLEX128,
}


def upcast(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """A copy of `model` computing in float64 and complex128 where it computes in
    float32, float16, bfloat16 or complex64: its values, constants and casts. None
    when it has nothing narrower, or keeps tensors on disk."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    changed = False
    for g in graphs_in(copy.graph):
        for v in [*g.input, *g.output, *g.value_info]:
            t = v.type.tensor_type
            if v.type.HasField("tensor_type") and t.elem_type in _WIDER:
                t.elem_type = _WIDER[t.elem_type]
                changed = True
        for t in g.initializer:
            if uses_external_data(t):
                return None
            changed |= t.data_type in _WIDER
            _widen_tensor(t)
        for node in g.node:
            for attr in node.attribute:
                if attr.type == AttributeProto.TENSOR:
                    if uses_external_data(attr.t):
                        return None
                    changed |= attr.t.data_type in _WIDER
                    _widen_tensor(attr.t)
                elif attr.type == AttributeProto.INT and attr.name in TYPE_ATTRIBUTES:
                    if attr.i in _WIDER:
                        attr.i = _WIDER[attr.i]
                        changed = True
                elif node.op_type == "Constant" and attr.name in ("value_float", "value_floats"):
                    value = attribute_value(attr)
                    attr.CopyFrom(
                        onnx.helper.make_attribute(
                            "value", numpy_helper.from_array(value.astype(np.float64), "")
                        )
                    )
                    changed = True
    return copy if changed else None


def _widen_tensor(t: TensorProto) -> None:
    wide = _WIDER.get(t.data_type)
    if wide is not None:
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np_of(wide)), t.name))


def _wide_feeds(feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    wide = {"c": np.complex128, "f": np.float64}
    return {k: v.astype(wide.get(v.dtype.kind, v.dtype)) for k, v in feeds.items()}


def judge_failures(
    result: ValidationResult,
    original: onnx.ModelProto,
    inputs: dict[str, np.ndarray],
    deadline: Deadline,
) -> None:
    """Judges the failed outputs of `result` again against the original run in float64,
    when it computes in a narrower float type (see the module); where it has none to
    widen, its float64 outputs within float64's own noise floor (`_judge_float64`)."""
    wide = upcast(original)
    if wide is None:
        _judge_float64(result, original, inputs, deadline)
        return
    feeds = _wide_feeds(inputs)
    try:
        with deadline.stage("the reference evaluator, in float64"):
            truth = run_reference(wide, feeds, deadline.left())
    except ValidationTimeout:
        raise
    except DecomplexError:
        return  # the float64 reading cannot run: the failure stands as it is

    unmeasured = []  # why the noise floor could not be measured, once asked for
    # The roundoff of the narrowest float the failed outputs are computed in: float16's
    # unit is 8192 times float32's.
    narrow = [_precision(e) for o, e in zip(result.outputs, result.expected, strict=True)
              if not o.passed and e.dtype.kind in "fc"]  # fmt: skip
    eps = max((float(np.finfo(d).eps) for d in narrow), default=float(np.finfo(np.float32).eps))
    name = np.dtype(min(narrow, key=lambda d: np.dtype(d).itemsize, default=np.float32)).name

    @functools.cache
    def floors() -> list[np.ndarray] | None:
        try:
            with deadline.stage(f"the reference evaluator, perturbed at {name}'s roundoff"):
                return noise.floors(wide, feeds, truth, eps=eps, timeout=deadline.left())
        except ValidationTimeout:
            raise
        except Exception as e:  # a node the perturbation cannot run: no floor excuses anything
            unmeasured.append(f"{name}'s noise floor not measured: {e}")
            return None

    for i, (o, e, a, t) in enumerate(
        zip(result.outputs, result.expected, result.actual, truth, strict=True)
    ):
        if o.passed or e.dtype.kind not in "fc":
            continue
        o, e, a, t, keep, left_out = _leave_out_breakdown(
            o, e, a, np.asarray(t), result.atol, result.rtol
        )
        # A note means shapes or infinities differ: no rounding explains those.
        if not o.passed and not o.note:
            floor = functools.partial(_kept, floors, i, keep)
            o = _judge_precision(o, e, a, t, floor, result.atol, result.rtol)
            if not o.passed and unmeasured:
                o.note = f"{o.note}; {unmeasured[0]}"
        if left_out:
            o.note = f"{o.note}; {left_out}" if o.note else left_out
        result.outputs[i] = o


def _judge_float64(
    result: ValidationResult,
    original: onnx.ModelProto,
    inputs: dict[str, np.ndarray],
    deadline: Deadline,
) -> None:
    """Judges the failed float64 outputs of `result` again, each element within its
    tolerance plus `noise.FACTOR` times float64's own noise floor there: the reference
    is the float64 run, and an op whose condition number is huge (asin at 1, a log
    near 1) turns float64's last unit into far more than any fixed tolerance allows,
    in numpy's arithmetic as in the rewrite's."""
    failed = [
        i for i, (o, e) in enumerate(zip(result.outputs, result.expected, strict=True))
        if not o.passed and not o.note and e.dtype.kind in "fc" and _precision(e) == np.float64
    ]  # fmt: skip
    if not failed:
        return
    try:
        with deadline.stage("the reference evaluator, perturbed at float64's roundoff"):
            every = noise.floors(original, inputs, result.expected,
                                 eps=float(np.finfo(np.float64).eps), timeout=deadline.left())  # fmt: skip
    except ValidationTimeout:
        raise
    except Exception:  # a node the perturbation cannot run: no floor excuses anything
        return
    for i in failed:
        o, e, a = result.outputs[i], result.expected[i], result.actual[i]
        a = unpack(a) if is_complex_np(e.dtype) else a
        if a.shape == e.shape and np.array_equal(np.isfinite(a), np.isfinite(e)):
            share = _floor_share(a, e, every[i], result.atol, result.rtol)
            if share <= 1:
                result.outputs[i] = replace(o, passed=True, floor_tol=share, floor_of="float64")


def _precision(expected: np.ndarray) -> np.dtype:
    """The real type `expected` is computed in: float32 for complex64."""
    return np.real(expected.reshape(-1)[:0]).dtype


def _kept(floors: Callable, i: int, keep: np.ndarray | None) -> np.ndarray | None:
    """Output `i`'s floor, at the elements `keep` holds (all for None); None where it
    was not measured. A floor of another shape than the output's is returned as it is,
    for `_floor_share` to refuse."""
    every = floors()
    if every is None:
        return None
    floor = every[i]
    return floor if keep is None or floor.shape != keep.shape else floor[keep]


def _max_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest |a - b| over elements where both are finite; 0 for none."""
    a, b = np.asarray(a, np.complex128), np.asarray(b, np.complex128)
    both = np.isfinite(a) & np.isfinite(b)
    return float(np.max(np.abs(a[both] - b[both]))) if np.any(both) else 0.0


def _judge_precision(
    result: OutputResult,
    expected: np.ndarray,
    actual: np.ndarray,
    truth: np.ndarray,
    floor: Callable[[], np.ndarray | None],
    atol: float,
    rtol: float,
) -> OutputResult:
    """A failed output against the float64 run: it passes when the rewrite is no
    further from it than PRECISION_FACTOR times the reference's own distance, or when
    every element is within its tolerance plus `noise.FACTOR` times float32's noise
    floor there (`floor`, made when first asked for; see `noise`)."""
    if is_complex_np(expected.dtype):
        actual = unpack(actual)
    if truth.shape != expected.shape or actual.shape != expected.shape:
        return result
    if not np.array_equal(np.isfinite(actual), np.isfinite(expected)):
        return result
    ref_off, rewrite_off = _max_distance(expected, truth), _max_distance(actual, truth)
    # The accumulation is in the real type: float32 for complex64.
    precision = str(_precision(expected))
    detail = f"reference off by {ref_off:.3g}, rewrite off by {rewrite_off:.3g} against float64"
    if rewrite_off <= PRECISION_FACTOR * ref_off + atol:
        return replace(result, passed=True, note=f"within {precision} accumulation error: {detail}")
    share = _floor_share(actual, truth, floor(), atol, rtol)
    if share <= 1:
        return replace(result, passed=True, floor_tol=share, floor_of=precision, note=detail)
    note = f"{result.note}; " if result.note else ""
    return replace(result, note=f"{note}beyond {precision} error: {detail}")


def _floor_share(actual, truth, floor: np.ndarray | None, atol: float, rtol: float) -> float:
    """The largest |actual - truth| / (atol + rtol |truth| + FACTOR floor) over the
    elements where both are finite; inf without a floor."""
    if floor is None or floor.shape != truth.shape:
        return np.inf
    both = np.isfinite(actual) & np.isfinite(truth) & np.isfinite(floor)
    if np.any(np.isfinite(truth) & ~both):
        return np.inf
    with np.errstate(all="ignore"):
        off = np.abs(actual[both].astype(np.complex128) - truth[both])
        allowed = atol + rtol * np.abs(truth[both]) + noise.FACTOR * floor[both]
        return float(np.max(np.where(off == 0, 0.0, off / allowed), initial=0.0))


def _leave_out_breakdown(
    result: OutputResult,
    expected: np.ndarray,
    actual: np.ndarray,
    truth: np.ndarray,
    atol: float,
    rtol: float,
) -> tuple[OutputResult, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, str]:
    """Leaves out the elements where the model's own precision breaks down (the
    float64 run's value lies beyond its range, or its reference is further from that
    value than the tolerance: an overflow or underflow on the way, as edge values
    make) and the rewrite's does too (not finite), or the rewrite is within the
    tolerance of the float64 value. Where neither holds a number, inf against NaN
    says nothing of the rewrite.

    Returns the output compared again on the other elements; those elements (flat)
    of the reference, the rewrite (packed) and the float64 run; where they are (None
    for all), and a note of what was left out ("" for nothing).
    """
    complex_ = is_complex_np(expected.dtype)
    values = unpack(actual) if complex_ else actual
    if truth.shape != expected.shape or values.shape != expected.shape:
        return result, expected, actual, truth, None, ""
    with np.errstate(all="ignore"):
        wide = truth.astype(np.complex128 if complex_ else np.float64)
        tol = atol + rtol * np.abs(wide)
        top = np.finfo(_precision(expected)).max
        parts = (wide.real, wide.imag) if complex_ else (wide,)
        beyond = np.logical_or.reduce([~(np.abs(p) <= top) for p in parts])
        broke = beyond | ~(np.abs(expected - wide) <= tol)  # NaN distances count too
        excused = broke & (~np.isfinite(values) | (np.abs(values - wide) <= tol))
    if not np.any(excused):
        return result, expected, actual, truth, None, ""
    keep = ~excused
    e, a, t = expected[keep], values[keep], truth[keep]
    a = cmath.pack(a) if complex_ else a
    precision = str(_precision(expected))
    note = (
        f"{int(excused.sum())} of {excused.size} elements left out: {precision} overflows "
        f"or underflows there, in the reference and the rewrite alike"
    )
    return compare_output(result.name, e, a, atol, rtol), e, a, t, keep, note
