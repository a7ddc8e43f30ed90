"""Differential fuzzing: random complex graphs, rewritten, run in onnxruntime, and
compared with the reference evaluator on the original.

Each graph must rewrite to one with nothing complex left, pass the full ONNX checker,
and match the reference within `tolerance`. The default suite runs a fixed set of
examples; `make fuzz` runs many more, random ones. Hypothesis stops at the first
failures, shrinks each, and the minimal model and its inputs are saved under FUZZ_OUT,
named in the failure.

    FUZZ_EXAMPLES    how many examples (`make fuzz`: 3000)
    FUZZ_OUT         where failing models go (out/fuzz)
    FUZZ_SEED        a seed, to run a `make fuzz` example set again
    FUZZ_STEPS       the most ops in a graph (8); longer graphs meet what short ones do not
                     (16 found a product of constants whose offset hid the runtime term)
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from fuzzgraphs import NOT_GENERATED, OPS, Case, cases
from helpers import make_model, vi
from hypothesis import HealthCheck, given, note, reject, seed, settings
from hypothesis.control import current_build_context
from nonfinite import excused, non_finite_causes
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.reference import evaluator
from onnx_decomplex.rules import supported_ops

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0"))
OUT = Path(os.environ.get("FUZZ_OUT", "out/fuzz"))
STEPS = int(os.environ.get("FUZZ_STEPS", "8"))

# A few hundred fixed examples in the default suite, the same ones on every run.
DEFAULT = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
# `make fuzz`: random examples, shrunk on failure.
FUZZ = settings(
    max_examples=EXAMPLES or 300,
    deadline=None,
    derandomize=False,
    database=None,
    report_multiple_bugs=True,
    suppress_health_check=list(HealthCheck),
)

ULPS = 64
"""Error allowed per op on the longest path, in units of the working precision,
relative to the largest value the graph computes."""


def tolerance(case: Case, values) -> tuple[float, float]:
    """The absolute and relative tolerances for `case`: ULPS * eps per op of depth,
    relative to the largest finite modulus among its inputs and intermediate values
    (at least 1) for the absolute one.

    Cancellation in a sum makes a small result from large terms; an error bound
    relative to the result itself would not hold, one relative to the terms does.
    """
    eps = np.finfo(np.float32 if case.float32_math else np.float64).eps
    scale = 1.0
    for v in values:
        v = np.asarray(v)
        if v.dtype.kind in "fc" and v.size:
            finite = np.abs(v[np.isfinite(v)])
            if finite.size:
                scale = max(scale, float(finite.max()))
    rtol = float(ULPS * eps * (1 + case.depth))
    return min(rtol * scale, 1e300), rtol


def _reference_values(case: Case) -> dict:
    """Every value the reference computes, by name, or reject: the generator made a
    graph that is not valid, or that the reference cannot run."""
    try:
        onnx.checker.check_model(case.model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = evaluator(case.model).run(None, case.feeds, intermediate=True)
    except Exception as e:
        note(f"the reference cannot run this graph: {e}")
        reject()
    return out


def save_failure(case: Case, error: BaseException, folder: Path = OUT) -> Path:
    """Writes the model and its inputs under `folder`, named for the kind of failure,
    so that a shrunk example overwrites the larger ones before it."""
    kind = re.sub(r"\d+", "N", f"{type(error).__name__}: {str(error).splitlines()[0][:80]}")
    ops = "-".join(sorted({n.op_type for n in case.model.graph.node}))
    key = hashlib.sha1(kind.encode()).hexdigest()[:8]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.onnx"
    onnx.save(case.model, path)
    np.savez(path.with_suffix(".npz"), **case.feeds)
    path.with_suffix(".txt").write_text(
        f"{kind}\nops: {ops}\noptions: {case.options}\n"
        f"depth: {case.depth}\nfloat32_math: {case.float32_math}\n{error}\n"
    )
    return path


def check(case: Case) -> None:
    """The rewrite holds nothing complex, passes the full checker, and onnxruntime
    on it matches the reference on the original within `tolerance`; infinities and
    NaNs may differ only for the reasons `nonfinite.excused` gives."""
    values = _reference_values(case)
    atol, rtol = tolerance(case, values.values())
    out, report = decomplex(case.model, **case.options)
    assert report.has_complex
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    result = validate(case.model, out, dict(case.feeds), atol=atol, rtol=rtol)
    if causes := excused(case.model, result, case.feeds, values):
        note(f"infinities or NaNs differ after {causes}: {result.outputs}")
        return
    assert result.passed, result.outputs


def _check_and_save(case: Case) -> None:
    try:
        check(case)
    except Exception as e:
        # Only the final replay of each failure: the minimal example, once shrunk.
        if current_build_context().is_final:
            path = save_failure(case, e)
            e.add_note(f"model: {path}, inputs: {path.with_suffix('.npz')}")
        raise


def test_a_function_within_ulps_of_a_pole_may_reach_it():
    """atan(atan(tan(-i))): the reference's atan(tan(-i)) is -0.9999999999999999i, an
    ulp from atan's pole at -i, and gives -18.7i; the rewrite's rounding lands on -i
    and gives -inf i. The check excuses that, and only that."""
    nodes = [helper.make_node("Tan", ["x"], ["t"]), helper.make_node("Atan", ["t"], ["a"]),
             helper.make_node("Atan", ["a"], ["y"])]  # fmt: skip
    model = make_model(nodes, [vi("x", np.complex128, [2])], [vi("y", np.complex128, [2])])
    feeds = {"x": np.array([-1j, 0.5 - 0.25j])}
    values = _reference_values(Case(model, feeds, depth=3, float32_math=False))
    out, _ = decomplex(model)
    result = validate(model, out, dict(feeds))
    assert not result.passed and np.isfinite(values["y"]).all()
    assert excused(model, result, feeds, values) == ["Atan within 4 ulps of a pole"]
    far = {"x": np.array([-0.5j, 0.5 - 0.25j])}
    assert non_finite_causes(model, _reference_values(Case(model, far, 3, False)), far) == []


def test_a_product_near_overflow_may_pass_it():
    """x W with x's real part at float32's largest: numpy's sums stay finite, Gauss's
    (xr + xi)(Wr + Wi) does not. The check excuses that, and only that."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    model = make_model(nodes, [vi("x", np.complex64, [2]), vi("w", np.complex64, [2, 2])],
                       [vi("y", np.complex64, [2])])  # fmt: skip
    w = np.array([[0.5 + 0.6j, -0.5 + 0.25j], [0.25 - 0.5j, 0.5 + 0.5j]], np.complex64)
    feeds = {"x": np.array([3.4e38 - 0.5j, 0.5 + 0.25j], np.complex64), "w": w}
    values = _reference_values(Case(model, feeds, depth=1, float32_math=True))
    result = validate(model, decomplex(model)[0], dict(feeds))
    assert not result.passed and np.isfinite(values["y"]).all()
    assert excused(model, result, feeds, values) == ["MatMul near overflow"]
    small = {"x": feeds["x"] * np.float32(1e-30), "w": w}
    assert non_finite_causes(model, _reference_values(Case(model, small, 1, True)), small) == []


def test_generator_covers_the_registry():
    """A rule registered for a new op is fuzzed, or said here why not."""
    assert OPS.isdisjoint(NOT_GENERATED)
    assert OPS | set(NOT_GENERATED) == supported_ops()


@DEFAULT
@given(cases())
def test_random_graphs_match_reference(case):
    check(case)


def _fuzz_settings(fn):
    fn = FUZZ(fn)
    if "FUZZ_SEED" in os.environ:
        fn = seed(int(os.environ["FUZZ_SEED"]))(fn)
    return fn


@pytest.mark.skipif(not EXAMPLES, reason="`make fuzz` runs it (FUZZ_EXAMPLES)")
@_fuzz_settings
@given(cases(max_steps=STEPS))
def test_fuzz(case):
    _check_and_save(case)
