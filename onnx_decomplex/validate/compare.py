"""`validate`: the rewrite, run in onnxruntime or OpenVINO, compared with the original run
by the reference evaluator, output by output."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from .. import cmath
from ..dtypes import is_complex_np
from ..reference import quirks
from .inputs import edges_in, random_inputs, resolve_shapes, with_edges, without_edges
from .judge import compare_output, judge_without_edges
from .precision import judge_failures
from .results import ValidationResult
from .runners import Deadline, run_onnxruntime, run_openvino, run_reference
from .settings import Settings
from .trace import first_departure


def validate(
    original: onnx.ModelProto,
    rewritten: onnx.ModelProto | str | Path | bytes | None,
    inputs: dict[str, np.ndarray] | None = None,
    settings: Settings | None = None,
    **values: Any,
) -> ValidationResult:
    """Runs both models on the same inputs and compares every output.

    An output that fails while the original computes in float32 (or complex64,
    float16) is judged again against the original run in float64 (see `precision`):
    it passes when the rewrite is no further from that than PRECISION_FACTOR times
    the float32 reference is, or when every element is within its tolerance plus
    `noise.FACTOR` times float32's noise floor there (`OutputResult.floor_tol`); its
    note gives both distances. Elements where float32 itself breaks down are left
    out first. A failed output of a model that computes in float64 passes where every
    element is within its tolerance plus `noise.FACTOR` times float64's own noise
    floor. Zero `atol` and `rtol` ask for equality and skip all of these.

    Where the inputs hold edge values, each output is also judged on the same inputs
    without them, and its errors split by what depends on them (`OutputResult.edges`).

    Args:
        original: The complex model, run by `onnx.reference.ReferenceEvaluator`.
        rewritten: The packed-real model, run by `settings.runtime` on packed inputs:
            the model, its serialized bytes (exactly what was written), or the path it
            was saved to (which lets the runtime find external data beside it).
            Unused with `settings.runner`.
        inputs: Inputs for the original model (complex arrays for complex inputs).
            Random, seeded inputs are made when None.
        settings: How to make inputs, run and judge (`Settings`); its defaults when
            None.
        **values: `Settings` fields to change, by name: `validate(m, out, atol=1e-3)`.

    Returns:
        PASSED/FAILED per output with the max absolute and relative error.

    Raises:
        ValidationTimeout: Validation ran past `settings.timeout`.
        DecomplexError: Either side could not run.
        TypeError: A name in `values` that `Settings` lacks.
    """
    settings = replace(settings or Settings(), **values)
    deadline = settings.deadline()
    inputs, placed = _feeds(original, inputs, settings)
    result = _run(original, rewritten, inputs, settings, deadline)
    result.edges = placed
    # Zero tolerances ask for equality, which no float32 argument excuses.
    if settings.own_reference and not result.passed and (settings.atol or settings.rtol):
        judge_failures(result, original, inputs, deadline)
    placed = (placed or edges_in(inputs)) if settings.own_reference else {}
    if placed:
        # Edge values can hide an error: where every element of an output meets one
        # (a sum, a mean), all may overflow alike. The same inputs without them are
        # judged too, and tell which elements depend on them.
        plain = without_edges(inputs, placed, settings.seed)
        judge_without_edges(
            result, validate(original, rewritten, plain, settings, timeout=deadline, trace=False)
        )
    if not result.passed and _traceable(rewritten, settings):
        # Without edge values first: there, a value that departs is a wrong number, not
        # an overflow that both sides take their own way.
        runs = [without_edges(inputs, placed, settings.seed), inputs] if placed else [inputs]
        model = rewritten if isinstance(rewritten, onnx.ModelProto) else _loaded(rewritten)
        for feeds in runs:
            result.departure = first_departure(
                original, model, feeds, settings.atol, settings.rtol, settings.rewrite,
                deadline.left(),
            )  # fmt: skip
            if result.departure is not None:
                break
    return result


def _traceable(rewritten, settings: Settings) -> bool:
    """Whether a failure can be traced: the rewrite runs in onnxruntime against the
    reference, at a tolerance."""
    return (
        settings.trace and settings.own_reference and settings.runner is None
        and settings.runtime == "onnxruntime" and rewritten is not None
        and bool(settings.atol or settings.rtol)
    )  # fmt: skip


def _loaded(rewritten: str | Path | bytes) -> onnx.ModelProto:
    if isinstance(rewritten, bytes):
        return onnx.load_from_string(rewritten)
    return onnx.load(str(rewritten))


def _feeds(
    original: onnx.ModelProto, inputs: dict[str, np.ndarray] | None, settings: Settings
) -> tuple[dict[str, np.ndarray], dict[str, list[int]]]:
    """The inputs both models run on, and where edge values were written into them
    (by input name): the given ones as they are, or seeded random ones."""
    if inputs is not None:
        return inputs, {}
    shapes = resolve_shapes(original, settings.input_shapes)
    inputs = random_inputs(original, shapes, settings.seed, edges=False)
    return inputs, with_edges(inputs) if settings.random_edges else {}


def _run(
    original: onnx.ModelProto,
    rewritten: onnx.ModelProto | str | Path | bytes | None,
    inputs: dict[str, np.ndarray],
    settings: Settings,
    deadline: Deadline,
) -> ValidationResult:
    """Runs both sides (the original's outputs are `settings.expected` when given) and
    compares each output at the settings' tolerance."""
    packed = {k: cmath.pack(v) if is_complex_np(v.dtype) else v for k, v in inputs.items()}
    start = time.perf_counter()
    expected = settings.expected
    notes = quirks(original) if settings.own_reference else []
    if expected is None:
        with deadline.stage("the reference evaluator"):
            expected = run_reference(original, inputs, deadline.left())
    middle = time.perf_counter()
    if settings.runner:
        actual = settings.runner(packed)
    elif settings.runtime == "openvino":
        with deadline.stage("OpenVINO"):
            actual = run_openvino(rewritten, packed, deadline.left())
    else:
        with deadline.stage("onnxruntime"):
            actual = run_onnxruntime(rewritten, packed, settings.providers, deadline.left())
    end = time.perf_counter()
    result = ValidationResult(
        atol=settings.atol,
        rtol=settings.rtol,
        reference=settings.reference_name,
        runtime=settings.runtime_name,
        reference_seconds=middle - start,
        runtime_seconds=end - middle,
        shapes={k: tuple(v.shape) for k, v in inputs.items()},
        expected=expected,
        notes=notes,
        actual=[np.asarray(a) for a in actual],
    )
    names = [o.name for o in original.graph.output]
    for name, e, a in zip(names, expected, result.actual, strict=True):
        result.outputs.append(compare_output(name, e, a, settings.atol, settings.rtol))
    return result
