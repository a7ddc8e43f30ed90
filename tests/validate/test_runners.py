"""The two runs: the reference evaluator's and onnxruntime's, their time limit, the
providers, and the reference's reading of Loop."""

import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from helpers import init, make_model, vi
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnx_decomplex.cli.exits import EXIT_TIMEOUT
from onnx_decomplex.cli.main import main

from onnx_decomplex import decomplex, validate
from onnx_decomplex.errors import DecomplexError, OptionError, ValidationTimeout
from onnx_decomplex.reference import evaluator, quirks
from onnx_decomplex.validate import runners

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


def _neg(dtype=np.float32):
    return make_model([helper.make_node("Neg", ["x"], ["y"])], [vi("x", dtype, [3])],
                      [vi("y", dtype, [3])])  # fmt: skip


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
        runners.run_onnxruntime(model, {"x": np.ones(2, np.float32)}, timeout=0.5)
    assert time.monotonic() - start < 5


def test_a_deadline_is_one_limit_for_several_calls():
    # The CLI compares with the reference and then with the framework's outputs: the
    # second comparison gets what the first left, not a fresh limit.
    model = _loop(3)
    out, _ = decomplex(model)
    deadline = runners.Deadline(2.0)
    assert validate(model, out, timeout=deadline).passed
    time.sleep(2.1)
    assert deadline.left() == 0.0 and runners.Deadline(None).left() is None
    with pytest.raises(ValidationTimeout, match="time limit of 2 s"):
        validate(model, out, timeout=deadline)


def test_no_limit_and_a_limit_both_pass_a_short_run():
    model = _loop(3)
    out, _ = decomplex(model)
    assert validate(model, out, timeout=None).passed
    assert validate(model, out, timeout=30).passed


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


# Either side failing


def test_a_side_that_cannot_run_is_one_error():
    model = make_model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", np.float32, [3])],
                       [vi("y", np.float32, [4])], [init("s", np.array([4], np.int64))])  # fmt: skip
    feeds = {"x": np.ones(3, np.float32)}
    with pytest.raises(DecomplexError, match="the reference evaluator could not run the orig"):
        runners.run_reference(model, feeds)
    with pytest.raises(DecomplexError, match="onnxruntime could not run the rewritten model"):
        runners.run_onnxruntime(model, feeds)


def test_float_feeds_take_the_float_type_each_input_declares():
    # A model narrowed to float32 (for TensorRT) takes the original's float64 inputs.
    (y,) = runners.run_onnxruntime(_neg(), {"x": np.array([1.0, -2.0, 0.5])})
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, [-1.0, 2.0, -0.5])


def test_without_onnxruntime_validation_names_the_extras(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(DecomplexError) as info:
        runners.import_onnxruntime()
    assert runners.RUNTIME_HINT in str(info.value) and "--no-validate" in str(info.value)


# Providers


def test_providers_by_short_or_full_name_in_any_case():
    assert runners.resolve_providers("cpu") == ["CPUExecutionProvider"]
    assert runners.resolve_providers(["CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert runners.resolve_providers("Cpu") == ["CPUExecutionProvider"]


def test_providers_onnxruntime_lacks_are_refused_with_what_it_has():
    available = ort.get_available_providers()
    if "CUDAExecutionProvider" in available:
        assert runners.resolve_providers("cuda,cpu") == [
            "CUDAExecutionProvider",
            "CPUExecutionProvider",
        ]
    else:
        with pytest.raises(OptionError) as info:
            runners.resolve_providers("cuda,cpu")
        text = str(info.value)
        assert "no CUDAExecutionProvider; it has " + ", ".join(available) in text
        assert "onnx-decomplex[gpu]" in text
    with pytest.raises(OptionError, match="unknown execution provider 'gpu'"):
        runners.resolve_providers("gpu")
    with pytest.raises(OptionError, match="'CPU' is given twice"):
        runners.resolve_providers("cpu,CPU")


@pytest.mark.skipif(
    "CUDAExecutionProvider" in ort.get_available_providers(), reason="CUDA is available here"
)
def test_a_provider_that_does_not_load_is_an_error_not_a_fallback():
    # onnxruntime, asked for a provider it lacks, runs on the CPU with a warning.
    with pytest.raises(DecomplexError, match="could not use CUDAExecutionProvider"):
        runners.run_onnxruntime(_neg(), {"x": np.ones(3, np.float32)}, ["CUDAExecutionProvider"])


# onnx.reference's Loop


def test_loop_without_cond_runs_its_count():
    model = _loop(3)
    x = np.array([1 + 1j, 0.5j], C64)
    stock = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(stock, x)  # the stock evaluator runs no iteration
    ours = evaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(ours, x**8, rtol=1e-6)
    np.testing.assert_allclose(runners.run_reference(model, {"x": x})[0], x**8, rtol=1e-6)
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


# onnx.reference's Expand


def test_expand_of_a_complex_value_broadcasts_it_as_is():
    """The stock Expand multiplies by ones: -0 - 4i times 1 + 0i is +0 - 4i, whose
    arctan lies across the cut (pi/2 where numpy's own arctan of the value is -pi/2),
    and inf + 0i turns inf + NaN i. Here Expand broadcasts, and the rewrite matches it
    (the fuzzer's Atan(Expand(x)))."""
    nodes = [
        helper.make_node("Expand", ["x", "shape"], ["e"]),
        helper.make_node("Atan", ["e"], ["y"]),
    ]
    model = make_model(nodes, [vi("x", C64, [4])], [vi("y", C64, [2, 4]), vi("e", C64, [2, 4])],
                       [init("shape", np.array([2, 1], np.int64))])  # fmt: skip
    x = np.array([complex(-0.0, -4.0), complex(0.0, 4.0), complex(np.inf, 0.0), 1 - 1j], C64)
    stock = ReferenceEvaluator(model).run(None, {"x": x})[1]
    assert not np.signbit(stock[0, 0].real) and np.isnan(stock[0, 2].imag)
    y, e = evaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(e.view(np.float32), np.broadcast_to(x, (2, 4)).view(np.float32))
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(y, np.arctan(np.broadcast_to(x, (2, 4))), rtol=1e-6)
    assert y[0, 0].real < 0
    out, _ = decomplex(model)
    result = validate(model, out, {"x": x})
    assert result.passed, result.outputs
