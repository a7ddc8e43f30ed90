"""float64 -> float32 for TensorRT: every place a type is spelled, and the numbers."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import crandn, init, make_model, vi
from onnx import TensorProto, helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.targets.common.narrow import narrow_double


def doubles(model: onnx.ModelProto) -> list[str]:
    """Every float64 left: a narrowed model must print none."""
    text = str(model)
    return [
        line.strip()
        for line in text.splitlines()
        if "DOUBLE" in line or "data_type: 11" in line or "elem_type: 11" in line
    ]


@pytest.mark.parametrize("name", ["rope_complex128", "signal_chain_c128"])
def test_complex128_fixtures(root, name):
    model = onnx.load(root / "fixtures" / f"{name}.onnx")
    out, report = decomplex(model, target="tensorrt")
    assert doubles(out) == [] and find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    assert report.narrowed
    result = validate(model, out)  # the original, in float64, is the reference
    assert result.outputs and result.passed, result.outputs


def test_keep_double():
    model = onnx.load_model_from_string(
        make_model(
            [helper.make_node("Mul", ["z", "w"], ["y"])],
            [vi("z", np.complex128, [3])],
            [vi("y", np.complex128, None)],
            [init("w", np.array([1 + 2j, 3, 4j]))],
        ).SerializeToString()
    )
    out, report = decomplex(model, target="tensorrt", keep_double=True)
    assert out.graph.input[0].type.tensor_type.elem_type == TensorProto.DOUBLE
    assert not report.narrowed


def test_every_place_a_type_is_spelled():
    then = helper.make_graph(
        [
            helper.make_node(
                "Constant", [], ["k"], value=helper.make_tensor("v", TensorProto.DOUBLE, [], [2.0])
            )
        ],
        "t",
        [],
        [vi("k", np.float64, [])],
    )
    other = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["k2"], to=TensorProto.DOUBLE)],
        "e",
        [],
        [vi("k2", np.float64, None)],
    )
    nodes = [
        helper.make_node("Cast", ["x"], ["xd"], to=TensorProto.DOUBLE),
        helper.make_node("Add", ["xd", "b"], ["s"]),
        helper.make_node("If", ["c"], ["k_out"], then_branch=then, else_branch=other),
        helper.make_node("Mul", ["s", "k_out"], ["y"]),
        helper.make_node(
            "ConstantOfShape",
            ["shape"],
            ["ones"],
            value=helper.make_tensor("one", TensorProto.DOUBLE, [1], [1.0]),
        ),  # fmt: skip
        helper.make_node("Add", ["y", "ones"], ["y2"]),
    ]
    model = make_model(
        nodes,
        [vi("x", np.float32, [3]), vi("c", np.bool_, [])],
        [vi("y2", np.float64, [3])],
        [init("b", np.array([1e300, -1e300, 0.5])), init("shape", np.array([3]))],
    )
    out, narrowed = narrow_double(model)
    assert doubles(out) == []
    onnx.checker.check_model(out, full_check=True)
    assert narrowed.clamped == 2
    # y2, b, the Cast, both branch outputs, the Constant and Cast in them, ConstantOfShape
    assert len(narrowed.places) == 8
    assert doubles(model), "the input model is not modified"
    import onnxruntime as ort

    session = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([1.0, 2.0, 3.0], np.float32)
    (y,) = session.run(None, {"x": x, "c": np.array(True)})
    big = np.finfo(np.float32).max
    # Clamped like TensorRT's parser: +-FLT_MAX, then float32 arithmetic.
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y[2], np.float32((3 + 0.5) * 2 + 1))
    assert np.isinf(y[0]) or y[0] == big  # FLT_MAX * 2 overflows at run time, as it would there


def test_nothing_to_narrow_returns_the_model():
    model = make_model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [vi("x", np.float32, [2])],
        [vi("y", np.float32, None)],
    )
    out, narrowed = narrow_double(model)
    assert out is model and narrowed.places == []


def test_validation_tolerances_follow(tmp_path, root):
    """Tolerances asked for float64 are raised to float32's once the model is narrowed."""
    from onnx_decomplex.pipeline import convert_file
    from onnx_decomplex.validate import DEFAULT_ATOL, DEFAULT_RTOL

    result = convert_file(
        root / "fixtures" / "signal_chain_c128.onnx",
        tmp_path / "out.onnx",
        target="tensorrt",
        atol=1e-12,
        rtol=1e-12,
    )
    assert (result.validation.atol, result.validation.rtol) == (DEFAULT_ATOL, DEFAULT_RTOL)
    assert result.validation.passed
    exact = convert_file(
        root / "fixtures" / "signal_chain_c128.onnx", tmp_path / "exact.onnx", atol=1e-12, rtol=1e-9
    )
    assert exact.validation.atol == 1e-12  # not narrowed: asked tolerances stand


def test_complex128_input_takes_float32_feeds(tmp_path):
    rng = np.random.default_rng(0)
    model = make_model(
        [helper.make_node("Mul", ["z", "z"], ["y"])],
        [vi("z", np.complex128, [4])],
        [vi("y", np.complex128, None)],
    )
    out, _ = decomplex(model, target="tensorrt")
    assert out.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    result = validate(model, out, {"z": crandn(rng, (4,), np.complex128)})
    assert result.passed


@pytest.mark.parametrize("target", ["tensorrt", "openvino"])
@pytest.mark.parametrize("op", ["Abs", "Sqrt", "Log"])
def test_a_narrowing_target_computes_its_formulas_in_float32(target, op):
    """The model is narrowed before the rewrite: its formulas take float32's limits. After
    it, float64's least subnormal (a clamp of |z|'s divisor) became 0 in float32, and
    |0| NaN."""
    z = np.array([0, 3 + 4j, 1e-30, -2 - 0j], np.complex128)
    z = z[1:] if op == "Log" else z  # log 0 is a pole
    out_dtype = np.float64 if op == "Abs" else np.complex128
    m = make_model([helper.make_node(op, ["z"], ["y"])], [vi("z", np.complex128, [len(z)])],
                   [vi("y", out_dtype, [len(z)])])  # fmt: skip
    out, report = decomplex(m, target=target)
    assert doubles(out) == [] and report.narrowed
    result = validate(m, out, {"z": z}, runtime="onnxruntime")
    assert result.passed, result.outputs
