"""Shape, Size and ConstantOfShape: logical shapes and complex fills."""

import numpy as np
import pytest
from helpers import assert_rewrites, init, make_model, single, vi
from onnx import helper, numpy_helper

PAIR = pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])


@PAIR
@pytest.mark.parametrize(
    "bounds", [{}, {"start": 1}, {"end": -1}, {"start": -2}, {"start": 0, "end": 2}]
)
def test_shape_is_logical(opset, cdtype, bounds, pair):
    if bounds and opset < 15:
        pytest.skip("start/end are opset 15+")
    m = single("Shape", cdtype, opset, shape=(2, 3, 4), attrs=bounds, pair=pair,
               out_dtype=np.int64)  # fmt: skip
    # Shape's output is real: the check is that it equals the original's.
    m.graph.output.append(vi("a", cdtype, [2, 3, 4]))
    assert_rewrites(m)


@PAIR
def test_size_is_logical(opset, cdtype, pair):
    m = single("Size", cdtype, opset, shape=(2, 3, 4), pair=pair, out_dtype=np.int64)
    m.graph.output.append(vi("a", cdtype, [2, 3, 4]))
    assert_rewrites(m)


@pytest.mark.parametrize("shape", [[2, 3], [100, 4]])
def test_constant_of_shape_with_a_complex_value(opset, cdtype, shape):
    value = numpy_helper.from_array(np.array([1.5 - 0.5j], cdtype), "value")
    m = make_model(
        [
            helper.make_node("ConstantOfShape", ["s"], ["c"], value=value),
            helper.make_node("Add", ["c", "a"], ["y"]),
        ],
        [vi("a", cdtype, shape)],
        [vi("y", cdtype, None)],
        [init("s", np.array(shape, np.int64))],
        opset=opset,
    )
    assert_rewrites(m)


def test_constant_of_shape_with_a_runtime_shape(cdtype):
    value = numpy_helper.from_array(np.array([2j], cdtype), "value")
    m = make_model(
        [
            helper.make_node("Shape", ["a"], ["s"]),
            helper.make_node("ConstantOfShape", ["s"], ["c"], value=value),
            helper.make_node("Mul", ["c", "a"], ["y"]),
        ],
        [vi("a", cdtype, ["n", 3])],
        [vi("y", cdtype, None)],
    )
    assert_rewrites(m, input_shapes={"a": (4, 3)})
