"""Attention over heads written as MatMuls, Transposes, a scale, a mask's Where and a
Softmax, as one node (`common.attention`): from opset 23 the standard Attention on the
onnxruntime and default targets, below it com.microsoft.MultiHeadAttention on the
onnxruntime target; a spelling it does not cover, a scale a node cannot take, or a value
read elsewhere, left as written."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import Ops, convert_export, init, make_model, op_counts, vi
from onnx import helper
from onnx.reference import ReferenceEvaluator

from onnx_decomplex import decomplex, validate

F32 = np.float32
CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "models"
B, S, H, D = 2, 5, 3, 4
SHAPES = {"xq": (B, S, H * D), "xk": (B, S, H * D), "xv": (B, S, H * D)}


def _attention(scale: str | None = "Div", masked: float | None = -np.inf, mask_rank: int = 2,
               keys: int = S, heads_first: bool = False, bias: str | None = None,
               by: float = 2.0, opset: int = 18, whole_row: bool = False
               ) -> onnx.ModelProto:  # fmt: skip
    """xq [B, S, H D] and xk, xv [B, keys, H D] in heads, scores scaled (`scale` "Div"
    or "Mul", or none, `by`), masked by a causal [S, keys] (of `mask_rank`, leading 1s)
    with `masked` (or not), softmax, weighted values back as [B, S, H D], then Relu. With
    `heads_first`, k is moved heads first and then transposed (torch's k^T); with a
    `bias`, the mask is added: a "constant" of -inf, or one "computed" from a Trilu.
    With `whole_row`, the (constant) mask masks the first query's row whole."""
    nodes = [helper.make_node("Reshape", [f"x{n}", f"shape_{n}"], [f"{n}4"]) for n in "qkv"]
    keys_t = [helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1])]
    if heads_first:
        keys_t = [helper.make_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 1, 3]),
                  helper.make_node("Transpose", ["kh"], ["kt"], perm=[0, 1, 3, 2])]  # fmt: skip
    nodes += [
        helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
        *keys_t,
        helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qt", "kt"], ["s"]),
    ]
    s = "s"
    if scale:
        nodes.append(helper.make_node(scale, ["s", "c"], ["scaled"]))
        s = "scaled"
    if bias == "computed":  # -inf above the diagonal, as jax2onnx writes a causal mask
        nodes += [helper.make_node("ConstantOfShape", ["square"], ["full"],
                                   value=onnx.numpy_helper.from_array(np.array([-np.inf], F32))),
                  helper.make_node("Trilu", ["full", "one"], ["above"], upper=1),
                  helper.make_node("Reshape", ["above", "shape_bias"], ["bias"])]  # fmt: skip
    if bias is not None:
        nodes.append(helper.make_node("Add", [s, "bias"], ["kept"]))
        s = "kept"
    elif masked is not None:
        nodes.append(helper.make_node("Where", ["mask", s, "off"], ["kept"]))
        s = "kept"
    nodes += [
        helper.make_node("Softmax", [s], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vt"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ot", "shape_y"], ["y0"]),
        helper.make_node("Relu", ["y0"], ["y"]),
    ]
    causal = np.tril(np.ones((S, keys), bool), k=keys - S)
    causal[0] &= not whole_row
    inits = [init(f"shape_{n}", np.array([B, S if n == "q" else keys, H, D])) for n in "qkv"]
    inits += [init("shape_y", np.array([B, S, H * D])), init("c", np.array(by, F32)),
              init("off", np.array(masked if masked is not None else 0, F32)),
              init("mask", causal.reshape([1] * (mask_rank - 2) + [S, keys]))]  # fmt: skip
    if bias == "constant":
        inits.append(init("bias", np.where(causal, 0, -np.inf).astype(F32)))
    elif bias == "computed":
        inits += [init("square", np.array([S, keys])), init("one", np.array(keys - S + 1)),
                  init("shape_bias", np.array([1, 1, S, keys]))]  # fmt: skip
    ins = [vi("xq", F32, [B, S, H * D]), vi("xk", F32, [B, keys, H * D]),
           vi("xv", F32, [B, keys, H * D])]  # fmt: skip
    return make_model(nodes, ins, [vi("y", F32, [B, S, H * D])], inits, opset)


NODE = {18: "MultiHeadAttention", 23: "Attention"}
"""The node the onnxruntime target puts in an attention's place, by the model's opset."""


def _one_node(model: onnx.ModelProto, opset: int) -> None:
    """Asserts the onnxruntime target makes `model` one attention node, and that it
    matches the reference and passes the full check."""
    out, report = decomplex(model, target="onnxruntime")
    counts = op_counts(out)
    assert counts[NODE[opset]] == 1, report.lowering_notes
    assert not counts.keys() & {"Softmax", "Transpose", "MatMul"}
    onnx.checker.check_model(out, full_check=True)
    assert validate(model, out, atol=1e-6, rtol=1e-5).passed


