"""Validation that can be trusted: it ends, it blames float32 where float32 is to
blame, it reads Loop as the spec does, and it feeds edge values."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import init, make_model, vi
from mutants import mutants
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx_decomplex.cli.exits import EXIT_TIMEOUT
from onnx_decomplex.cli.main import main

from onnx_decomplex import decomplex, validate
from onnx_decomplex.errors import ValidationTimeout
from onnx_decomplex.pipeline import convert_file, verify_file
from onnx_decomplex.reference import evaluator, quirks
from onnx_decomplex.validate import (
    EDGE_VALUES,
    EDGE_VALUES_128,
    REAL_EDGE_VALUES,
    Deadline,
    edge_positions,
    run_onnxruntime,
    upcast,
)

C64 = np.complex64


def _loop(count: int, elem=TensorProto.COMPLEX64, scan: bool = False) -> onnx.ModelProto:
    """v <- v * v, `count` times, with no cond input; with `scan`, also a [2, 3]
    value per iteration."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Mul", ["v", "v"], ["v_out"]),
    ]
    outputs = [vi("cond_out", np.bool_, []), helper.make_tensor_value_info("v_out", elem, [2])]
    if scan:
        nodes.append(helper.make_node("Mul", ["m", "v_first"], ["scan"]))
        nodes.insert(0, helper.make_node("Slice", ["v", "zero", "one"], ["v_first"]))
        outputs.append(helper.make_tensor_value_info("scan", elem, [2, 3]))
    body = helper.make_graph(
        nodes,
        "body",
        [
            vi("i", np.int64, []),
            vi("cond_in", np.bool_, []),
            helper.make_tensor_value_info("v", elem, [2]),
        ],
        outputs,
        [init("zero", np.array([0], np.int64)), init("one", np.array([1], np.int64))]
        if scan
        else [],
    )
    loop = helper.make_node(
        "Loop", ["M", "", "x"], ["y", "s"] if scan else ["y"], body=body, name="loop"
    )
    graph_outputs = [helper.make_tensor_value_info("y", elem, [2])]
    inputs = [helper.make_tensor_value_info("x", elem, [2])]
    if scan:
        graph_outputs.append(helper.make_tensor_value_info("s", elem, [count, 2, 3]))
        inputs.append(helper.make_tensor_value_info("m", elem, [2, 3]))
    return make_model([loop], inputs, graph_outputs, [init("M", np.array(count, np.int64))])


# Time limit


def test_reference_stops_at_the_time_limit():
    model = _loop(10**12)
    out, _ = decomplex(model)
    start = time.monotonic()
    with pytest.raises(ValidationTimeout, match="time limit of 0.5 s in the reference"):
        validate(model, out, timeout=0.5)
    assert time.monotonic() - start < 5


def test_onnxruntime_stops_at_the_time_limit():
    model = _loop(10**12, TensorProto.FLOAT)
    start = time.monotonic()
    with pytest.raises(ValidationTimeout, match="time limit of 0.5 s in onnxruntime"):
        run_onnxruntime(model, {"x": np.ones(2, np.float32)}, timeout=0.5)
    assert time.monotonic() - start < 5


def test_a_deadline_is_one_limit_for_several_calls():
    # The CLI compares with the reference and then with the framework's outputs: the
    # second comparison gets what the first left, not a fresh limit.
    model = _loop(3)
    out, _ = decomplex(model)
    deadline = Deadline(2.0)
    assert validate(model, out, timeout=deadline).passed
    time.sleep(2.1)
    with pytest.raises(ValidationTimeout, match="time limit of 2 s"):
        validate(model, out, timeout=deadline)


def test_no_limit_and_a_limit_both_pass_a_short_run():
    model = _loop(3)
    out, _ = decomplex(model)
    assert validate(model, out, timeout=None).passed
    assert validate(model, out, timeout=30).passed


# Float32 accumulation


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
    assert (
        upcast(
            make_model(
                [helper.make_node("Neg", ["x"], ["y"])],
                [vi("x", np.float64, [2])],
                [vi("y", np.float64, [2])],
            )
        )
        is None
    )


# onnx.reference's Loop


def test_loop_without_cond_runs_its_count():
    model = _loop(3)
    x = np.array([1 + 1j, 0.5j], C64)
    stock = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(stock, x)  # the stock evaluator runs no iteration
    ours = evaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(ours, x**8, rtol=1e-6)
    assert any("no cond input" in q for q in quirks(model))
    out, _ = decomplex(model)
    result = validate(model, out)
    assert result.passed, result.outputs
    assert any("no cond input" in n for n in result.notes)


def test_loop_scan_outputs_of_rank_two_are_stacked():
    model = _loop(3, scan=True)
    out, _ = decomplex(model)
    result = validate(model, out)
    assert result.passed, result.outputs
    assert result.expected[1].shape == (3, 2, 3)
    assert any("scan outputs" in n for n in result.notes)


# Edge values


