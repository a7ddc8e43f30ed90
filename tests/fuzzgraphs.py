"""Random valid complex ONNX graphs, with inputs, for the differential fuzzer.

A graph grows from a pool of values. Each step picks an op the rule registry
supports, takes operands from the pool (or makes new inputs and constants that
fit), and adds its outputs to the pool. Every graph is one the reference evaluator
runs: operands of binary ops share a dtype, axes and indices are in range, and
values that feed exponentials stay small enough not to overflow.

Values on the real and imaginary axes, signed zeros, zero-size dims and magnitudes
of 1e20 and 1e-30 are all generated: no region is left out for a bug. So are values on
both sides of every branch cut, chains of functions where one lands on the next one's
cut, and reductions whose products and sums overflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from onnx_decomplex.dtypes import onnx_of

IR_VERSION = {18: 8, 21: 10}
UNARY = ["Neg", "Identity", "Exp", "Log", "Sqrt", "Sin", "Cos", "Tan", "Sinh", "Cosh", "Tanh",
         "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh", "Sigmoid", "Sign", "Reciprocal",
         "Round"]  # fmt: skip
# Functions that grow fast or have poles: the largest modulus each is given, so that
# nothing overflows; in a graph of extreme magnitudes, up to 100, where they do.
GROWING = {"Exp": 4, "Sinh": 4, "Cosh": 4, "Sigmoid": 4, "Tan": math.inf, "Tanh": math.inf}
GROWING_EXTREME = {**GROWING, "Exp": 100, "Sinh": 100, "Cosh": 100}
# The functions a chain of them (`s_chain`) draws from: each may put its result on the
# next one's cut (Sqrt of -4 ± 0i is ±2i, on Asinh's; Acos of a real is real, past 1 on
# Acos's own; Acosh of 0.5 is 1.05i, past i on Atan's).
CHAIN = ["Exp", "Log", "Sqrt", "Sin", "Cos", "Tan", "Sinh", "Cosh", "Tanh", "Asin", "Acos",
         "Atan", "Asinh", "Acosh", "Atanh", "Sigmoid"]  # fmt: skip
# Magnitudes on an axis at the ends of the cuts and past them: 0 (Log's and Sqrt's end),
# 0.5 (on Acosh's, below 1), 1 (the ends of Asin's, Acos's, Atanh's, and of Asinh's and
# Atan's on the imaginary axis), 1.5, 2 and 4 (past them).
CUT_MAGNITUDES = [0.0, 0.5, 1.0, 1.5, 2.0, 4.0]
# The reductions whose products or sums may overflow, ReduceProd above all (`s_overflow`).
OVERFLOWING = ["ReduceProd", "ReduceProd", "ReduceSum", "ReduceL1", "ReduceLogSumExp"]
# Ops whose complex results may lie on an axis whatever their inputs (a Softmax over
# one element is exactly 1, where the rewrite's rounding may leave -0 or 1e-8 i).
AXIS_MAKERS = {"Round", "ReduceL1", "Cast", "Sign", "ConstantOfShape", "EyeLike", "Pad",
               "Softmax", "LogSoftmax"}  # fmt: skip
# Ops that may make an exact zero from operands that hold none.
ZERO_MAKERS = {"Round", "EyeLike", "Sub", "Add", "Pad", "Trilu", "Cast", "Sum", "Mean", "CumSum",
               "ScatterND", "ScatterElements", "Sign", "Einsum", "MatMul", "Gemm", "Conv",
               "ConvTranspose", "DFT", "ReduceSum", "ReduceMean", "ReduceSumSquare",
               "ReduceL2", "ReduceLogSum", "Log", "LogSoftmax", "Acos", "Acosh", "If",
               "Loop", "Scan"}  # fmt: skip
# A zero made by a contraction or reduction has the sign the order of the sum gives
# (IEEE: +0 + -0 = +0; numpy's einsum of one term keeps a -0). On a branch cut that sign
# picks the side (docs/rewrite.md, Precision): these ops are not given such values on an axis.
SUMMING = {"MatMul", "Gemm", "Einsum", "Conv", "ConvTranspose", "DFT", "CumSum", "ReduceSum",
           "ReduceMean", "ReduceSumSquare", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
           "ReduceProd", "Softmax", "LogSoftmax", "Loop", "Scan"}  # fmt: skip
CUT = {"Log", "Sqrt", "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh", "Pow", "ReduceLogSum",
       "ReduceL2"}  # fmt: skip
REDUCE = ["ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2",
          "ReduceLogSum", "ReduceLogSumExp", "ReduceProd"]  # fmt: skip
STEPS = ["unary", "unary", "unary", "unary", "binary", "binary", "binary", "real_out", "cast", "pow", "variadic",
         "transpose", "reshape", "unsqueeze", "squeeze", "flatten", "concat", "split",
         "slice", "expand", "tile", "where", "pad", "gather", "gather_elements",
         "gather_nd", "scatter_nd", "scatter_elements", "compress", "cumsum",
         "reverse_sequence", "trilu", "depth_to_space", "reduce", "reduce", "softmax",
         "chain", "chain", "overflow",
         "matmul", "gemm", "einsum", "conv", "constant_of_shape", "eye_like", "dft", "if",
         "loop", "scan"]  # fmt: skip
# Every op the steps below emit, and the registry's ops they leave out, with why.
OPS = {*UNARY, *REDUCE, "Abs", "IsNaN", "IsInf", "Shape", "Size", "Add", "Sub", "Mul", "Div",
       "Equal", "Cast", "Pow", "Sum", "Mean", "Transpose", "Reshape", "Unsqueeze", "Squeeze",
       "Flatten", "Concat", "Split", "Slice", "Expand", "Tile", "Where", "Pad", "Gather",
       "GatherElements", "GatherND", "ScatterND", "ScatterElements", "Compress", "CumSum",
       "ReverseSequence", "Trilu", "DepthToSpace", "SpaceToDepth", "Softmax", "LogSoftmax",
       "MatMul", "Gemm", "Einsum", "Conv", "ConvTranspose", "Constant", "ConstantOfShape",
       "EyeLike", "DFT", "If", "Loop", "Scan"}  # fmt: skip
NOT_GENERATED = {
    "STFT": "a complex signal's frames and window are not generated; DFT covers the packing",
}


@dataclass
class Value:
    """A value in the pool: its name, shape and dtype, a bound on its modulus, how
    many nodes lie on its longest path, and its value when it is a plain constant."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    bound: float
    depth: int = 0
    value: np.ndarray | None = None
    const: bool = False
    axis: bool = False  # may hold values on the real or imaginary axis
    zeros: bool = True  # may hold an exact zero
    from_real: bool = False  # computed from a real value cast to complex
    summed: bool = False  # computed by a contraction or reduction (see SUMMING)

    @property
    def signed_zeros(self) -> bool:
        """Its zero parts have the sign numpy's would: not a summed value on an axis."""
        return not (self.axis and self.summed)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class Case:
    """A generated model, its inputs, and what the check needs to know about it."""

    model: onnx.ModelProto
    feeds: dict[str, np.ndarray]
    depth: int
    float32_math: bool
    options: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        ops = [n.op_type for n in self.model.graph.node]
        shapes = {k: v.shape for k, v in self.feeds.items()}
        opset = self.model.opset_import[0].version
        return f"Case(opset={opset}, ops={ops}, inputs={shapes}, options={self.options})"


