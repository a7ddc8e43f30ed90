"""Shape, Size and ConstantOfShape: logical shapes and complex fills."""

import numpy as np
import pytest
from helpers import PACK, PAIR_SOURCE, UNPACK, Ops, assert_rewrites, init, make_model, single, vi
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
    # Packed: the shape without its last 2, by Shape's own end from opset 15, by a
    # Slice before. After a pair: the real part's shape (of the square's real part only).
    if pair:
        ops = PAIR_SOURCE - Ops(Mul=1, Add=1) + Ops(Shape=1)
    else:
        ops = Ops(Shape=1, Slice=int(opset < 15))
    assert_rewrites(m, ops=ops)


@PAIR
def test_size_is_logical(opset, cdtype, pair):
    m = single("Size", cdtype, opset, shape=(2, 3, 4), pair=pair, out_dtype=np.int64)
    m.graph.output.append(vi("a", cdtype, [2, 3, 4]))
    # The packed size over 2, or the size of the real part.
    ops = PAIR_SOURCE - Ops(Mul=1, Add=1) + Ops(Size=1) if pair else Ops(Size=1, Div=1)
    assert_rewrites(m, ops=ops)


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
    # The fill is made in numpy, as an initializer if small, else expanded at run time.
    assert_rewrites(m, ops=Ops(Add=1, Expand=int(shape == [100, 4])))


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
    # The fill (2i) expanded to Concat(s, [2]) at run time; then a full product.
    ops = Ops(Shape=1, Concat=1, Expand=1) + 2 * UNPACK + Ops(Mul=4, Sub=1, Add=1) + PACK
    assert_rewrites(m, ops=ops, input_shapes={"a": (4, 3)})