def test_edge_positions_spread_and_leave_half_ordinary():
    assert edge_positions(100, 10).tolist() == list(range(0, 100, 10))
    assert edge_positions(6, 11).tolist() == [0, 2, 4]
    assert edge_positions(1, 11).tolist() == []


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_edge_values_are_fed_where_reported(dtype):
    model = make_model(
        [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Neg", ["r"], ["q"])],
        [vi("x", dtype, [8, 8]), vi("r", np.float32, [4])],
        [vi("y", dtype, [8, 8]), vi("q", np.float32, [4])],
    )
    out, _ = decomplex(model)
    result = validate(model, out)  # edge values by default
    edges = EDGE_VALUES_128 if dtype == np.complex128 else EDGE_VALUES
    assert list(result.edges) == ["x", "r"], "complex and real float inputs take edge values"
    where = result.edges["x"]
    assert where == edge_positions(64, len(edges)).tolist()
    fed = result.expected[0].reshape(-1)
    np.testing.assert_array_equal(fed[where], np.array(edges, dtype))
    assert np.array_equal(np.signbit(fed[where].real), np.signbit(np.array(edges, dtype).real))
    assert np.count_nonzero(np.isin(np.arange(64), where, invert=True)) == 64 - len(edges)
    # A real input holds both signed zeros; -(-0) is +0 in the output.
    assert result.edges["r"] == edge_positions(4, len(REAL_EDGE_VALUES)).tolist() == [0, 2]
    np.testing.assert_array_equal(np.signbit(result.expected[1][[0, 2]]), [True, False])
    assert result.passed
    assert validate(model, out, edges=False).edges == {}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_edge_values_pass_through_simple_arithmetic(dtype):
    # -(a + b), and a times a constant of modulus near 1: nothing overflows at 1e20.
    c = init("c", np.full((6, 5), 0.5 + 0.25j, dtype))
    model = make_model(
        [
            helper.make_node("Add", ["a", "b"], ["s"]),
            helper.make_node("Neg", ["s"], ["y"]),
            helper.make_node("Mul", ["a", "c"], ["z"]),
        ],
        [vi("a", dtype, [6, 5]), vi("b", dtype, [6, 5])],
        [vi("y", dtype, [6, 5]), vi("z", dtype, [6, 5])],
        [c],
    )
    out, _ = decomplex(model)
    result = validate(model, out, edges=True)
    assert set(result.edges) == {"a", "b"}
    assert result.passed, result.outputs


def test_validate_takes_the_bytes_that_were_written():
    model = make_model(
        [helper.make_node("Mul", ["a", "a"], ["y"])], [vi("a", C64, [3])], [vi("y", C64, [3])]
    )
    out, _ = decomplex(model)
    assert validate(model, out.SerializeToString()).passed


def _square_with(x, y):
    """x * x in float32, judged with `y` as the rewrite's result."""
    model = make_model(
        [helper.make_node("Mul", ["x", "x"], ["y"])],
        [vi("x", np.float32, [3])],
        [vi("y", np.float32, [3])],
    )
    (result,) = validate(
        model, None, {"x": np.array(x, np.float32)}, runner=lambda _: [np.array(y, np.float32)]
    ).outputs
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


def test_the_cli_ends_a_hanging_validation_in_one_line(tmp_path):
    src, out = tmp_path / "loop.onnx", tmp_path / "out.onnx"
    src.write_bytes(_loop(10**12).SerializeToString())
    start = time.monotonic()
    result = CliRunner().invoke(main, [str(src), str(out), "--validate-timeout", "0.5"])
    assert time.monotonic() - start < 30
    assert result.exit_code == EXIT_TIMEOUT
    (line,) = result.stderr.strip().splitlines()
    assert str(src) in line and "time limit of 0.5 s" in line
    assert not out.exists()


# Models given alone: random inputs, edge values included


ROOT_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
REFUSED_ALONE = {"complex_relu.onnx", "jax2onnx/cumprod.onnx"}
"""Fixtures refused before validation: a Relu of a complex value, and an op no opset has."""


def _alone(path: Path, folder: Path):
    src = folder / path.name
    shutil.copy(path, src)  # no NAME.npz beside it: random inputs and edge values
    return convert_file(src, folder / "out.onnx")


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=str(p.relative_to(ROOT_FIXTURES)))
     for p in sorted(ROOT_FIXTURES.glob("**/*.onnx"))
     if str(p.relative_to(ROOT_FIXTURES)) not in REFUSED_ALONE],
)  # fmt: skip
def test_every_fixture_given_alone_passes_default_validation(path, tmp_path):
    result = _alone(path, tmp_path)
    assert result.ok, [o for v in result.validations for o in v.outputs if not o.passed]


def test_a_transform_of_large_edge_values_is_judged_at_float32s_reach(tmp_path):
    """A 2-D FFT of a signal holding 1e20: onnxruntime's float32 kernel is off by 6e13
    at bins where exact arithmetic cancels the 1e20, which float32 cannot promise better:
    the noise floor there is float32's roundoff of the whole signal."""
    result = _alone(ROOT_FIXTURES / "tf2onnx" / "fft2d.onnx", tmp_path)
    assert result.ok
    (o,) = result.validation.outputs
    assert o.max_abs > 1e13 and o.floor_tol is not None and o.floor_tol < 1
    assert o.edges.elements > 0


def test_an_error_at_a_small_edge_value_is_not_excused(tmp_path):
    """Angle at 0 takes the sign of its zero parts: a flipped unit there is off by pi at an
    element that depends on the edge value 0 only, not on the 1e20 ones."""
    path = ROOT_FIXTURES / "models" / "tf2onnx" / "angle_zeros.onnx"
    out = tmp_path / "angle.onnx"
    assert convert_file(path, out).ok
    (mutant,) = [m for what, m in mutants(onnx.load(out)) if what.endswith("_unit_1")]
    onnx.save(mutant, out)
    (o,) = verify_file(path, out).validation.outputs
    assert not o.passed and o.edges.elements > 0