def _real_of(dtype) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else np.float64)


def _other(dtype) -> np.dtype:
    return np.dtype(np.complex128 if np.dtype(dtype) == np.complex64 else np.complex64)


def _broadcast(a, b) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        return None


def _exp(b: float) -> float:
    return math.exp(min(b, 700.0))


def _pow(b: float, n: int) -> float:
    """max(1, b)^n, inf past float's range (1000^108 raises in Python's float power)."""
    b = max(1.0, b)
    return math.inf if n * math.log10(b) > 300 else b**n


def _i64(values) -> np.ndarray:
    return np.asarray(values, np.int64)


def _join(re, im) -> np.ndarray:
    """re + i im, part for part: `re + 1j * im` would turn an imaginary -0 into +0."""
    z = np.empty(np.shape(re), np.complex128)
    z.real, z.imag = re, im
    return z


class Builder:
    """Grows one graph. `draw` is hypothesis's; `rng` makes tensor values."""

    def __init__(self, draw, opset: int, cdtype):
        self.draw, self.opset = draw, opset
        self.cdtype = np.dtype(cdtype)
        self.rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        self.zero_dims = draw(st.booleans()) and draw(st.booleans())
        # Values on the axes (pure real or imaginary), zeros and small integers.
        self.specials = draw(st.integers(0, 2)) == 2
        # Magnitudes of 1e20 and 1e-30, whose squares overflow and underflow.
        self.extreme = draw(st.integers(0, 5)) == 5  # shrinks to off
        self.scale = draw(st.sampled_from([0.5, 1.0, 2.0]))
        self.pool: list[Value] = []
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.feeds: dict[str, np.ndarray] = {}
        self.float32_math = self.cdtype == np.complex64
        self.n = 0

    # ---- plumbing ------------------------------------------------------------------

    def name(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    def pick(self, pred=lambda v: True) -> Value | None:
        choices = [v for v in self.pool if pred(v)]
        return self.draw(st.sampled_from(choices)) if choices else None

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def int_(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def one(self, options):
        return self.draw(st.sampled_from(list(options)))

    def emit(self, op, ins, outs, **attrs) -> None:
        self.nodes.append(helper.make_node(op, ins, outs, **attrs))

    def add(self, op, ins: list, shape, dtype, bound, srcs=(), **attrs) -> Value:
        """One node with one output, added to the pool."""
        out = self.name(op.lower())
        names = [i.name if isinstance(i, Value) else i for i in ins]
        self.emit(op, names, [out], **attrs)
        srcs = [i for i in ins if isinstance(i, Value)] + list(srcs)
        return self.derived(out, op, shape, dtype, bound, srcs)

    def derived(self, name, op, shape, dtype, bound, srcs, steps: int = 1) -> Value:
        """A value computed by `op` from `srcs` through `steps` nodes, added to the pool:
        what may hold a zero or a value on an axis is inherited."""
        depth = steps + max((s.depth for s in srcs), default=0)
        v = Value(name, tuple(int(d) for d in shape), np.dtype(dtype), float(bound), depth)
        v.const = bool(srcs) and all(s.const for s in srcs)
        v.axis = any(s.axis for s in srcs) or op in AXIS_MAKERS or self.specials
        v.zeros = any(s.zeros for s in srcs) or op in ZERO_MAKERS
        v.from_real = any(s.from_real for s in srcs) or (
            op == "Cast" and bool(srcs) and not srcs[0].is_complex
        )
        v.summed = any(s.summed for s in srcs) or op in SUMMING
        self.pool.append(v)
        return v

    def index_const(self, values, dtype=np.int64) -> str:
        """An integer (or bool) initializer, never complex."""
        name = self.name("k")
        self.inits.append(numpy_helper.from_array(np.asarray(values, dtype), name))
        return name

    # ---- values --------------------------------------------------------------------

    def numbers(self, shape, dtype, zeros: bool = True) -> np.ndarray:
        """Moderate values, with specials (small integers, and `cut_values` on both sides
        of the cuts) when the graph asks; with no exact zero unless `zeros`."""
        dtype = np.dtype(dtype)
        shape = tuple(shape)
        re = self.rng.standard_normal(shape) * self.scale
        im = self.rng.standard_normal(shape) * self.scale if dtype.kind == "c" else 0
        value = np.asarray(re + 1j * im) if dtype.kind == "c" else np.asarray(re)
        if self.specials and value.size:
            pick = self.rng.random(shape) < 0.3
            table = np.array([0, 1, -1, 2, 0.5, 1j, -1j, 2j, 1 + 1j, -0.0, 3, -2j])
            if dtype.kind != "c":
                table = table.real
            value = np.where(pick, self.rng.choice(table, size=shape), value)
            axis = self.rng.random(shape) < 0.2
            if dtype.kind == "c":
                value = np.where(axis, self.cut_values(shape), value)
        if self.extreme and value.size:
            pick = self.rng.random(shape) < 0.2
            value = np.where(pick, value * self.rng.choice([1e20, 1e-30], size=shape), value)
        if not zeros:
            value = np.where(value == 0, 1, value)
        return value.astype(dtype)

    def cut_values(self, shape) -> np.ndarray:
        """Values on both sides of every branch cut and at its ends (complex128): on the
        real or the imaginary axis, of a magnitude from CUT_MAGNITUDES or a random one, of
        either sign, with +0 or -0 as the other part (-4 - 0i lies below Log's cut, -0 - 3i
        left of Asinh's, -0 + 0i is a zero of one of four signs). One in five is off the
        axes, so that one tensor holds both and a rule's choice is made per element."""
        shape = tuple(shape)
        size = self.rng.choice(CUT_MAGNITUDES, size=shape)
        anywhere = np.abs(self.rng.standard_normal(shape)) * 2 * self.scale
        size = np.where(self.rng.random(shape) < 0.3, anywhere, size)
        on = size * self.rng.choice([1.0, -1.0], size=shape)
        zero = self.rng.choice([0.0, -0.0], size=shape)
        imag = self.rng.random(shape) < 0.5
        value = _join(np.where(imag, zero, on), np.where(imag, on, zero))
        off = _join(*self.rng.standard_normal((2, *shape))) * self.scale
        return np.where(self.rng.random(shape) < 0.2, off, value)

    def overflowing(self, shape, dtype, phases: bool = True) -> np.ndarray:
        """Values whose products and sums overflow (complex128): each part, one in two,
        of either sign, the dtype's largest finite float or half of it, 1e20 (whose square
        overflows float32), 0 or infinite; ordinary otherwise. Without `phases` the
        imaginary parts are all ordinary: a ReduceLogSumExp's exp(i y) of y = 1e20 is
        rounding noise, which the rewrite's Cos and Sin are not expected to follow."""
        big = float(np.finfo(_real_of(dtype)).max)
        both = (2, *tuple(shape))
        edge = self.rng.choice([big, big / 2, 1e20, 0.0, math.inf], size=both)
        edge = edge * self.rng.choice([1.0, -1.0], size=both)
        ordinary = self.rng.standard_normal(both) * self.scale
        re, im = np.where(self.rng.random(both) < 0.5, edge, ordinary)
        return _join(re, im if phases else ordinary[1])

    def new_value(self, shape, dtype, kind: str | None = None, zeros: bool = True,
                  pool=None, dynamic: bool = False) -> Value:  # fmt: skip
        """A new graph input, initializer or Constant node of `shape`. Its values are
        `numbers`, or `pool(shape)`'s, which may lie on the axes; an input's dims of 2 may
        be symbolic, and with `dynamic` any of its dims."""
        dtype = np.dtype(dtype)
        shape = tuple(int(d) for d in shape)
        kind = kind or self.one(["input", "input", "init", "constant"])
        value = self.numbers(shape, dtype, zeros) if pool is None else pool(shape).astype(dtype)
        with np.errstate(over="ignore"):
            bound = float(np.max(np.abs(value), initial=0.0)) + 1e-3
        if self.extreme:
            bound = math.inf
        if kind == "input":
            name = self.name("x")
            dims = [f"n{d}" if (d == 2 or dynamic) and self.flag() else d for d in shape]
            self.inputs.append(helper.make_tensor_value_info(name, onnx_of(dtype), dims))
            self.feeds[name] = value
            v = Value(name, shape, dtype, bound, axis=self.specials)
        elif kind == "init":
            name = self.name("w")
            self.inits.append(numpy_helper.from_array(value, name))
            v = Value(name, shape, dtype, bound, value=value, const=True, axis=self.specials)
        else:
            name = self.name("c")
            self.emit("Constant", [], [name], value=numpy_helper.from_array(value, name))
            v = Value(name, shape, dtype, bound, value=value, const=True, axis=self.specials)
        v.zeros = bool(np.any(value == 0)) or self.specials
        v.axis = v.axis or pool is not None
        self.pool.append(v)
        return v

    def shape(self, rank: int | None = None, lo: int = 0, hi: int = 4) -> tuple[int, ...]:
        rank = self.int_(lo, hi) if rank is None else rank
        dims = [0, 1, 2, 3, 2, 3] if self.zero_dims else [1, 2, 3, 2, 3]
        return tuple(self.one(dims) for _ in range(rank))

    def complex_value(self, pred=lambda v: True, dtype=None) -> Value:
        """A complex value of the pool that fits, or a new one."""
        dtype = np.dtype(dtype or self.cdtype)
        found = self.pick(lambda v: v.dtype == dtype and pred(v))
        if found is not None and self.int_(0, 4):
            return found
        for _ in range(8):
            shape = self.shape()
            probe = Value("", shape, dtype, 4 * self.scale)
            if pred(probe):
                return self.new_value(shape, dtype)
        return found if found is not None else self.new_value((2, 3), dtype)

    def operand(self, shape, dtype, pred=lambda v: True) -> Value:
        """A value that broadcasts with `shape`: from the pool, or a new one."""
        dtype = np.dtype(dtype)
        fits = self.pick(
            lambda v: v.dtype == dtype and _broadcast(v.shape, shape) is not None and pred(v)
        )
        if fits is not None and self.int_(0, 2):
            return fits
        cut = self.int_(0, len(shape))
        new = [1 if self.int_(0, 3) == 0 else d for d in shape[cut:]]
        return self.new_value(new, dtype)

    # ---- steps ---------------------------------------------------------------------

    def step(self, kind: str) -> None:
        getattr(self, f"s_{kind}")()

    def limit(self, op: str) -> float:
        """The largest modulus `op` is given (GROWING)."""
        return (GROWING_EXTREME if self.extreme else GROWING).get(op, math.inf)

    def unary(self, op: str, x: Value) -> Value:
        """`op` of `x`, with a bound on its result."""
        bound = {"Exp": _exp(x.bound), "Sinh": _exp(x.bound), "Cosh": _exp(x.bound),
                 "Reciprocal": 1e3, "Tan": 1e3, "Sigmoid": 1e3, "Log": 10 + x.bound,
                 "Sqrt": math.sqrt(x.bound) + 1, "Sign": 1.0, "Tanh": 1e3}.get(op, x.bound + 4)  # fmt: skip
        return self.add(op, [x], x.shape, x.dtype, bound)

    def s_unary(self):
        op = self.one(UNARY)
        if op in GROWING:
            limit = self.limit(op)
            x = self.complex_value(lambda v: v.bound <= limit)
            if x.bound > limit:
                return
        elif op in ("Sign", "Round"):
            # Steps at 0 and at halves: a rounding error in a computed value (a LogSoftmax
            # of one element, 1e-8 instead of 0) would become a whole step. Exact values only.
            x = self.complex_value(lambda v: v.depth == 0)
            if x.depth:
                return
        elif op in CUT:
            x = self.complex_value(lambda v: v.signed_zeros)
            if not x.signed_zeros:
                return
        else:
            x = self.complex_value()
        self.unary(op, x)

    def s_chain(self):
        """Two to four functions of CHAIN, one after another, most often from values on
        both sides of the cuts (`cut_values`): one function's result lands on the next
        one's cut, on the side the sign of a zero part it computed picks, which the
        rewrite must compute as numpy does. Each is given only what GROWING allows it."""
        if self.flag():
            kind = self.one(["input", "input", "constant"])
            x = self.new_value(self.shape(), self.cdtype, kind, pool=self.cut_values)
        else:
            x = self.complex_value(lambda v: v.signed_zeros)
            if not x.signed_zeros:
                return  # a zero part's sign made by a sum (see SUMMING) is no side to follow
        for _ in range(self.int_(2, 4)):
            x = self.unary(self.one([op for op in CHAIN if x.bound <= self.limit(op)]), x)

    def s_real_out(self):
        x = self.complex_value()
        op = self.one(["Abs", "IsNaN", "IsInf", "Shape", "Size"])
        if op == "Abs":
            self.add(op, [x], x.shape, _real_of(x.dtype), x.bound)
        elif op in ("IsNaN", "IsInf"):
            self.add(op, [x], x.shape, np.bool_, 1)
        elif op == "Shape":
            attrs = {"start": self.int_(-x.rank, x.rank)} if self.flag() else {}
            if self.flag():
                attrs["end"] = self.int_(-x.rank, x.rank)
            n = len(range(x.rank)[attrs.get("start", 0) : attrs.get("end")])
            self.add(op, [x], (n,), np.int64, 100, **attrs)
        else:
            self.add(op, [x], (), np.int64, 100)

    def s_binary(self):
        op = self.one(["Add", "Sub", "Mul", "Div", "Equal"])
        a = self.complex_value()
        b = self.operand(a.shape, a.dtype)
        pair = [a, b] if op == "Div" or self.flag() else [b, a]  # b divides
        shape = _broadcast(a.shape, b.shape)
        if op == "Equal":
            self.add(op, pair, shape, np.bool_, 1)
            return
        bound = {"Mul": a.bound * b.bound, "Div": 1e3 * max(1, a.bound)}.get(op, a.bound + b.bound)
        self.add(op, pair, shape, a.dtype, bound)

    def s_cast(self):
        kind = self.one(["to_other", "to_real", "to_bool", "real_in", "real_in"])
        if kind == "real_in":
            real = self.one([_real_of(self.cdtype), np.dtype(np.int64), np.dtype(np.bool_)])
            found = self.pick(lambda v: v.dtype == real)
            x = found or self.new_value(self.shape(), real, self.one(["input", "init"]))
            self.add("Cast", [x], x.shape, self.cdtype, x.bound, to=onnx_of(self.cdtype))
            return
        x = self.complex_value()
        if kind == "to_other":
            to = _other(x.dtype)
            if to == np.complex64:
                self.float32_math = True
            self.add("Cast", [x], x.shape, to, x.bound, to=onnx_of(to))
        elif kind == "to_real":
            to = self.one([_real_of(x.dtype), np.float32, np.float64, np.int64])
            to = np.dtype(to)
            if to == np.float32:
                self.float32_math = True
            self.add("Cast", [x], x.shape, to, x.bound, to=onnx_of(to))
        else:
            self.add("Cast", [x], x.shape, np.bool_, 1, to=TensorProto.BOOL)

    def s_pow(self):
        kind = self.one(["int", "real", "real_tensor", "complex"])
        x = self.complex_value(lambda v: v.bound <= 3 and v.signed_zeros)
        if x.bound > 3 or not x.signed_zeros:
            return
        if kind == "int":
            p = self.index_const(self.one([0, 1, 2, 3, -1, -2]), _real_of(x.dtype))
            bound = _pow(x.bound, 3) * 1e3
        elif kind == "real":
            p = self.index_const(self.one([0.5, 1.5, -0.5, 2.5]), _real_of(x.dtype))
            bound = _pow(x.bound, 3) * 1e3
        elif kind == "real_tensor":
            e = self.new_value(x.shape[self.int_(0, x.rank) :], _real_of(x.dtype))
            if e.bound > 3:
                return
            p, bound = e, 1e6
        else:
            e = self.operand(x.shape, x.dtype, lambda v: v.bound <= 1.5)
            if e.bound > 1.5:
                return
            p, bound = e, 1e6
        shape = x.shape if isinstance(p, str) else _broadcast(x.shape, p.shape)
        if shape != x.shape:
            return  # Pow's output has its base's shape in the reference.
        self.add("Pow", [x, p], shape, x.dtype, bound)

    def s_variadic(self):
        op = self.one(["Sum", "Mean", "Sum"])
        a = self.complex_value()
        ins, shape = [a], a.shape
        for _ in range(self.int_(0, 2)):
            ins.append(self.operand(shape, a.dtype))
            shape = _broadcast(shape, ins[-1].shape)
        if op == "Sum" and self.int_(0, 3) == 0:
            ins.append(self.new_value(a.shape, _real_of(a.dtype)))  # the first operand's type wins
        self.add(op, ins, shape, a.dtype, sum(v.bound for v in ins))

    def s_transpose(self):
        x = self.complex_value()
        perm = list(self.draw(st.permutations(range(x.rank))))
        attrs = {"perm": perm} if x.rank and (self.flag() or x.rank < 2) else {}
        perm = perm if attrs else list(reversed(range(x.rank)))
        self.add("Transpose", [x], [x.shape[p] for p in perm], x.dtype, x.bound, **attrs)

    def s_reshape(self):
        x = self.complex_value()
        kind = self.one(["reverse", "flat", "minus1", "zero"])
        if kind == "reverse":
            target = list(reversed(x.shape)) + [1]
            # A 0 in the target copies the input's dim in its place (allowzero is 0).
            new = [x.shape[i] if d == 0 and i < x.rank else d for i, d in enumerate(target)]
            if int(np.prod(new)) != x.size:
                return
        elif kind == "flat":
            target = new = [x.size]
        elif kind == "minus1" and x.size > 0:
            target = [-1, *x.shape[-1:]] if x.rank else [-1]
            new = [x.size // max(1, x.shape[-1]), *x.shape[-1:]] if x.rank else [1]
        elif kind == "zero" and x.rank >= 1:
            tail = int(np.prod(x.shape[1:]))
            target = [0, *([-1] if x.size > 0 else [tail])]
            # A second 0 (an empty tail) copies dim 1 too: Reshape's 0 is "as it was".
            new = [x.shape[0], tail if x.size > 0 or tail else x.shape[1]]
        else:
            return
        self.add("Reshape", [x, self.index_const(target)], new, x.dtype, x.bound)

    def s_unsqueeze(self):
        x = self.complex_value(lambda v: v.rank < 4)
        axis = self.int_(-(x.rank + 1), x.rank)
        shape = list(x.shape)
        shape.insert(axis if axis >= 0 else axis + x.rank + 1, 1)
        self.add("Unsqueeze", [x, self.index_const([axis])], shape, x.dtype, x.bound)

    def s_squeeze(self):
        x = self.complex_value(lambda v: 1 in v.shape)
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        if not ones:
            return
        if self.int_(0, 3) == 0:
            shape = [d for d in x.shape if d != 1]
            self.add("Squeeze", [x], shape, x.dtype, x.bound)
            return
        axis = self.one(ones)
        shape = [d for i, d in enumerate(x.shape) if i != axis]
        ax = axis - x.rank if self.flag() else axis
        self.add("Squeeze", [x, self.index_const([ax])], shape, x.dtype, x.bound)

    def s_flatten(self):
        # The reference flattens with reshape(-1), which a zero-size value cannot take.
        x = self.complex_value(lambda v: v.rank >= 1 and v.size > 0)
        if not x.rank or not x.size:
            return
        axis = self.int_(-x.rank, x.rank)
        a = axis % x.rank if x.rank and axis < 0 else axis
        shape = [int(np.prod(x.shape[:a])), int(np.prod(x.shape[a:]))]
        self.add("Flatten", [x], shape, x.dtype, x.bound, axis=axis)

    def s_concat(self):
        x = self.complex_value(lambda v: v.rank >= 1)
        if not x.rank:
            return
        axis = self.int_(-x.rank, x.rank - 1)
        ins = [x]
        for _ in range(self.int_(1, 2)):
            shape = list(x.shape)
            shape[axis] = self.one([0, 1, 2]) if self.zero_dims else self.one([1, 2])
            same = self.pick(
                lambda v, s=tuple(shape): v.dtype == x.dtype and v.rank == x.rank and all(
                    a == b for i, (a, b) in enumerate(zip(v.shape, s, strict=True)) if i != axis % x.rank)
            )  # fmt: skip
            ins.append(same if same is not None and self.flag() else self.new_value(shape, x.dtype))
        shape = list(x.shape)
        shape[axis] = sum(v.shape[axis] for v in ins)
        self.add("Concat", ins, shape, x.dtype, max(v.bound for v in ins), axis=axis)

    def s_split(self):
        x = self.complex_value(lambda v: v.rank >= 1 and v.shape[0] >= 1)
        if not x.rank:
            return
        axis = self.int_(-x.rank, x.rank - 1)
        n = x.shape[axis]
        if n < 1:
            return
        if self.flag() and n >= 2:
            sizes = [1, n - 1]
            ins = [x.name, self.index_const(sizes)]
            attrs = {}
        else:
            # The reference's chunks: n / k each, or n // k + 1 and a smaller last one.
            k = self.one([d for d in (1, 2, 3) if d <= n])
            c = n // k if n % k == 0 else n // k + 1
            sizes = [c] * (k - 1) + [n - c * (k - 1)]
            if sizes[-1] < 1:
                return
            ins, attrs = [x.name], {"num_outputs": k}
        outs = [self.name("split") for _ in sizes]
        self.emit("Split", ins, outs, axis=axis, **attrs)
        for name, s in zip(outs, sizes, strict=True):
            shape = list(x.shape)
            shape[axis] = s
            self.derived(name, "Split", shape, x.dtype, x.bound, [x])

    def s_slice(self):
        x = self.complex_value(lambda v: v.rank >= 1)
        if not x.rank:
            return
        axes = sorted(set(self.draw(st.lists(st.integers(0, x.rank - 1), min_size=1, max_size=2))))
        starts, ends, steps, shape = [], [], [], list(x.shape)
        for a in axes:
            n = x.shape[a]
            step = self.one([1, 1, 2, -1])
            # The reference clamps a start below -n to -1 for a negative step, where
            # ONNX (and onnxruntime) clamp it to 0: such starts are left out.
            s = self.int_(-n if step < 0 else -4, 4)
            e = self.one([self.int_(-4, 4), 99, -99])
            starts.append(s)
            ends.append(e)
            steps.append(step)
            shape[a] = len(range(n)[slice(s, e, step)])
        ins = [x.name, self.index_const(starts), self.index_const(ends)]
        neg = self.flag()
        ins.append(self.index_const([a - x.rank if neg else a for a in axes]))
        ins.append(self.index_const(steps))
        self.add("Slice", ins, shape, x.dtype, x.bound, srcs=[x])

    def s_expand(self):
        x = self.complex_value(lambda v: v.rank <= 3)
        extra = self.shape(self.int_(0, 1), 1, 2)
        target = list(extra) + [
            self.one([d, d]) if d != 1 else self.one([1, 2, 3]) for d in x.shape
        ]
        out = _broadcast(x.shape, target)
        self.add("Expand", [x, self.index_const(target)], out, x.dtype, x.bound)

    def s_tile(self):
        x = self.complex_value(lambda v: v.rank >= 1)
        if not x.rank:
            return
        reps = [self.one([1, 1, 2, 3]) for _ in x.shape]
        shape = [d * r for d, r in zip(x.shape, reps, strict=True)]
        self.add("Tile", [x, self.index_const(reps)], shape, x.dtype, x.bound)

    def s_where(self):
        a = self.complex_value()
        b = self.operand(a.shape, a.dtype)
        shape = _broadcast(a.shape, b.shape)
        cut = self.int_(0, len(shape))
        cshape = shape[cut:]
        found = self.pick(lambda v: v.dtype == np.bool_ and _broadcast(v.shape, shape) == shape)
        if found is not None and self.flag():
            cond = found.name
        else:
            cond = self.index_const(self.rng.random(cshape) < 0.5, np.bool_)
        self.add("Where", [cond, a, b], shape, a.dtype, max(a.bound, b.bound), srcs=[a, b])

    def s_pad(self):
        x = self.complex_value(lambda v: v.rank >= 1)
        if not x.rank:
            return
        mode = self.one(["constant", "constant", "edge", "reflect"])
        pads = [self.int_(0, 2) for _ in range(2 * x.rank)]
        if mode == "reflect":
            pads = [min(p, max(0, d - 1)) for p, d in zip(pads, list(x.shape) * 2, strict=True)]
        if mode != "constant" and 0 in x.shape:
            return
        ins = [x.name, self.index_const(pads)]
        if mode == "constant" and self.flag():
            v = self.numbers((), x.dtype)
            name = self.name("padv")
            self.inits.append(numpy_helper.from_array(v, name))
            ins.append(name)
        shape = [d + pads[i] + pads[i + x.rank] for i, d in enumerate(x.shape)]
        self.add("Pad", ins, shape, x.dtype, x.bound + 3, srcs=[x], mode=mode)

    def s_gather(self):
        x = self.complex_value(lambda v: v.rank >= 1 and min(v.shape) > 0)
        if not x.rank or 0 in x.shape:
            return
        axis = self.int_(-x.rank, x.rank - 1)
        n = x.shape[axis]
        ishape = self.shape(self.int_(0, 2), 1, 3)
        idx = self.rng.integers(-n, n, size=ishape)
        shape = list(x.shape[: axis % x.rank]) + list(ishape) + list(x.shape[axis % x.rank + 1 :])
        self.add("Gather", [x, self.index_const(idx)], shape, x.dtype, x.bound, srcs=[x], axis=axis)

    def s_gather_elements(self):
        x = self.complex_value(lambda v: v.rank >= 1 and min(v.shape) > 0)
        if not x.rank or 0 in x.shape:
            return
        axis = self.int_(0, x.rank - 1)  # the reference compares the wrong dims for axis < 0
        shape = list(x.shape)  # the reference wants the other dims equal
        shape[axis] = self.int_(1, 3)
        n = x.shape[axis]
        idx = self.index_const(self.rng.integers(-n, n, size=shape))
        self.add("GatherElements", [x, idx], shape, x.dtype, x.bound, srcs=[x], axis=axis)

    def s_gather_nd(self):
        x = self.complex_value(lambda v: v.rank >= 1 and min(v.shape) > 0)
        if not x.rank or 0 in x.shape:
            return
        k = self.int_(1, x.rank)
        lead = self.shape(self.int_(0, 2), 1, 3)
        idx = np.stack([self.rng.integers(0, d, size=lead) for d in x.shape[:k]], -1)
        shape = list(lead) + list(x.shape[k:])
        self.add("GatherND", [x, self.index_const(idx)], shape, x.dtype, x.bound, srcs=[x])

    def s_scatter_nd(self):
        x = self.complex_value(lambda v: v.rank >= 1 and min(v.shape) > 0)
        if not x.rank or 0 in x.shape:
            return
        k = self.int_(1, x.rank)
        cells = list(np.ndindex(*x.shape[:k]))
        m = self.int_(1, min(3, len(cells)))
        chosen = self.rng.choice(len(cells), size=m, replace=False)
        idx = np.array([cells[i] for i in chosen], np.int64).reshape(m, k)
        u = self.new_value([m, *x.shape[k:]], x.dtype)
        attrs = {"reduction": "add"} if self.flag() else {}
        ins = [x, self.index_const(idx), u]
        self.add("ScatterND", ins, x.shape, x.dtype, x.bound + u.bound, **attrs)

    def s_scatter_elements(self):
        x = self.complex_value(lambda v: v.rank >= 1 and min(v.shape) > 0)
        if not x.rank or 0 in x.shape:
            return
        axis = self.int_(-x.rank, x.rank - 1)
        ushape = list(x.shape)
        ushape[axis] = 1
        n = x.shape[axis]
        idx = self.index_const(self.rng.integers(-n, n, size=ushape))
        u = self.new_value(ushape, x.dtype)
        attrs = {"reduction": "add"} if self.flag() else {}
        ins = [x, idx, u]
        self.add("ScatterElements", ins, x.shape, x.dtype, x.bound + u.bound, axis=axis, **attrs)

    def s_compress(self):
        x = self.complex_value(lambda v: v.rank >= 1)
        if not x.rank:
            return
        if self.flag():
            axis = self.int_(-x.rank, x.rank - 1)
            n = x.shape[axis]
            cond = self.rng.random(self.int_(0, n)) < 0.6
            shape = list(x.shape)
            shape[axis] = int(cond.sum())
            attrs = {"axis": axis}
        else:
            cond = self.rng.random(self.int_(0, x.size)) < 0.6
            shape, attrs = [int(cond.sum())], {}
        c = self.index_const(cond, np.bool_)
        self.add("Compress", [x, c], shape, x.dtype, x.bound, srcs=[x], **attrs)

    def s_cumsum(self):
        x = self.complex_value(lambda v: v.rank >= 1)
        if not x.rank:
            return
        axis = self.index_const(self.int_(-x.rank, x.rank - 1))
        attrs = {k: 1 for k in ("exclusive", "reverse") if self.flag()}
        bound = x.bound * max(1, max(x.shape))
        self.add("CumSum", [x, axis], x.shape, x.dtype, bound, srcs=[x], **attrs)

    def s_reverse_sequence(self):
        x = self.complex_value(lambda v: v.rank >= 2)
        if x.rank < 2:
            return
        batch = self.int_(0, 1)
        time = 1 - batch
        if x.shape[time] < 1:
            return
        lens = self.rng.integers(1, x.shape[time] + 1, size=x.shape[batch])
        ins = [x, self.index_const(lens)]
        self.add(
            "ReverseSequence", ins, x.shape, x.dtype, x.bound, batch_axis=batch, time_axis=time
        )

    def s_trilu(self):
        x = self.complex_value(lambda v: v.rank >= 2)
        if x.rank < 2:
            return
        ins = [x.name] + ([self.index_const(self.int_(-2, 2))] if self.flag() else [])
        self.add("Trilu", ins, x.shape, x.dtype, x.bound, srcs=[x], upper=self.int_(0, 1))

    def s_depth_to_space(self):
        b = 2
        if self.flag():
            x = self.complex_value(lambda v: v.rank == 4 and v.shape[1] % 4 == 0)
            if x.rank != 4 or x.shape[1] % 4:
                x = self.new_value([1, 4, self.int_(1, 2), self.int_(1, 2)], self.cdtype)
            n, c, h, w = x.shape
            mode = self.one(["DCR", "CRD"])
            self.add("DepthToSpace", [x], [n, c // 4, h * b, w * b], x.dtype, x.bound, blocksize=b, mode=mode)  # fmt: skip
        else:
            x = self.complex_value(lambda v: v.rank == 4 and v.shape[2] % 2 == 0 and v.shape[3] % 2 == 0)  # fmt: skip
            if x.rank != 4 or x.shape[2] % 2 or x.shape[3] % 2:
                x = self.new_value([1, self.int_(1, 2), 2, self.one([2, 4])], self.cdtype)
            n, c, h, w = x.shape
            self.add("SpaceToDepth", [x], [n, c * 4, h // b, w // b], x.dtype, x.bound, blocksize=b)  # fmt: skip

    def s_reduce(self):
        op = self.one(REDUCE)
        # The reference cannot run ReduceLogSumExp of rank 0 at all.
        lowest = 1 if op == "ReduceLogSumExp" else 0

        def pred(v):
            return v.rank >= lowest

        if op in ("ReduceProd", "ReduceLogSumExp"):
            x = self.complex_value(lambda v: pred(v) and v.bound <= 3 and v.size <= 12)
        else:
            x = self.complex_value(pred)
        if not pred(x) or (op in CUT and x.axis):
            return  # the reduction's own sum makes the sign of a zero part (see SUMMING)
        self.reduce(op, x)

    def reduce(self, op: str, x: Value) -> Value | None:
        """`op` of `x` over some of its axes, all or none, keepdims or not; None where
        it would be a log of an empty sum."""
        keep = self.int_(0, 1)
        how = self.one(["axes", "axes", "none", "empty"])
        attrs = {"keepdims": keep}
        ins = [x.name]
        if how == "axes" and x.rank:
            axes = sorted({self.int_(0, x.rank - 1) for _ in range(self.int_(1, x.rank))})
            spelled = [a - x.rank if self.flag() else a for a in axes]
            ins.append(self.index_const(spelled))
        else:
            axes = list(range(x.rank))
            if how == "empty" and self.flag():
                ins.append(self.index_const(np.zeros(0, np.int64)))
            if how == "empty" and self.flag():
                attrs["noop_with_empty_axes"] = 1
                axes = []
        shape = [1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes]
        n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        empty = n == 0 and axes
        if op in ("ReduceLogSum", "ReduceLogSumExp") and empty:
            return None  # log(0): -inf against a formula's NaN is no question worth asking here
        bound = {"ReduceProd": _pow(x.bound, max(1, n)), "ReduceLogSumExp": 10 + x.bound,
                 "ReduceLogSum": 10 + x.bound, "ReduceSumSquare": _pow(x.bound, 2) * max(1, n),
                 "ReduceL2": x.bound * max(1, n)}.get(op, x.bound * max(1, n))  # fmt: skip
        return self.add(op, ins, shape, x.dtype, bound, srcs=[x], **attrs)

    def s_overflow(self):
        """A reduction of OVERFLOWING over a new value of `overflowing` ones, on static
        or symbolic dims, then an op that reads its result: where a product or a sum
        passes the largest finite float, or meets a 0 or an infinity, the rewrite must
        give the reference's infinities, NaNs, zeros and finite values, not lose them
        (a ReduceLogSumExp of 1e38 is finite, as the reference shifts by the maximum)."""
        op = self.one(OVERFLOWING)
        pool = partial(self.overflowing, dtype=self.cdtype, phases=op != "ReduceLogSumExp")
        kind = self.one(["input", "input", "init", "constant"])
        x = self.new_value(self.shape(self.int_(1, 3)), self.cdtype, kind, pool=pool, dynamic=True)
        r = self.reduce(op, x)
        if r is not None:
            self.read(r)

    def read(self, r: Value) -> None:
        """An op that reads the infinities and zeros of `r`: its modulus, a Cast to the
        other complex type (to complex64, 1e40 is infinite) or of its modulus back to
        complex, or a constant minus it (inf - inf is NaN)."""
        how = self.one(["Abs", "Cast", "AbsCast", "Sub"])
        if how == "Sub":
            c = self.new_value(r.shape[self.int_(0, r.rank) :], r.dtype, "constant")
            self.add("Sub", [c, r], r.shape, r.dtype, c.bound + r.bound)
        elif how == "Cast":
            to = _other(r.dtype)
            if to == np.complex64:
                self.float32_math = True
            self.add("Cast", [r], r.shape, to, r.bound, to=onnx_of(to))
        else:
            m = self.add("Abs", [r], r.shape, _real_of(r.dtype), r.bound)
            if how == "AbsCast":
                self.add("Cast", [m], m.shape, r.dtype, m.bound, to=onnx_of(r.dtype))

    def s_softmax(self):
        x = self.complex_value(lambda v: v.rank >= 1 and v.bound <= 4)
        if not x.rank or x.bound > 4:
            return
        op = self.one(["Softmax", "LogSoftmax"])
        axis = self.int_(-x.rank, x.rank - 1)
        self.add(op, [x], x.shape, x.dtype, 1e3, axis=axis)

    def s_matmul(self):
        a = self.complex_value(lambda v: 1 <= v.rank <= 3)
        if not 1 <= a.rank <= 3:
            return
        k = a.shape[-1]
        n = self.one([1, 2, 3])
        bshape = [k] if self.int_(0, 3) == 0 else [k, n]
        if len(bshape) == 2 and a.rank >= 2 and self.flag():
            bshape = [self.one([1, a.shape[0]])] * (a.rank - 2) + bshape
        kind = self.one(["input", "init", "constant"])
        b = self.new_value(bshape, a.dtype, kind)
        pair = [a, b]
        if a.rank >= 2 and self.int_(0, 3) == 0:
            c = self.new_value([self.one([1, 2]), a.shape[-2]], a.dtype)
            pair = [c, a]
        x, y = pair
        xs = x.shape if x.rank > 1 else (1, *x.shape)
        ys = y.shape if y.rank > 1 else (*y.shape, 1)
        batch = _broadcast(xs[:-2], ys[:-2])
        if batch is None or xs[-1] != ys[-2]:
            return
        shape = [*batch, *([xs[-2]] if x.rank > 1 else []), *([ys[-1]] if y.rank > 1 else [])]
        self.add("MatMul", pair, shape, a.dtype, x.bound * y.bound * max(1, k))

    def s_gemm(self):
        m, k, n = (self.one([1, 2, 3]) for _ in range(3))
        ta, tb = self.int_(0, 1), self.int_(0, 1)
        a = self.new_value([k, m] if ta else [m, k], self.cdtype)
        bdt = _real_of(self.cdtype) if self.int_(0, 3) == 0 else self.cdtype
        b = self.new_value([n, k] if tb else [k, n], bdt)
        ins = [a, b]
        attrs = {"transA": ta, "transB": tb}
        if self.flag():
            ins.append(self.new_value(self.one([[m, n], [n], [1, n], [m, 1], []]), self.cdtype))
            attrs["beta"] = self.one([1.0, 0.5, -2.0])
        attrs["alpha"] = self.one([1.0, 2.0, -0.5])
        bound = a.bound * b.bound * k * 2 + (ins[2].bound * 2 if len(ins) > 2 else 0)
        self.add("Gemm", ins, [m, n], self.cdtype, bound, **attrs)

    def s_einsum(self):
        i, j, k = (self.one([1, 2, 3]) for _ in range(3))
        eq, shapes, out = self.one([
            ("ij,jk->ik", ([i, j], [j, k]), [i, k]),
            ("ij,ij->i", ([i, j], [i, j]), [i]),
            ("i,j->ij", ([i], [j]), [i, j]),
            ("ij->ji", ([i, j],), [j, i]),
            ("bij,bjk->bik", ([k, i, j], [k, j, 2]), [k, i, 2]),
            ("ij,jk,k->i", ([i, j], [j, k], [k]), [i]),
        ])  # fmt: skip
        ins = []
        for s in shapes:
            real = len(shapes) > 1 and ins and self.int_(0, 3) == 0
            ins.append(self.new_value(s, _real_of(self.cdtype) if real else self.cdtype))
        bound = math.prod(v.bound for v in ins) * 9
        self.add("Einsum", ins, out, self.cdtype, bound, equation=eq)

    def s_conv(self):
        if self.extreme and self.cdtype == np.complex128:
            return  # it runs in float32 (docs/rewrite.md, Precision): products of 1e20 leave its range
        op = self.one(["Conv", "ConvTranspose"])
        dims = self.int_(1, 2)
        c, m, group = self.one([1, 2]), self.one([1, 2]), 1
        # The reference's grouped ConvTranspose drops imaginary parts (a real buffer).
        if c == 2 and m == 2 and op == "Conv" and self.flag():
            group = 2
        spatial = [self.one([2, 3, 4]) for _ in range(dims)]
        kernel = [self.one([1, 2]) for _ in range(dims)]
        x = self.new_value([1, c, *spatial], self.cdtype)
        wdt = _real_of(self.cdtype) if self.int_(0, 3) == 0 else self.cdtype
        wshape = [m, c // group, *kernel] if op == "Conv" else [c, m // group, *kernel]
        w = self.new_value(wshape, wdt, self.one(["input", "init"]))
        ins = [x, w]
        if self.flag():
            ins.append(self.new_value([m], self.cdtype))
        if op == "Conv":
            out = [1, m, *[s - k + 1 for s, k in zip(spatial, kernel, strict=True)]]
        else:
            out = [1, m, *[s + k - 1 for s, k in zip(spatial, kernel, strict=True)]]
        if self.cdtype == np.complex128:
            self.float32_math = True  # onnxruntime has no float64 convolution
        bound = x.bound * w.bound * c * math.prod(kernel) + 10
        self.add(op, ins, out, self.cdtype, bound, group=group)

    def s_constant_of_shape(self):
        shape = self.shape(self.int_(0, 3))
        value = numpy_helper.from_array(self.numbers((1,), self.cdtype), "value")
        v = self.add("ConstantOfShape", [self.index_const(list(shape))], shape, self.cdtype, 10, value=value)  # fmt: skip
        v.const = True

    def s_eye_like(self):
        """A complex identity shaped like a matrix of the pool, complex or real."""
        dtype = self.cdtype if self.flag() else np.dtype(np.float32)
        x = self.complex_value(lambda v: v.rank == 2, dtype) if dtype == self.cdtype else None
        if x is None or x.rank != 2:
            x = self.new_value([self.int_(1, 4), self.int_(1, 4)], dtype)
        out = self.name("eyelike")  # `add` takes its own dtype: the attribute goes by emit
        self.emit("EyeLike", [x.name], [out], dtype=onnx_of(self.cdtype), k=self.int_(-1, 1))
        self.derived(out, "EyeLike", x.shape, self.cdtype, 1, [x])

    def s_dft(self):
        x = self.complex_value(lambda v: v.rank >= 2 and min(v.shape) > 0)
        if x.rank < 2 or 0 in x.shape:
            return
        axis = self.int_(1, x.rank - 1)
        attrs = {"inverse": 1} if self.flag() else {}
        ins = [x.name]
        shape = list(x.shape)
        if self.flag():
            length = self.int_(1, 4)
            ins.append(self.index_const(length))
            shape[axis] = length
        if self.opset >= 20:
            if len(ins) == 1:
                ins.append("")
            ins.append(self.index_const(axis if self.flag() else axis - x.rank - 1))
        else:
            attrs["axis"] = axis
        bound = x.bound * max(x.shape[axis], shape[axis])
        self.float32_math = True  # onnxruntime's DFT has about float32 accuracy in double
        self.add("DFT", ins, shape, x.dtype, bound, srcs=[x], **attrs)

    # ---- control flow --------------------------------------------------------------

    def body(self, name, ins, outs, nodes) -> onnx.GraphProto:
        return helper.make_graph(nodes, name, ins, outs)

    def s_if(self):
        a = self.complex_value()
        b = self.operand(a.shape, a.dtype)
        shape = _broadcast(a.shape, b.shape)
        found = self.pick(lambda v: v.dtype == np.bool_ and v.size == 1)
        cond = found.name if found is not None and self.flag() else None
        if cond is None:
            cond = self.index_const(np.array(self.flag()), np.bool_)
        elif found.rank:
            cond = self.add("Reshape", [found, self.index_const([])], (), np.bool_, 1).name
        out = self.name("if")
        t_out, e_out = self.name("then"), self.name("else")
        vi = helper.make_tensor_value_info
        then = self.body("then", [], [vi(t_out, onnx_of(a.dtype), list(shape))],
                         [helper.make_node("Mul", [a.name, b.name], [t_out])])  # fmt: skip
        other = self.one(["Add", "Sub"])
        orelse = self.body("else", [], [vi(e_out, onnx_of(a.dtype), list(shape))],
                           [helper.make_node(other, [b.name, a.name], [e_out])])  # fmt: skip
        self.emit("If", [cond], [out], then_branch=then, else_branch=orelse)
        bound = a.bound * b.bound + a.bound + b.bound
        self.derived(out, "If", shape, a.dtype, bound, [a, b], steps=2)

    def s_loop(self):
        # The condition is always given: the reference runs no iteration for an empty
        # one, onnxruntime runs M. A scan output is of rank 1 in the body: the
        # reference stacks the others with vstack, which is right only for rank 1.
        s = self.complex_value(lambda v: v.rank <= 1 and v.bound <= 2)
        if s.rank > 1 or s.bound > 2:
            return
        w = self.new_value(s.shape, s.dtype, self.one(["input", "init"]))
        if w.bound > 2:
            return
        m = self.int_(1, 3)
        vi = helper.make_tensor_value_info
        ct = onnx_of(s.dtype)
        it, cin, sin, cout, sout, scan = (self.name(k) for k in ("it", "cin", "sin", "cout", "sout", "scan"))  # fmt: skip
        prod = self.name("p")
        nodes = [
            helper.make_node("Identity", [cin], [cout]),
            helper.make_node("Mul", [sin, w.name], [prod]),
            helper.make_node("Add", [prod, w.name], [sout]),
        ]
        outs = [vi(cout, TensorProto.BOOL, []), vi(sout, ct, list(s.shape))]
        want_scan = s.rank == 1 and self.flag()
        if want_scan:
            nodes.append(helper.make_node("Neg", [sout], [scan]))
            outs.append(vi(scan, ct, list(s.shape)))
        body = self.body("body", [vi(it, TensorProto.INT64, []), vi(cin, TensorProto.BOOL, []),
                                  vi(sin, ct, list(s.shape))], outs, nodes)  # fmt: skip
        final = self.name("loop")
        names = [final] + ([self.name("scanned")] if want_scan else [])
        trip = self.index_const(m)
        cond = self.index_const(np.array(True), np.bool_)
        self.emit("Loop", [trip, cond, s.name], names, body=body)
        bound = 10.0**m
        self.derived(final, "Loop", s.shape, s.dtype, bound, [s, w], steps=3 * m)
        if want_scan:
            self.derived(names[1], "Loop", (m, *s.shape), s.dtype, bound, [s, w], steps=3 * m)

    def s_scan(self):
        x = self.complex_value(lambda v: 1 <= v.rank <= 2 and v.shape[0] >= 1)
        if not 1 <= x.rank <= 2 or x.shape[0] < 1:
            return
        vi = helper.make_tensor_value_info
        ct = onnx_of(x.dtype)
        state = self.new_value(x.shape[1:], x.dtype, "init")
        sin, xin, sout, yout = (self.name(k) for k in ("sin", "xin", "sout", "yout"))
        nodes = [
            helper.make_node("Add", [sin, xin], [sout]),
            helper.make_node("Mul", [sout, xin], [yout]),
        ]
        row = list(x.shape[1:])
        body = self.body("scan_body", [vi(sin, ct, row), vi(xin, ct, row)],
                         [vi(sout, ct, row), vi(yout, ct, row)], nodes)  # fmt: skip
        final, ys = self.name("scanstate"), self.name("scanout")
        self.emit("Scan", [state.name, x.name], [final, ys], body=body, num_scan_inputs=1)
        n = x.shape[0]
        bound = (state.bound + n * x.bound) * x.bound + 1
        sbound = state.bound + n * x.bound
        self.derived(final, "Scan", x.shape[1:], x.dtype, sbound, [x, state], steps=2 * n)
        self.derived(ys, "Scan", x.shape, x.dtype, bound, [x, state], steps=2 * n)

    # ---- the model -----------------------------------------------------------------

    def model(self) -> onnx.ModelProto:
        made = [v for v in self.pool if v.name not in self.feeds and v.depth > 0]
        if not made:
            x = self.complex_value()
            made = [self.add("Identity", [x], x.shape, x.dtype, x.bound)]
        last = made[-1]
        extra = self.draw(st.lists(st.sampled_from(made), max_size=2))
        outputs = list({v.name: v for v in [last, *extra]}.values())
        vi = helper.make_tensor_value_info
        # The checker wants a shape on every graph output.
        outs = [vi(v.name, onnx_of(v.dtype), list(v.shape)) for v in outputs]
        inputs = list(self.inputs)
        if self.inits and self.int_(0, 5) == 5:
            # An initializer that is also a graph input: a default the feeds override.
            t = self.inits[-1]
            if t.data_type in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
                inputs.append(vi(t.name, t.data_type, list(t.dims)))
                # A value given for it overrides the initializer's.
                dtype = numpy_helper.to_array(t).dtype
                self.feeds[t.name] = self.numbers(list(t.dims), dtype)
        graph = helper.make_graph(self.nodes, "fuzz", inputs, outs, self.inits)
        return helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", self.opset)],
            ir_version=IR_VERSION[self.opset],
        )

    def depth(self) -> int:
        return max((v.depth for v in self.pool), default=1)


@st.composite
def cases(draw, max_steps: int = 8) -> Case:
    """A random complex model, its inputs, and the rewrite options to use.

    Args:
        max_steps: The most ops (steps may add a few helper nodes each).
    """
    opset = draw(st.sampled_from([18, 21]))
    cdtype = draw(st.sampled_from([np.complex64, np.complex128]))
    b = Builder(draw, opset, cdtype)
    for _ in range(draw(st.integers(1, 3))):
        b.new_value(b.shape(), cdtype, "input")
    for kind in draw(st.lists(st.sampled_from(STEPS), min_size=2, max_size=max_steps)):
        b.step(kind)
    model = b.model()
    options = {}
    strategy = draw(st.sampled_from(["auto", "auto", "four", "gauss"]))
    if strategy != "auto":
        options["mul_strategy"] = strategy
    if draw(st.integers(0, 7)) == 7:
        options["target_opset"] = 23
    if draw(st.integers(0, 3)) == 3:  # onnxruntime's own forms: contrib nodes, MatMul by regime
        options["target"] = "onnxruntime"
    return Case(model, dict(b.feeds), b.depth(), b.float32_math, options)
