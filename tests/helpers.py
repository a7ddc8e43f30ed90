"""Model builders and the three checks every rule test makes.

A rule test states the op types of the rewritten main graph as an exact multiset
(`ops=`), built from the named pieces below where a rule's formula uses them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.dtypes import onnx_of
from onnx_decomplex.pipeline import FileResult, Files, convert_file, siblings

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


class Ops(Counter):
    """A multiset of op types: `a + b` adds counts, `n * a` repeats them."""

    def __add__(self, other):
        return Ops(Counter.__add__(self, other))

    def __mul__(self, n: int):
        return Ops({op: count * n for op, count in self.items()})

    __rmul__ = __mul__


REAL_PART = Ops(Split=1, Squeeze=1)
"""Re z alone: split off the last axis, the imaginary half never squeezed."""
UNPACK = Ops(Split=1, Squeeze=2)
"""z -> (Re z, Im z): one Split of the last axis, each half squeezed."""
PACK = Ops(Unsqueeze=2, Concat=1)
"""(re, im) -> z: each part unsqueezed, and concatenated on a new last axis."""
SQUARE = Ops(Abs=2, Sub=1, Add=2, Mul=2)
"""(ar + i ai)^2 = (|ar| - |ai|)(|ar| + |ai|) + i (ar + ar) ai."""
PAIR_SOURCE = UNPACK + SQUARE
"""What `single(..., pair=True)`'s Mul(a, a) adds: a unpacked and squared, a pair."""
DENSE_DFT = Ops(MatMul=1, Reshape=2)
"""A DFT up to length 12, on the axis before (re, im): one MatMul by its dense matrix
(another axis is moved there and back by two Transposes)."""
FOUR_STEP_DFT = Ops(MatMul=2, Reshape=6, Transpose=3)
"""A DFT of a length that factors: two MatMuls, the signal's halves moved between them."""
PRODUCT = Ops(Mul=4, Sub=1, Add=1)
"""(ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)."""


def on_parts(ops: Mapping[str, int], pair: bool = False, others: int = 0) -> Ops:
    """`ops` on the parts of `single`'s input: 'a' unpacked (or, with `pair`, made a
    pair by its Mul(a, a)), `others` more complex operands unpacked, the result packed."""
    return (PAIR_SOURCE if pair else UNPACK) + others * UNPACK + Ops(ops) + PACK


def packed_or_parts(op: str, pair: bool, others: int = 0) -> Ops:
    """An op that acts alike on both parts: one node on the packed tensor, or one per
    part of a pair."""
    return on_parts({op: 2}, pair, others) if pair else Ops({op: 1})


ATAN_STEP = Ops(Cast=2, Sin=1, Cos=1, Mul=4, Sub=2, Add=1)
"""float64 atan t: y - c r (1 + s r) from y, the atan of t cast to float32, with s, c =
sin y, cos y and r = s - t c (`cmath.atan_unit_refined`)."""
COSH_BY_EXP = Ops(Exp=2, Neg=1, Add=1, Mul=1)
"""float64 cosh x = (e^x + e^-x) * 0.5."""
SINH_BY_TANH = Ops(Tanh=1, Mul=1) + COSH_BY_EXP
"""float64 sinh x = tanh x cosh x."""
QUARTER_TURNS = Ops(Mul=11, Add=1, Floor=3, Sub=5, Abs=1, Less=1)
"""float64 x = k pi/2 + r (`cmath.QuarterTurns`): k and r by a two-part pi/2, sin r near
0 as r (1 - r^2 / 6), its sign by k mod 4, and the test for |x| past the reduction."""
SIN_TURNED = Ops(Sin=1, Abs=1, Less=1, Or=1, Where=1)
"""float64 sin x: onnxruntime's, or its quarter turns' near its zeros."""
COS_TURNED = SIN_TURNED + Ops(Neg=1, Sin=-1, Cos=1)
"""float64 cos x alike."""


def in_double(ops: Mapping[str, int]) -> Ops:
    """`ops` as a complex128 rewrite emits them: onnxruntime's CPU provider has no
    float64 Atan, Sinh or Cosh (`dtypes.ORT_CPU_NO_FLOAT64`), which are built from ops
    it has; each Atan is refined by Newton steps from its float32 value. Sin and Cos
    are corrected near their zeros by quarter turns (`cmath.QuarterTurns`), one reduction
    for the sine and the cosine of one value, as every formula takes both."""
    ops = Ops(ops)
    sinh, cosh = ops.pop("Sinh", 0), ops.pop("Cosh", 0)
    sin, cos = ops.pop("Sin", 0), ops.pop("Cos", 0)
    ops += max(sin, cos) * QUARTER_TURNS + sin * SIN_TURNED + cos * COS_TURNED
    for _ in range(ops["Atan"]):
        ops += ATAN_STEP
    for _ in range(sinh):
        ops += SINH_BY_TANH
    for _ in range(cosh):
        ops += COSH_BY_EXP
    return ops


def at(cdtype, ops: Mapping[str, int]) -> Ops:
    """`ops` for complex64, `in_double(ops)` for complex128."""
    return in_double(ops) if np.dtype(cdtype) == np.complex128 else Ops(ops)


def op_counts(model: onnx.ModelProto) -> Counter:
    """The op types of the main graph, with their counts."""
    return Counter(n.op_type for n in model.graph.node)


def assert_ops(out: onnx.ModelProto, ops: Mapping[str, int]) -> None:
    """The checks on a rewrite alone: exactly the op types `ops` in the main graph,
    nothing complex left, and the full checker passes."""
    assert op_counts(out) == +Counter(ops), f"ops {dict(op_counts(out))}, expected {dict(ops)}"
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)


def assert_rewrites(
    model: onnx.ModelProto,
    *,
    ops: Mapping[str, int] | None = None,
    feeds=None,
    input_shapes=None,
    atol=1e-5,
    rtol=1e-4,
    **options,
):
    """The three checks: exactly the op types `ops` in the rewrite's main graph (with
    nothing complex left), the full checker, and onnxruntime on the rewrite against
    onnx.reference on the original. `options` go to `decomplex`.

    Every rule test states `ops` (tests/rules/test_stated_ops.py holds them to it)."""
    out, report = decomplex(model, **options)
    assert report.has_complex
    if ops is None:
        assert find_complex(out) == []
        onnx.checker.check_model(out, full_check=True)
    else:
        assert_ops(out, ops)
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


def convert_export(src, out, target: str = "onnx") -> FileResult:
    """An export converted to `out` for `target`, validated against its framework's
    inputs and outputs beside it (`pipeline.siblings`), which it must match."""
    inputs, expected = siblings(src)
    result = convert_file(src, out, files=Files(inputs=inputs, expected=expected), target=target)
    assert result.ok and result.framework.passed, result.framework.outputs
    return result
