"""Model builders and the three checks every rule test makes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.dtypes import onnx_of

IR_VERSION = {11: 6, 13: 7, 15: 8, 17: 8, 18: 8, 20: 9, 21: 10, 23: 11}
OPSETS = (11, 13, 18)
PRECISIONS = (np.complex64, np.complex128)


def vi(name: str, dtype, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, onnx_of(dtype), shape)


def init(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def make_model(nodes, inputs, outputs, initializers=(), opset: int = 18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "test", list(inputs), list(outputs), list(initializers))
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=IR_VERSION[opset]
    )


def crandn(rng, shape, dtype=np.complex64) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def assert_rewrites(model: onnx.ModelProto, *, feeds=None, input_shapes=None, atol=1e-5, rtol=1e-4):
    """The three checks: nothing complex is left, the full checker passes, and
    onnxruntime on the rewrite matches onnx.reference on the original."""
    out, report = decomplex(model)
    assert report.has_complex
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    result = validate(model, out, feeds, input_shapes=input_shapes, atol=atol, rtol=rtol)
    assert result.outputs, "nothing was compared"
    assert result.passed, result.outputs
    return out


def op_types(model: onnx.ModelProto) -> list[str]:
    return sorted(n.op_type for n in model.graph.node)


def run_ort(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def single(
    op: str,
    cdtype,
    opset: int = 18,
    *,
    shape=(2, 3),
    attrs: dict | None = None,
    inputs: list[str] | None = None,
    extra=(),
    inits=(),
    out_dtype=None,
    pair: bool = False,
    n_out: int = 1,
) -> onnx.ModelProto:
    """A model of one `op` node on complex input 'a' of `shape`.

    `inputs` names the node's inputs ('a' by default); `extra` adds graph inputs and
    `inits` initializers. With `pair`, 'a' first goes through Mul(a, a), whose result
    exists only as a (re, im) pair: that exercises each rule's pair path.
    """
    names = list(inputs or ["a"])
    nodes = []
    if pair:
        nodes.append(helper.make_node("Mul", ["a", "a"], ["a2"]))
        names = ["a2" if n == "a" else n for n in names]
    outs = [f"y{i}" if n_out > 1 else "y" for i in range(n_out)]
    nodes.append(helper.make_node(op, names, outs, **(attrs or {})))
    return make_model(
        nodes,
        [vi("a", cdtype, list(shape)), *extra],
        [vi(o, out_dtype or cdtype, None) for o in outs],
        inits,
        opset=opset,
    )
