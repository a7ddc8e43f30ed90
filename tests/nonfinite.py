"""Why infinities and NaNs of a rewrite may differ from the reference's, not by a bug:
the causes docs/rewrite.md (Precision) documents, read off the reference's own values.
The fuzzer and the property tests accept a failure made only of such differences."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from onnx_decomplex.rules.unary import FUNCTIONS

# Ops that sum products: past overflow, numpy's `a b - c d` is -inf on a CPU with fused
# multiply-add and NaN without (docs/rewrite.md, Precision).
PRODUCTS = {"Mul", "Pow", "MatMul", "Gemm", "Einsum", "Conv", "ConvTranspose", "DFT",
            "ReduceSumSquare", "ReduceL2", "ReduceProd"}  # fmt: skip


# Of those, the products of two operands, the sums of squares of one, and the sums of one
# by unit weights (a transform's twiddles, which onnxruntime's own DFT scales as it goes).
BILINEAR = {"Mul", "MatMul", "Gemm", "Einsum", "Conv", "ConvTranspose"}
SQUARES = {"ReduceSumSquare", "ReduceL2"}
UNIT_WEIGHTED = {"DFT"}


# Functions with a pole: where the reference's operand sits exactly on it (log(0), as
# log(log(acos(cos 1))) meets in float64), and is a computed value, a rounding of it
# elsewhere (one ulp) gives a finite value where the reference's is infinite.
POLES = {"Log", "Div", "Reciprocal", "Pow", "Tan", "Tanh", "Atanh", "Atan"}

# Functions periodic along a part of their operand (sin and cos of it, inside): past
# 1 / eps, one ulp of that part spans whole periods, so even the sign of the result is
# noise, and where the result overflows, the sign of its infinity (docs/rewrite.md,
# Precision: float64 sine and cosine past 1e5 are onnxruntime's own).
PERIODIC = {"Sin", "Cos", "Tan", "Exp", "Sinh", "Cosh", "Tanh", "Sigmoid", "Pow"}


def _non_finite(value) -> bool:
    return value is not None and np.iscomplexobj(value) and not np.all(np.isfinite(value))


def _at_a_pole(node, known: dict, computed: set) -> bool:
    """The node's operands are finite, one of them computed by another node, and its
    reference value is not."""
    ins = [known.get(x) for x in node.input if x]
    return (
        any(x in computed for x in node.input)
        and all(v is not None and np.all(np.isfinite(v)) for v in ins)
        and any(_non_finite(known.get(y)) for y in node.output)
    )


# The functions above by which a few ulps of a computed operand reach a pole: where the
# reference's operand is that near one (-0.9999999999999999i for atan, as
# atan(atan(tan(-i))) meets in float64), the rewrite's may be on it.
AT_POLES = {"Log": np.log, "Tan": np.tan, "Tanh": np.tanh, "Atanh": np.arctanh,
            "Atan": np.arctan, "Reciprocal": np.reciprocal}  # fmt: skip
ULPS_TO_A_POLE = 4


def _nudged(x: np.ndarray):
    """x with one part moved by 1 to `ULPS_TO_A_POLE` ulps either way, the other kept."""
    for way in (-np.inf, np.inf):
        re, im = x.real, x.imag
        for _ in range(ULPS_TO_A_POLE):
            re, im = np.nextafter(re, way), np.nextafter(im, way)
            yield re + 1j * x.imag
            yield x.real + 1j * im


def _near_a_pole(node, known: dict, computed: set) -> bool:
    """A few ulps of the node's computed, finite operand reach a pole of its function,
    where the reference's value is finite (and the rewrite's may not be)."""
    function = AT_POLES.get(node.op_type)
    if function is None or node.input[0] not in computed:
        return False
    x, y = known.get(node.input[0]), known.get(node.output[0])
    if not (np.iscomplexobj(x) and np.iscomplexobj(y)):
        return False
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return False
    with np.errstate(all="ignore"):
        return any(not np.all(np.isfinite(function(moved))) for moved in _nudged(np.asarray(x)))


def _near_overflow(node, known: dict) -> bool:
    """A product whose terms may pass the largest finite value, summed as a rewrite may
    sum them: Gauss's three products multiply (ar + ai)(br + bi), which overflows before
    ar br - ai bi does. Bounded by each operand's largest |re| + |im| (a square's one
    operand counted twice, a DFT's weights as 1) times the larger operand's size."""
    if node.op_type not in BILINEAR | SQUARES | UNIT_WEIGHTED:
        return False
    xs = [np.asarray(known[x]) for x in node.input[:2] if x and known.get(x) is not None]
    xs = [x for x in xs if x.dtype.kind in "fc" and x.size and np.all(np.isfinite(x))]
    if not any(np.iscomplexobj(x) for x in xs):
        return False
    if node.op_type in UNIT_WEIGHTED:
        xs = xs[:1]  # the signal, not a DFT's length
    if len(xs) != (2 if node.op_type in BILINEAR else 1):
        return False  # an operand not finite (the causes above), or no product at all
    sums = [float(np.abs(x.real).max()) + float(np.abs(x.imag).max()) for x in xs]
    if node.op_type in SQUARES:
        sums *= 2
    elif node.op_type in UNIT_WEIGHTED:
        sums.append(1.0)
    with np.errstate(over="ignore"):
        bound = sums[0] * sums[1] * max(x.size for x in xs)
    return bound > float(np.finfo(np.result_type(*xs)).max)


def _past_one_period_an_ulp(value) -> bool:
    if value is None or not np.iscomplexobj(value):
        return False
    value = np.asarray(value)
    largest = 1 / np.finfo(value.real.dtype).eps
    return bool(np.any(np.abs(value.real) > largest) or np.any(np.abs(value.imag) > largest))


def _ops_in(node) -> set[str]:
    """The op types a node runs: its own, and those of its subgraphs."""
    ops = {node.op_type}
    for attr in node.attribute:
        for graph in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else []:
            for inner in graph.node:
                ops |= _ops_in(inner)
    return ops


def non_finite_causes(model: onnx.ModelProto, values: dict, feeds: dict) -> list[str]:
    """Why infinities and NaNs may differ from the reference's, not by a bug: a node
    given a complex operand with an infinite or NaN part, a product that overflowed, a
    product whose terms may pass the largest finite value, a periodic function of a part
    so large that one ulp of it spans whole periods, or a function at a pole of an operand
    computed (and so rounded) before it, or within a few ulps of one.

    The rules other than the elementwise functions (which give numpy's special values,
    C99's Annex G) are exact formulas for finite operands; with an infinite one, an
    inf - inf or 0 * inf inside a formula may give NaN where numpy gives a signed infinity. A
    product past overflow depends on the CPU. Both are documented choices (docs/rewrite.md,
    Precision); any other op's overflow must match.
    """
    known = {**values, **feeds}
    known.update((t.name, numpy_helper.to_array(t)) for t in model.graph.initializer)
    causes, computed = [], set()
    for node in model.graph.node:
        odd = [name for name in node.input if _non_finite(known.get(name))]
        if odd and node.op_type not in FUNCTIONS:  # these give numpy's special values
            causes.append(f"{node.op_type} of {odd}")
        elif _ops_in(node) & PRODUCTS and any(_non_finite(known.get(y)) for y in node.output):
            causes.append(f"{node.op_type} overflowed")
        elif node.op_type in PERIODIC and any(_past_one_period_an_ulp(known.get(x))
                                              for x in node.input):  # fmt: skip
            causes.append(f"{node.op_type} of a part past 1 / eps")
        elif node.op_type in POLES and _at_a_pole(node, known, computed):
            causes.append(f"{node.op_type} at a pole of a computed operand")
        elif _near_overflow(node, known):
            causes.append(f"{node.op_type} near overflow")
        elif _near_a_pole(node, known, computed):
            causes.append(f"{node.op_type} within {ULPS_TO_A_POLE} ulps of a pole")
        computed.update(node.output)
    return causes


def excused(model: onnx.ModelProto, result, feeds: dict, values) -> list[str]:
    """The documented causes that excuse `result`'s failure: where every output that
    failed differs in infinities and NaNs alone, those `non_finite_causes` names from the
    reference's values (`values`, or a callable that computes them only then); [] where
    it passed, or failed otherwise."""
    failed = [o for o in result.outputs if not o.passed]
    if not failed or any(np.isfinite(o.max_abs) for o in failed):
        return []
    return non_finite_causes(model, values() if callable(values) else values, feeds)
