"""What the readings share about a value: declarations, shapes compared and merged."""

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from onnx_decomplex.normalize.facts import COMPLEX_OF, count, declared, dims_equal, merged


def test_a_declaration_is_its_dtype_and_shape_or_none():
    assert declared(gs.Variable("x", np.float32, ("n", 3))) == (np.float32, ["n", 3])
    assert declared(gs.Variable("x")) == (None, None)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [([3, 4], [3, 4], True), ([3, 4], [3, 5], False), ([3, 4], [3], False),
     (["n", 4], [7, 4], True), (None, [1, 2], True), ([None, 4], [2, 4], True)],
)  # fmt: skip
def test_shapes_differ_only_where_both_dims_are_known_and_differ(a, b, equal):
    assert dims_equal(a, b) is equal


def test_a_value_from_either_branch_keeps_the_dims_they_agree_on():
    assert merged([3, 4, "n"], [3, 5, "n"]) == [3, None, "n"]
    assert merged([3, 4], [3]) is None
    assert merged(None, [3]) is None


def test_an_element_count_needs_every_dim():
    assert count([3, 4, 2]) == 24 and count([]) == 1
    assert count([3, "n"]) is None and count(None) is None


def test_only_float32_and_float64_are_parts_of_a_complex_type():
    assert {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128} == COMPLEX_OF
    assert np.dtype(np.float16) not in COMPLEX_OF
