"""One output compared at its tolerance, and split by what depends on edge values."""

import numpy as np
from helpers import make_model, vi
from onnx import helper
from onnx_decomplex.cli.output import output_line

from onnx_decomplex import decomplex, validate
from onnx_decomplex.validate import EDGE_VALUES, OutputResult, ValidationResult
from onnx_decomplex.validate.judge import compare_output, judge_without_edges


def test_a_wrong_rewrite_fails():
    original = make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", np.complex64, ["n", 3]), vi("b", np.complex64, ["n", 3])],
        [vi("y", np.complex64, ["n", 3])],
    )
    out, _ = decomplex(original)
    # Break the rewrite: the imaginary part's Add becomes a Sub.
    add = next(n for n in out.graph.node if n.op_type == "Add")
    add.op_type = "Sub"
    result = validate(original, out)
    assert not result.passed
    assert result.outputs[0].max_abs > 0.1


def test_imaginary_part_alone_is_checked():
    expected = np.array([1 + 1j, 2 - 1j], np.complex64)
    actual = expected.copy()
    actual[1] = 2 - 1.01j
    packed = actual.reshape(2, 1).view(np.float32)
    assert not compare_output("y", expected, packed, 1e-5, 1e-4).passed
    assert compare_output("y", expected, expected.reshape(2, 1).view(np.float32), 0, 0).passed


def test_shape_mismatch_fails_with_note():
    r = compare_output("y", np.zeros((2, 3), np.complex64), np.zeros((3, 2, 2), np.float32), 1, 1)
    assert not r.passed and "expected (2, 3, 2)" in r.note
    r = compare_output("y", np.zeros(3, np.float32), np.zeros(4, np.float32), 1, 1)
    assert not r.passed and r.note == "shape (4,), expected (3,)"


def test_nan_matches_nan_only():
    e = np.array([np.nan, 1.0], np.float32)
    assert compare_output("y", e, e.copy(), 0, 0).passed
    assert not compare_output("y", e, np.array([0.0, 1.0], np.float32), 0, 0).passed


def test_infinities_are_matched_exactly():
    e = np.array([np.inf, -np.inf + 1j, 1.0], np.complex64)
    packed = e.reshape(3, 1).view(np.float32)
    assert compare_output("y", e, packed, 1e-5, 1e-4).passed
    for wrong in ([-160.0, 0.0], [np.inf, 0.0], [-np.inf, 1.5]):
        actual = packed.copy()
        actual[1] = wrong
        r = compare_output("y", e, actual, 1e-5, 1e-4)
        assert not r.passed and r.note == "infinities or NaNs differ", wrong


def test_integers_and_booleans_must_be_equal():
    e = np.array([1, 2, 3], np.int64)
    assert compare_output("y", e, e.copy(), 1, 1).passed
    r = compare_output("y", e, np.array([1, 2, 4]), 1, 1)
    assert not r.passed and r.max_abs == r.max_tol == np.inf
    assert not compare_output("b", np.array([True]), np.array([False]), 1, 1).passed


def test_the_error_is_reported_as_a_share_of_the_tolerance():
    e = np.array([1.0, 100.0], np.float64)
    # The tolerance at 100 is 1e-3 + 1e-4 * 100 = 0.011.
    r = compare_output("y", e, e + [0, 0.022], 1e-3, 1e-4)
    assert not r.passed and np.isclose(r.max_tol, 2.0)
    assert np.isclose(r.max_abs, 0.022) and np.isclose(r.max_rel, 2.2e-4)
    r = compare_output("y", e, e + [0, 0.0055], 1e-3, 1e-4)
    assert r.passed and np.isclose(r.max_tol, 0.5)


# Edge values


def _product_model():
    """y = z * w, elementwise: each output element depends on one element of each."""
    return make_model(
        [helper.make_node("Mul", ["z", "w"], ["y"])],
        [vi("z", np.complex64, [4, 8]), vi("w", np.complex64, [4, 8])],
        [vi("y", np.complex64, [4, 8])],
    )


def test_the_errors_split_by_what_depends_on_edge_values():
    model = _product_model()
    out, _ = decomplex(model)
    (o,) = validate(model, out).outputs
    assert o.passed and o.edges is not None
    # Each input holds 12 edge values at the same spread positions: 12 elements meet them.
    assert o.edges.elements == len(EDGE_VALUES)
    assert o.edges.ordinary_max_tol < 0.01 and o.edges.ordinary_max_rel < 1e-6
    assert o.edges.not_finite >= 1  # 1e20 * 1e20 overflows float32 in the reference
    # Given inputs that hold no edge values, there is nothing to split.
    rng = np.random.default_rng(0)
    feeds = {k: (rng.standard_normal((4, 8)) + 1j * rng.standard_normal((4, 8))).astype(
        np.complex64) for k in ("z", "w")}  # fmt: skip
    (plain,) = validate(model, out, feeds).outputs
    assert plain.edges is None


