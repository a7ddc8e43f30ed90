"""A product of two matrices less a value, or from one, as one Gemm (`common.gemm`):
both spellings, transposed operands as transA and transB (in a sum too), what Gemm
cannot take left as it is, and the MVDR beamformer's Newton-Schulz steps."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import Ops, convert_export, init, make_model, op_counts, vi
from onnx import helper

from onnx_decomplex import decomplex, validate

CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "models"
F32 = np.float32


def _model(op: str, product_first: bool, a=(4, 6), b=(6, 5), c=(4, 5), dtype=F32, read_twice=False):
    """y = op(A B, C), or op(C, A B); A and B inputs (`a` None: of no known shape), C a
    constant (`c` None: an input of no known shape)."""
    operands = ["p", "c"] if product_first else ["c", "p"]
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node(op, operands, ["y"])]
    outputs = [vi("y", dtype, None)]
    if read_twice:
        nodes.append(helper.make_node("Relu", ["p"], ["r"]))
        outputs.append(vi("r", dtype, None))
    inputs = [vi("a", dtype, None if a is None else list(a)), vi("b", dtype, list(b))]
    if c is None:
        return make_model(nodes, [*inputs, vi("c", dtype, None)], outputs)
    c_value = np.random.default_rng(0).standard_normal(c).astype(dtype)
    return make_model(nodes, inputs, outputs, [init("c", c_value)])


@pytest.mark.parametrize("product_first, alpha, beta", [(False, -1.0, 1.0), (True, 1.0, -1.0)])
@pytest.mark.parametrize("c", [(4, 5), (5,), (4, 1), ()], ids=str)
def test_a_difference_with_a_product_is_one_gemm(product_first, alpha, beta, c):
    model = _model("Sub", product_first, c=c)
    out, report = decomplex(model, target="onnxruntime")
    assert op_counts(out) == Ops(Gemm=1)
    gemm = out.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in gemm.attribute}
    assert (attrs["alpha"], attrs["beta"]) == (alpha, beta)
    assert any("a difference with a product -> one Gemm" in n for n in report.lowering_notes)
    onnx.checker.check_model(out, full_check=True)
    assert validate(model, out).passed


@pytest.mark.parametrize("op", ["Sub", "Add"])
@pytest.mark.parametrize("transposed", ["a", "b", "ab"])
def test_a_transposed_operand_is_read_as_gemms_trans(op, transposed):
    """A Transpose of A or B is Gemm's transA or transB, in a difference or a sum (which
    onnxruntime fuses into a Gemm of its own, leaving the Transpose a node): a Transpose
    read elsewhere too stays for that reader."""
    dims = {"a": (4, 6), "b": (6, 5)}
    nodes, inputs = [], []
    for name in "ab":
        if name in transposed:
            nodes.append(helper.make_node("Transpose", [name], [f"{name}t"], perm=[1, 0]))
            inputs.append(vi(name, F32, list(dims[name][::-1])))
        else:
            nodes.append(helper.make_node("Identity", [name], [f"{name}t"]))
            inputs.append(vi(name, F32, list(dims[name])))
    nodes += [
        helper.make_node("MatMul", ["at", "bt"], ["p"]),
        helper.make_node(op, ["p", "c"], ["y"]),
        helper.make_node("Relu", ["at"], ["r"]),  # A's Transpose is read twice
    ]
    outputs = [vi("y", F32, None), vi("r", F32, None)]
    c = init("c", np.random.default_rng(0).standard_normal((4, 5)).astype(F32))
    model = make_model(nodes, inputs, outputs, [c])
    out, _ = decomplex(model, target="onnxruntime")
    (gemm,) = [n for n in out.graph.node if n.op_type == "Gemm"]
    attrs = {a.name: helper.get_attribute_value(a) for a in gemm.attribute}
    assert (attrs["transA"], attrs["transB"]) == ("a" in transposed, "b" in transposed)
    assert list(gemm.input[:2]) == [n if n in transposed else f"{n}t" for n in "ab"]
    assert op_counts(out)["Transpose"] == ("a" in transposed)
    onnx.checker.check_model(out, full_check=True)
    assert validate(model, out).passed


@pytest.mark.parametrize(
    "kind",
    ["batched", "read twice", "wider C", "integers", "a sum", "no shape", "C of no shape"],
)
def test_what_gemm_cannot_take_is_left(kind):
    model = {
        "batched": lambda: _model("Sub", False, a=(2, 4, 6), b=(6, 5), c=(4, 5)),
        "read twice": lambda: _model("Sub", False, read_twice=True),
        "wider C": lambda: _model("Sub", True, c=(3, 4, 5)),
        "integers": lambda: _model("Sub", True, dtype=np.int32),
        "a sum": lambda: _model("Add", True),  # onnxruntime fuses it itself, no Transpose
        "no shape": lambda: _model("Sub", True, a=None),  # a Loop's output, say
        "C of no shape": lambda: _model("Sub", True, c=None),
    }[kind]()
    out, _ = decomplex(model, target="onnxruntime")
    assert "Gemm" not in op_counts(out) and op_counts(out)["MatMul"] == 1
    feeds = {"a": np.ones((4, 6), F32), "b": np.ones((6, 5), F32), "c": np.ones((4, 5), F32)}
    if kind not in ("no shape", "C of no shape"):
        feeds = None
    elif kind == "no shape":
        del feeds["c"]
    assert validate(model, out, feeds).passed


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_newton_schulz_steps_are_a_product_and_a_gemm(target, tmp_path):
    """The MVDR beamformer's twelve steps X (2I - R X) on block matrices: twelve Gemms,
    each R X subtracted from 2I, and the last one's parts read into the quadratic form as
    one MatMul (a read-out); the outputs match JAX's."""
    out_path = tmp_path / "mvdr.onnx"
    result = convert_export(CORPUS / "jax2onnx" / "beamformer_mvdr.onnx", out_path, target)
    assert result.validation.passed
    counts = op_counts(onnx.load(out_path))
    assert counts["Gemm"] >= 12 and "Sub" in counts
    assert result.report.lowered["read-out"] == 1
