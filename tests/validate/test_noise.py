"""Float32's noise floor, measured by perturbing the float64 reference run."""

import numpy as np
import pytest
from helpers import init, make_model, vi
from onnx import helper

from onnx_decomplex.reference import evaluator
from onnx_decomplex.validate import noise

EPS = float(np.finfo(np.float32).eps)


def _floor(model, feeds):
    truth = evaluator(model).run(None, feeds)
    return noise.floors(model, feeds, truth)


def test_a_product_of_ordinary_values_keeps_a_floor_of_a_few_roundoffs():
    m = make_model([helper.make_node("Mul", ["a", "b"], ["y"])],
                   [vi("a", np.float64, [8]), vi("b", np.float64, [8])],
                   [vi("y", np.float64, [8])])  # fmt: skip
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(8), rng.standard_normal(8)
    (floor,) = _floor(m, {"a": a, "b": b})
    np.testing.assert_allclose(floor, EPS * np.abs(a * b), rtol=1e-6)


def test_every_bin_of_a_transform_of_1e20_gets_float32s_roundoff_of_it():
    """Exact arithmetic cancels the 1e20 at most bins; float32's kernel does not."""
    m = make_model([helper.make_node("DFT", ["x"], ["y"], axis=1)],
                   [vi("x", np.float64, [1, 8, 2])], [vi("y", np.float64, [1, 8, 2])])  # fmt: skip
    x = np.zeros((1, 8, 2))
    x[0, :, 0] = np.arange(8)
    x[0, 3, 0] = 1e20
    (floor,) = _floor(m, {"x": x})
    # The sum of the terms' sizes, one roundoff either way.
    assert np.all(floor >= EPS * 1e20) and np.all(floor <= 4 * EPS * 1e20)


def test_a_sum_that_cancels_gets_the_roundoff_of_its_terms():
    w = init("w", np.array([[1.0], [-1.0]]))
    m = make_model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                   [vi("x", np.float64, [1, 2])], [vi("y", np.float64, [1, 1])], [w])  # fmt: skip
    (floor,) = _floor(m, {"x": np.array([[1e6, 1e6 + 1]])})
    assert floor[0, 0] >= EPS * 2e6


def test_a_signed_zero_is_held_exactly():
    """float32 rounds a zero to itself: log((1 +- 0i) - 2) keeps its +-pi, with no floor
    (moved off the zero, its angle would turn by 2 pi)."""
    two = init("two", np.array(2 + 0j))
    m = make_model([helper.make_node("Sub", ["z", "two"], ["d"]), helper.make_node("Log", ["d"], ["y"])],
                   [vi("z", np.complex128, [2])], [vi("y", np.complex128, [2])], [two])  # fmt: skip
    (floor,) = _floor(m, {"z": np.array([complex(1.0, 0.0), complex(1.0, -0.0)])})
    assert np.all(floor < 1e-5)


def test_a_sums_exact_zero_is_moved_only_where_its_terms_are_not_zero():
    """A row of zeros times W is exactly zero, with no terms to round; the next row's
    terms are not zero, and its sums are moved."""
    w = init("w", np.array([[1.0, -1.0], [1.0, 1.0]]))
    m = make_model([helper.make_node("MatMul", ["x", "w"], ["p"]), helper.make_node("Neg", ["p"], ["y"])],
                   [vi("x", np.float64, [2, 2])], [vi("y", np.float64, [2, 2])], [w])  # fmt: skip
    (floor,) = _floor(m, {"x": np.array([[0.0, 0.0], [1.0, 1.0]])})
    assert np.all(floor[0] == 0) and np.all(floor[1] > 0)


def test_a_transform_of_1e20_widens_its_own_floor_only():
    """Each batch row is a transform of its own: a 1e20 in one leaves the other's tight."""
    m = make_model([helper.make_node("DFT", ["x"], ["y"], axis=1)],
                   [vi("x", np.float64, [2, 8, 2])], [vi("y", np.float64, [2, 8, 2])])  # fmt: skip
    x = np.zeros((2, 8, 2))
    x[:, :, 0] = np.arange(8)
    x[0, 3, 0] = 1e20
    (floor,) = _floor(m, {"x": x})
    assert np.all(floor[0] >= EPS * 1e20) and np.all(floor[1] <= 4 * EPS * 28)


def test_moving_values_is_exact():
    """x - Transpose(Transpose(x)) is exactly 0 in float32: no floor."""
    m = make_model([helper.make_node("Transpose", ["x"], ["t"]),
                    helper.make_node("Transpose", ["t"], ["u"]),
                    helper.make_node("Sub", ["x", "u"], ["y"])],
                   [vi("x", np.float64, [2, 3])], [vi("y", np.float64, [2, 3])])  # fmt: skip
    (floor,) = _floor(m, {"x": np.arange(6.0).reshape(2, 3) * 1e20})
    assert np.all(floor == 0)


def test_a_branchs_nodes_are_perturbed_inside_it():
    """A DFT inside an If: its bins are judged by the signal's size, not their own."""
    dft = helper.make_node("DFT", ["x"], ["d"], axis=1)
    branch = helper.make_graph([dft], "then", [], [vi("d", np.float64, [1, 4, 2])])
    m = make_model([helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)],
                   [vi("c", np.bool_, []), vi("x", np.float64, [1, 4, 2])],
                   [vi("y", np.float64, [1, 4, 2])])  # fmt: skip
    x = np.zeros((1, 4, 2))
    x[0, :, 0] = [1e8, 1, 1e8, 1]  # the odd bins cancel the 1e8 exactly
    (floor,) = _floor(m, {"c": np.array(True), "x": x})
    assert np.all(floor[0, 1] >= EPS * 1e8)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_each_stft_frame_takes_its_own_floor(dtype):
    """Frames are transforms of their own: a 1e8 in the first widens its bins only, for a
    real signal (packed bins) and a complex one (complex bins) alike."""
    step, length = init("step", np.array(4, np.int64)), init("length", np.array(4, np.int64))
    m = make_model([helper.make_node("STFT", ["x", "step", "", "length"], ["y"], onesided=0)],
                   [vi("x", dtype, [1, 8] if dtype == np.complex128 else [1, 8, 1])],
                   [vi("y", dtype, None)], [step, length], opset=17)  # fmt: skip
    x = np.arange(8.0).reshape(1, 8)
    x[0, 1] = 1e8
    x = x.astype(dtype) if dtype == np.complex128 else x[..., None]
    (floor,) = _floor(m, {"x": x})
    assert np.all(floor[0, 0] >= EPS * 1e8) and np.all(floor[0, 1] <= 4 * EPS * 30)