def test_a_wrong_ordinary_element_shows_beside_edge_values():
    model = _product_model()
    out, _ = decomplex(model)
    for node in out.graph.node:
        if node.op_type == "Sub":  # re = zr wr - zi wi: swapped, a sign a buggy rule flips
            node.input[0], node.input[1] = node.input[1], node.input[0]
            break
    (o,) = validate(model, out).outputs
    assert not o.passed and o.edges is not None
    assert o.edges.ordinary_max_tol > 1  # the ordinary elements show it


def _judged(expected, actual, passed, plain_expected, plain: OutputResult):
    """One float64 output judged with edge values, then again with `plain` without."""
    o = OutputResult("y", passed, 0.0, 0.0)
    result = ValidationResult([o], atol=1e-3, rtol=0.0, expected=[np.array(expected)],
                              actual=[np.array(actual)])  # fmt: skip
    judge_without_edges(result, ValidationResult([plain], expected=[np.array(plain_expected)]))
    return o


def test_an_output_that_passes_only_with_edge_values_fails_and_says_why():
    plain = OutputResult("y", False, 0.5, 0.1, note="beyond float32 error", max_tol=3.0)
    o = _judged([1.0, np.inf, 2.0], [1.0, np.inf, 2.0], True, [1.0, 5.0, 2.0], plain)
    assert not o.passed
    assert o.note == ("on the same inputs without edge values, 3 of the tolerance, max abs "
                      "error 0.5: beyond float32 error")  # fmt: skip


def test_the_split_counts_what_edge_values_move():
    plain = OutputResult("y", True, 0.0, 0.0)
    # The edge values move the first two elements; the rewrite is off by 2e-3 at the
    # first, 5e-4 at the last.
    o = _judged([1.0, 7.0, 2.0, 4.0], [1.002, 7.0, 2.0, 4.0005], True, [3.0, 5.0, 2.0, 4.0],
                plain)  # fmt: skip
    assert o.passed
    assert (o.edges.elements, o.edges.not_finite) == (2, 0)
    assert np.isclose(o.edges.max_tol, 2.0)
    assert np.isclose(o.edges.ordinary_max_tol, 0.5)
    assert np.isclose(o.edges.ordinary_max_rel, 0.0005 / 4)
    # An infinity the edge values make is counted; the ordinary elements stay as they were.
    o = _judged([1.0, np.inf, 2.0, 4.0], [1.0, np.inf, 2.0, 4.0005], True, [3.0, 5.0, 2.0, 4.0],
                plain)  # fmt: skip
    assert (o.edges.elements, o.edges.not_finite) == (2, 1)
    assert np.isclose(o.edges.ordinary_max_tol, 0.5)


def test_an_infinity_on_both_sides_is_no_error():
    """inf - inf is NaN: an edge element both sides hold as the same infinity counts as
    no error, not NaN ("worst nan"); one side's NaN beside the other's number is inf."""
    plain = OutputResult("y", True, 0.0, 0.0)
    o = _judged([np.inf, -np.inf, 2.0], [np.inf, -np.inf, 2.0], True, [3.0, 5.0, 2.0], plain)
    assert o.edges.max_tol == 0.0 and o.edges.ordinary == 1
    o = _judged([np.nan, 1.0, 2.0], [1.0, 1.0, 2.0], False, [3.0, 5.0, 2.0], plain)
    assert o.edges.max_tol == np.inf


def test_a_failed_line_leads_with_what_failed():
    """Every element depends on an edge value, and the plain inputs fail: the line says
    so first, and says "none" for the relative error of an empty set of elements."""
    plain = OutputResult("y", False, 0.0575, 0.01, max_tol=210.0)
    o = _judged([1.0, 7.0], [1.0, 7.0], True, [3.0, 5.0], plain)
    line = output_line(o)
    assert line.startswith("FAILED y: on the same inputs without edge values, 2.1e+02 of the")
    assert line.endswith("max rel error none on ordinary elements (each depends on an edge value)")
    passed = output_line(OutputResult("y", True, 1e-7, 2e-7, max_tol=0.01))
    assert passed == "PASSED y: 0.01 of the tolerance, max rel error 2e-07"
