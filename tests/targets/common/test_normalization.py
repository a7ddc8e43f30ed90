"""LayerNorm and RMSNorm written as means and elementwise ops, however spelled, as one
node (`common.normalization`), their weights taken in; and a formula whose values are
read elsewhere left as written."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import Ops, convert_export, init, make_model, op_counts, vi
from onnx import helper

from onnx_decomplex import decomplex, validate

F32 = np.float32
CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "models"


def _norm(centered: bool, square: str, divide: str, weight: bool, bias: bool, opset=18):
    """x [2, 5, 8] normalized over its last axis: `square` "Mul" or "Pow", `divide`
    "Div" (d / root) or "Mul" (d times 1 / root), then a weight and a bias."""
    axes = [init("axes", np.array([-1], np.int64))]
    nodes, d = [], "x"
    if centered:
        nodes += [helper.make_node("ReduceMean", ["x", "axes"], ["mu"]),
                  helper.make_node("Sub", ["x", "mu"], ["d"])]  # fmt: skip
        d = "d"
    if square == "Mul":
        nodes.append(helper.make_node("Mul", [d, d], ["sq"]))
    else:
        nodes.append(helper.make_node("Pow", [d, "two"], ["sq"]))
    nodes += [helper.make_node("ReduceMean", ["sq", "axes"], ["var"]),
              helper.make_node("Add", ["var", "eps"], ["shifted"]),
              helper.make_node("Sqrt", ["shifted"], ["root"])]  # fmt: skip
    if divide == "Div":
        nodes.append(helper.make_node("Div", [d, "root"], ["n"]))
    else:
        nodes += [helper.make_node("Div", ["one", "root"], ["inv"]),
                  helper.make_node("Mul", ["inv", d], ["n"])]  # fmt: skip
    out = "n"
    if weight:
        nodes.append(helper.make_node("Mul", [out, "w"], ["nw"]))
        out = "nw"
    if bias:
        nodes.append(helper.make_node("Add", [out, "b"], ["nb"]))
        out = "nb"
    nodes.append(helper.make_node("Relu", [out], ["y"]))
    rng = np.random.default_rng(0)
    inits = [*axes, init("two", np.array(2, F32)), init("eps", np.array(1e-5, F32)),
             init("one", np.array(1, F32)), init("w", rng.uniform(0.5, 2, [1, 1, 8]).astype(F32)),
             init("b", rng.standard_normal(8).astype(F32))]  # fmt: skip
    return make_model(nodes, [vi("x", F32, [2, 5, 8])], [vi("y", F32, [2, 5, 8])], inits, opset)


@pytest.mark.parametrize("square", ["Mul", "Pow"])
@pytest.mark.parametrize("divide", ["Div", "Mul"])
def test_a_layer_norm_however_spelled_is_one_node(square, divide):
    model = _norm(True, square, divide, weight=True, bias=True)
    out, report = decomplex(model, target="onnxruntime")
    assert op_counts(out) == Ops(LayerNormalization=1, Relu=1), report.lowering_notes
    assert validate(model, out).passed


def test_an_rms_norm_is_one_node_from_opset_23():
    """Llama's x (1 / sqrt(mean(x x) + eps)) w; below opset 23, as written."""
    model = _norm(False, "Mul", "Mul", weight=True, bias=False, opset=23)
    out, _ = decomplex(model, target="onnxruntime")
    assert op_counts(out) == Ops(RMSNormalization=1, Relu=1)
    assert validate(model, out).passed
    below, _ = decomplex(_norm(False, "Mul", "Mul", weight=True, bias=False), target="onnxruntime")
    assert "RMSNormalization" not in op_counts(below)


def test_a_formula_whose_value_is_read_elsewhere_stays():
    model = _norm(True, "Pow", "Div", weight=False, bias=False)
    model.graph.output.append(vi("var", F32, [2, 5, 1]))
    out, report = decomplex(model, target="onnxruntime")
    assert "LayerNormalization" not in op_counts(out) and not report.lowering_notes


def test_the_default_target_leaves_a_model_with_no_complex_value_as_it_is():
    out, report = decomplex(_norm(True, "Pow", "Div", weight=False, bias=False))
    assert not report.changed and "LayerNormalization" not in op_counts(out)


def test_llamas_rms_norms_are_nodes_on_the_default_target(tmp_path):
    result = convert_export(CORPUS / "jax2onnx" / "llama_decoder.onnx", tmp_path / "out.onnx")
    assert result.validation.passed
    assert op_counts(onnx.load(tmp_path / "out.onnx"))["RMSNormalization"] == 5


def test_a_model_with_no_complex_value_is_edited_in_a_copy():
    """The onnxruntime target's forms apply to such a model too; the model given to
    decomplex is left as it was."""
    model = _norm(True, "Pow", "Div", weight=True, bias=True)
    before = model.SerializeToString()
    out, _ = decomplex(model, target="onnxruntime")
    assert model.SerializeToString() == before
    assert "LayerNormalization" in op_counts(out)


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_the_square_of_an_l2_norm_is_a_sum_of_squares(opset):
    """A power spectrum's |X|^2 as torch exports it: ReduceL2 over the (re, im) axis, then
    Pow 2 (the exponent a [1] tensor, as tf2onnx writes its constants, at opset 18). Its
    axes move from ReduceL2's attribute to ReduceSum's input at 13."""
    axes = np.array([-1], np.int64)
    reduce = (
        helper.make_node("ReduceL2", ["x"], ["norm"], axes=[-1], keepdims=0)
        if opset < 18
        else helper.make_node("ReduceL2", ["x", "axes"], ["norm"], keepdims=0)
    )
    model = make_model(
        [reduce, helper.make_node("Pow", ["norm", "two"], ["y"])],
        [vi("x", F32, [3, 7, 2])],
        [vi("y", F32, [3, 7])],
        [
            init("two", np.array([2] if opset >= 18 else 2, F32)),
            *([init("axes", axes)] if opset >= 18 else []),
        ],
        opset,
    )
    out, _ = decomplex(model, target="onnxruntime")
    assert op_counts(out) == Ops(Mul=1, ReduceSum=1)
    onnx.checker.check_model(out, full_check=True)
    assert validate(model, out).passed
