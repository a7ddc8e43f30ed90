"""The float64 rejudge: float32's rounding is not blamed on the rewrite, and a wrong
rewrite still fails."""

import numpy as np
import onnx
from helpers import init, make_model, vi
from onnx import TensorProto, helper, numpy_helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.validate import upcast

C64 = np.complex64


def _chained_matmuls(k: int = 1024, n: int = 4) -> onnx.ModelProto:
    """x @ W0 @ ... @ W(n-1), cast to complex and times a complex table: float32
    sums of k terms, n deep, with no complex arithmetic to blame."""
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        inits.append(init(f"w{i}", rng.standard_normal((k, k)).astype(np.float32)))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"]))
        prev = f"h{i}"
    table = (rng.standard_normal(k) + 1j * rng.standard_normal(k)).astype(C64)
    nodes += [
        helper.make_node("Cast", [prev], ["hc"], to=TensorProto.COMPLEX64),
        helper.make_node("Mul", ["hc", "t"], ["y"]),
    ]
    return make_model(
        nodes, [vi("x", np.float32, [4, k])], [vi("y", C64, [4, k])], [*inits, init("t", table)]
    )


def test_float32_accumulation_is_not_a_failure():
    model = _chained_matmuls()
    out, _ = decomplex(model)
    (result,) = validate(model, out).outputs
    assert result.max_abs > 1e-2, "the model no longer shows the effect"
    assert result.passed
    assert result.note.startswith("within float32 accumulation error: reference off by ")
    assert "against float64" in result.note


def test_a_wrong_rewrite_still_fails_against_float64():
    model = _chained_matmuls()
    out, _ = decomplex(model)
    # Scale the table's parts, which the rewrite keeps as [k] initializers, by 1.001.
    for t in out.graph.initializer:
        if list(t.dims) == [1024]:
            value = numpy_helper.to_array(t) * np.float32(1.001)
            t.CopyFrom(numpy_helper.from_array(value, t.name))
    (result,) = validate(model, out).outputs
    assert not result.passed
    assert "beyond float32 error" in result.note


def test_upcast_widens_values_constants_and_casts():
    wide = upcast(_chained_matmuls(k=8, n=1))
    assert {t.data_type for t in wide.graph.initializer} == {
        TensorProto.DOUBLE,
        TensorProto.COMPLEX128,
    }
    assert wide.graph.input[0].type.tensor_type.elem_type == TensorProto.DOUBLE
    cast = next(n for n in wide.graph.node if n.op_type == "Cast")
    assert cast.attribute[0].i == TensorProto.COMPLEX128
    assert upcast(_square(np.float64)) is None


def _square(dtype=np.float32):
    return make_model([helper.make_node("Mul", ["x", "x"], ["y"])], [vi("x", dtype, [3])],
                      [vi("y", dtype, [3])])  # fmt: skip


def _square_with(x, y, dtype=np.float32, **settings):
    """x * x, judged with `y` as the rewrite's result."""
    (result,) = validate(_square(dtype), None, {"x": np.array(x, dtype)},
                         runner=lambda _: [np.array(y, dtype)], **settings).outputs  # fmt: skip
    return result


def test_float64_judging_never_excuses_a_non_finite_result_float32_holds():
    # 1e18 squared is 1e36: within float32's range, so NaN or inf there is wrong.
    for wrong in (np.nan, np.inf):
        result = _square_with([1e18, 2.0, 3.0], [wrong, 4.0, 9.0])
        assert not result.passed and "left out" not in result.note


def test_an_overflow_in_both_is_left_out_and_said():
    # 1e30 squared is 1e60: past float32, where inf and NaN alike hold no number.
    result = _square_with([1e30, 2.0, 3.0], [np.nan, 4.0, 9.0])
    assert result.passed
    assert result.note.startswith("1 of 3 elements left out: float32 overflows")
    # The other elements are still compared.
    assert not _square_with([1e30, 2.0, 3.0], [np.nan, 4.5, 9.0]).passed


def test_a_rewrite_nearer_the_float64_value_than_the_reference_passes():
    # (1e20 + 1e20 i)^2 is 2e40 i: numpy's float32 product gives -inf or NaN for the
    # real part (with fused multiply-add or not), the rewrite's exact square 0.
    model = make_model(
        [helper.make_node("Mul", ["z", "z"], ["y"])], [vi("z", C64, [2])], [vi("y", C64, [2])]
    )
    out, _ = decomplex(model)
    z = np.array([1e20 + 1e20j, 1 - 2j], C64)
    (result,) = validate(model, out, {"z": z}).outputs
    assert result.passed, result


def test_what_is_not_rejudged():
    """The overflow above is left out where the reference runs the model in float32;
    not with zero tolerances (equality is asked for), nor against saved outputs (the
    framework's, not a float32 reading of the model), nor in float64 (nothing wider)."""
    x, y = [1e30, 2.0, 3.0], [np.nan, 4.0, 9.0]
    saved = [np.array([np.inf, 4.0, 9.0], np.float32)]
    for result in (_square_with(x, y, atol=0, rtol=0), _square_with(x, y, expected=saved),
                   _square_with([1e200, 2.0, 3.0], y, np.float64)):  # fmt: skip
        assert not result.passed and result.note == "infinities or NaNs differ"


def _asin_of_quotient() -> tuple[onnx.ModelProto, dict]:
    """asin(x / x) in complex128: numpy's x / x is 1 for most x and one unit off for
    the rest, and asin near 1 turns that unit into about 1e-8."""
    c128 = np.complex128
    model = make_model(
        [helper.make_node("Div", ["x", "x"], ["q"]), helper.make_node("Asin", ["q"], ["y"])],
        [vi("x", c128, [64])],
        [vi("y", c128, [64])],
    )
    rng = np.random.default_rng(1)
    return model, {"x": rng.standard_normal(64) + 1j * rng.standard_normal(64)}


TIGHT = {"atol": 1e-13, "rtol": 1e-13}


def test_float64_ill_conditioning_is_judged_within_float64s_noise_floor():
    model, feeds = _asin_of_quotient()
    out, _ = decomplex(model)
    (result,) = validate(model, out, feeds, **TIGHT).outputs
    assert result.max_tol > 1e3, "the model no longer shows the effect"
    assert result.passed, result
    assert result.floor_of == "float64" and result.floor_tol <= 1


def test_a_wrong_float64_rewrite_still_fails_within_its_noise_floor():
    """The floor is float64's: a rewrite off by far less than the 1e-8 above, at an
    ordinary element, still fails."""
    model = make_model(
        [helper.make_node("Mul", ["x", "x"], ["y"])],
        [vi("x", np.complex128, [8])],
        [vi("y", np.complex128, [8])],
    )
    out, _ = decomplex(model)
    for node in out.graph.node:
        if node.op_type == "Mul":
            node.input[1] = node.input[0]  # (re, im) * (re, re): off wherever im != re
            break
    feeds = {"x": np.linspace(1, 2, 8) * (1 + 1e-9j)}
    (result,) = validate(model, out, feeds, **TIGHT).outputs
    assert not result.passed and result.floor_of is None