@pytest.mark.parametrize("opset", [18, 23])
@pytest.mark.parametrize("scale", ["Div", "Mul", None])
@pytest.mark.parametrize("mask_rank", [2, 4])
def test_attention_however_scaled_is_one_node(scale, mask_rank, opset):
    _one_node(_attention(scale, mask_rank=mask_rank, opset=opset), opset)


@pytest.mark.parametrize("opset", [18, 23])
@pytest.mark.parametrize("bias", ["constant", "computed"])
@pytest.mark.parametrize("heads_first", [False, True])
def test_an_added_mask_and_keys_moved_twice_are_one_node(bias, heads_first, opset):
    """A mask added as a bias (a constant, or computed at run time as a causal Trilu,
    whose shape inference leaves unknown there), and keys moved heads first then
    transposed (two Transposes, as torch writes k^T): one node."""
    _one_node(_attention("Div", bias=bias, heads_first=heads_first, opset=opset), opset)


@pytest.mark.parametrize("opset", [18, 23])
def test_attention_with_no_mask_and_other_keys(opset):
    model = _attention("Div", masked=None, keys=7, opset=opset)
    out, _ = decomplex(model, target="onnxruntime")
    assert op_counts(out) == Ops({NODE[opset]: 1, "Relu": 1})
    assert validate(model, out, atol=1e-6, rtol=1e-5).passed


@pytest.mark.parametrize(("scale", "by", "opset", "node"), [
    ("Mul", -0.5, 18, "MultiHeadAttention"),  # MultiHeadAttention takes a negative scale
    ("Mul", -0.5, 23, "MultiHeadAttention"),  # onnxruntime refuses it in the standard node
    ("Mul", 0.0, 18, None),  # MultiHeadAttention would read 0 as 1 / sqrt(D)
    ("Div", 0.0, 23, None),  # scores / 0: no scale
    ("Div", np.inf, 18, None),
])  # fmt: skip
def test_a_scale_a_node_cannot_take_is_the_other_node_or_stays(scale, by, opset, node):
    model = _attention(scale, by=by, opset=opset)
    out, _ = decomplex(model, target="onnxruntime")
    counts = op_counts(out)
    if node is None:
        assert "Softmax" in counts and not counts.keys() & set(NODE.values())
    else:
        assert counts[node] == 1 and "Softmax" not in counts
    assert validate(model, out, atol=1e-6, rtol=1e-5).passed


@pytest.mark.parametrize(("bias", "masked", "node"), [
    (None, -np.inf, "MultiHeadAttention"),
    ("constant", None, "MultiHeadAttention"),
    (None, -1e30, "Attention"),  # the row's weights are even, in either node
])  # fmt: skip
def test_a_row_masked_whole_with_minus_infinity_is_not_the_standard_node(bias, masked, node):
    """onnxruntime's standard Attention gives a row of scores that are all -inf 0, where
    Softmax gives NaN: such a mask takes MultiHeadAttention, which keeps the NaN."""
    model = _attention("Div", masked=masked, bias=bias, opset=23, whole_row=True)
    out, _ = decomplex(model, target="onnxruntime")
    counts = op_counts(out)
    assert counts[node] == 1 and "Softmax" not in counts
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal(SHAPES[i.name]).astype(F32) for i in model.graph.input}
    first = ReferenceEvaluator(model).run(None, feeds)[0][:, 0]
    assert np.isnan(first).all() == (masked != -1e30)
    assert validate(model, out, feeds, atol=1e-6, rtol=1e-5).passed


def test_a_mask_that_leaves_a_finite_score_stays():
    """Where(mask, s, -1e4) is not a sum with -1e4: a row masked whole differs."""
    out, report = decomplex(_attention("Div", masked=-1e4), target="onnxruntime")
    assert "MultiHeadAttention" not in op_counts(out) and not report.lowering_notes


def test_scores_read_elsewhere_stay():
    model = _attention("Div")
    model.graph.output.append(vi("p", F32, [B, H, S, S]))
    out, _ = decomplex(model, target="onnxruntime")
    assert "MultiHeadAttention" not in op_counts(out)


def test_the_default_target_leaves_attention_as_written():
    out, report = decomplex(_attention("Div"))
    assert not report.changed and "MultiHeadAttention" not in op_counts(out)


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
@pytest.mark.parametrize("name", ["llama_decoder", "llama_decoder_heads_first"])
def test_llamas_attention_is_one_node_a_layer(name, target, tmp_path):
    """Both spellings: heads split from [B, S, H D] and rotated there, or moved heads
    first and rotated as [B, H, S, D] (whose rotation then reads [B, S, H D] too, and
    whose causal mask is a Trilu added). Both models import opset 23: the standard
    node, on the default target too."""
    src = CORPUS / "jax2onnx" / f"{name}.onnx"
    result = convert_export(src, tmp_path / "out.onnx", target=target)
    assert result.validation.passed
    counts = op_counts(onnx.load(tmp_path / "out.onnx"))
    assert counts["Attention"] == 2 and counts["RotaryEmbedding"] == 4
    assert "Softmax" not in counts
