"""Validation can fail: wrong numbers, wrong shapes, and bad shape overrides are caught."""

import numpy as np
import pytest
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.validate import _compare, resolve_shapes


def _mul_model():
    return make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", np.complex64, ["n", 3]), vi("b", np.complex64, ["n", 3])],
        [vi("y", np.complex64, ["n", 3])],
    )


def test_a_wrong_rewrite_fails():
    original = _mul_model()
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
    assert not _compare("y", expected, packed, 1e-5, 1e-4).passed
    assert _compare("y", expected, expected.reshape(2, 1).view(np.float32), 0, 0).passed


def test_shape_mismatch_fails_with_note():
    r = _compare("y", np.zeros((2, 3), np.complex64), np.zeros((3, 2, 2), np.float32), 1, 1)
    assert not r.passed and "expected (2, 3, 2)" in r.note


def test_nan_matches_nan_only():
    e = np.array([np.nan, 1.0], np.float32)
    assert _compare("y", e, e.copy(), 0, 0).passed
    assert not _compare("y", e, np.array([0.0, 1.0], np.float32), 0, 0).passed


def test_infinities_are_matched_exactly():
    e = np.array([np.inf, -np.inf + 1j, 1.0], np.complex64)
    packed = e.reshape(3, 1).view(np.float32)
    assert _compare("y", e, packed, 1e-5, 1e-4).passed
    for wrong in ([-160.0, 0.0], [np.inf, 0.0], [-np.inf, 1.5]):
        actual = packed.copy()
        actual[1] = wrong
        assert not _compare("y", e, actual, 1e-5, 1e-4).passed, wrong


def test_symbolic_dims_follow_overrides():
    shapes = resolve_shapes(_mul_model(), {"a": (5, 3)})
    assert shapes == {"a": (5, 3), "b": (5, 3)}
    assert resolve_shapes(_mul_model()) == {"a": (2, 3), "b": (2, 3)}


@pytest.mark.parametrize(
    "overrides, message",
    [({"nope": (1,)}, "not an input"), ({"a": (1, 2, 3)}, "gives 3 dims for 'a', which has 2")],
)
def test_bad_overrides(overrides, message):
    with pytest.raises(DecomplexError, match=message):
        resolve_shapes(_mul_model(), overrides)
