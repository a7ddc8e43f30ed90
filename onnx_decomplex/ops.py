"""Real ops on the parts of complex values: the `ops` that `cmath` computes with.

Each op emits one node, or computes in numpy when every input is a numpy constant,
so that constant parts fold at rewrite time. Adding a 0-d zero or multiplying by a
0-d one emits nothing: such a scalar never widens a broadcast.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import cmath
from .dtypes import onnx_of, ort_lacks_float64, real_of
from .emit import Emitter


def _is_np(x) -> bool:
    return isinstance(x, np.ndarray)


def _holds_no_negative_zero(x) -> bool:
    """Whether x is a constant (an array, or a graph's) with no -0."""
    values = x if _is_np(x) else getattr(x, "values", None)
    return isinstance(values, np.ndarray) and not np.any(np.signbit(values) & (values == 0))


def _is_scalar(x, value: float) -> bool:
    """A 0-d numpy constant equal to `value`: it never widens a broadcast."""
    return _is_np(x) and x.ndim == 0 and x == value


def _elementwise(op: str, fold):
    """An Ops method that emits `op`, or computes `fold` when every input is numpy."""

    def method(self, *args):
        if all(_is_np(a) for a in args):
            return np.asarray(fold(*args))
        return self.emit(op, list(args))

    method.__name__ = op.lower()
    method.__doc__ = f"{op}, folded in numpy when every input is a constant."
    return method


class Ops:
    """Elementwise, shape and reduction ops on real parts, folding numpy constants.

    Args:
        emitter: Where the nodes go.
        complex_dtypes: Tensor name -> complex dtype, for every complex value: the
            running node's precision picks float64 workarounds.
    """

    def __init__(self, emitter: Emitter, complex_dtypes: Mapping[str, np.dtype]):
        self.emitter = emitter
        self.complex_dtypes = complex_dtypes
        self._turns: dict[str, cmath.QuarterTurns] = {}

    def emit(self, op: str, inputs: list, attrs: dict | None = None, **kwargs):
        """One node; see `Emitter.emit`."""
        return self.emitter.emit(op, inputs, attrs, **kwargs)

    @property
    def work_dtype(self) -> np.dtype | None:
        """The real dtype the running node computes in: its complex values' precision."""
        node = self.emitter.node
        if node is None:
            return None
        for t in [*node.outputs, *node.inputs]:
            if t.name and t.name in self.complex_dtypes:
                return real_of(self.complex_dtypes[t.name])
        return None

    # ---- shapes and reductions ---------------------------------------------------------

    def unsqueeze(self, x, axes, name: str | None = None):
        """Unsqueeze with axes as an input (opset 13+) or an attribute; numpy folds."""
        if _is_np(x):
            return np.expand_dims(x, tuple(axes))
        return self.emitter.with_axes("Unsqueeze", x, axes, 13, name=name)

    def squeeze(self, x, axes, name: str | None = None):
        """Squeeze with axes as an input (opset 13+) or an attribute."""
        return self.emitter.with_axes("Squeeze", x, axes, 13, name=name)

    def concat(self, parts: list, axis: int):
        """Concat, folded in numpy when every part is a constant."""
        if all(_is_np(p) for p in parts):
            return np.concatenate(parts, axis=axis)
        return self.emit("Concat", parts, {"axis": axis})

    def split_halves(self, x, axis: int, name: str | None = None):
        """Two equal halves of `x` along `axis`."""
        return self.emitter.split_halves(x, axis, name=name)

    def reduce(self, op: str, x, axes, keepdims: int = 1, name: str | None = None):
        """A Reduce* op with axes as an input (ReduceSum 13+, others 18+) or an attribute."""
        since = 13 if op == "ReduceSum" else 18
        return self.emitter.with_axes(op, x, axes, since, {"keepdims": keepdims}, name=name)

    def cast(self, x, dtype):
        """Cast to a real dtype, in numpy for constants."""
        if _is_np(x):
            return x.astype(dtype)
        return self.emit("Cast", [x], {"to": onnx_of(dtype)})

    # ---- elementwise arithmetic --------------------------------------------------------

    def add(self, a, b):
        """a + b."""
        if _is_np(a) and _is_np(b):
            return np.asarray(a + b)
        if _is_scalar(b, 0):
            return a
        if _is_scalar(a, 0):
            return b
        return self.emit("Add", [a, b])

    def sub(self, a, b):
        """a - b."""
        if _is_np(a) and _is_np(b):
            return np.asarray(a - b)
        if _is_scalar(b, 0):
            return a
        if _is_scalar(a, 0):
            return self.neg(b)
        return self.emit("Sub", [a, b])

    def mul(self, a, b):
        """a * b."""
        if _is_np(a) and _is_np(b):
            return np.asarray(a * b)
        for x, y in ((a, b), (b, a)):
            if _is_scalar(y, 1):
                return x
            if _is_scalar(y, -1):
                return self.neg(x)
        return self.emit("Mul", [a, b])

    def neg(self, a):
        """-a."""
        if _is_np(a):
            return np.asarray(-a)
        return self.emit("Neg", [a])

    def div(self, a, b):
        """a / b."""
        if _is_np(a) and _is_np(b):
            with np.errstate(divide="ignore", invalid="ignore"):  # inf and NaN, as at run time
                return np.asarray(a / b)
        if _is_scalar(b, 1):
            return a
        return self.emit("Div", [a, b])

    pow = _elementwise("Pow", np.power)
    abs = _elementwise("Abs", np.abs)
    sign = _elementwise("Sign", np.sign)
    max = _elementwise("Max", np.maximum)
    min = _elementwise("Min", np.minimum)
    sqrt = _elementwise("Sqrt", np.sqrt)
    exp = _elementwise("Exp", np.exp)
    log = _elementwise("Log", np.log)
    ceil = _elementwise("Ceil", np.ceil)
    floor = _elementwise("Floor", np.floor)
    small_sin = _elementwise("Sin", np.sin)
    small_cos = _elementwise("Cos", np.cos)
    _sinh = _elementwise("Sinh", np.sinh)
    _cosh = _elementwise("Cosh", np.cosh)
    tanh = _elementwise("Tanh", np.tanh)
    _asinh = _elementwise("Asinh", np.arcsinh)
    _atan = _elementwise("Atan", np.arctan)
    less = _elementwise("Less", np.less)
    equal = _elementwise("Equal", np.equal)
    and_ = _elementwise("And", np.logical_and)
    or_ = _elementwise("Or", np.logical_or)
    isinf = _elementwise("IsInf", np.isinf)
    isnan = _elementwise("IsNaN", np.isnan)
    xor = _elementwise("Xor", np.logical_xor)

    def where(self, c, a, b):
        """a where c, else b.

        onnxruntime's CPU Where (1.32) gives +0 where it picks a -0 of its second input,
        and keeps every value of its third exactly; where the sign of a zero part picks
        the side of a branch cut, it must come through. So where `a` is a tensor and `b`
        a constant with no -0, the node is Where(Xor(c, true), b, a) (no Not, which
        onnxruntime fuses back into the Where, branches swapped); where both are tensors,
        a -0 of `a` may come out +0 there, and the formulas keep signed zeros in `b` or
        out of the Where (`times_sin` picks a factor, not a product)."""
        if all(_is_np(x) for x in (c, a, b)):
            return np.asarray(np.where(c, a, b))
        if _is_np(a) or not _is_np(b) or not _holds_no_negative_zero(b):
            return self.emit("Where", [c, a, b])
        return self.emit("Where", [self._negated(c), b, a])

    def _negated(self, c):
        """not c: an Xor with true, not a Not, which onnxruntime fuses into the Where
        that reads it, swapping its branches back."""
        return np.logical_not(c) if _is_np(c) else self.emit("Xor", [c, np.array(True)])

    def where_signed(self, c, a, b, dtype):
        """`where` for a model's own Where, whose branches may hold any zero. Where the
        runtime's Where turns a -0 of `a` into +0 (`where_drops_negative_zero`), it is
        Min(Where(c, a, b), Where(not c, inf, a)): the second holds `a` exactly where c
        does (its third input) and inf elsewhere, and onnxruntime's Min gives the value
        where the two agree, its second operand where they are zeros of two signs, NaN
        beside a NaN, and `b` beside inf."""
        if all(_is_np(x) for x in (c, a, b)):
            return np.asarray(np.where(c, a, b))
        a_unsigned, b_unsigned = (_holds_no_negative_zero(x) for x in (a, b))
        if not getattr(self, "where_drops_negative_zero", False) or a_unsigned:
            return self.where(c, a, b)
        if b_unsigned:  # a as the third input, b second
            return self.emit("Where", [self._negated(c), b, a])
        kept = self.emit("Where", [self._negated(c), np.array(np.inf, dtype), a])
        return self.emit("Min", [self.where(c, a, b), kept])

    # Where onnxruntime's CPU provider has no float64 kernel (`ORT_CPU_NO_FLOAT64`),
    # complex128 math is built from ops it has, at full double precision.

    def _double(self, op: str, *args) -> bool:
        return ort_lacks_float64(op, self.work_dtype) and not all(_is_np(a) for a in args)

    def _quarter_turns(self, x) -> cmath.QuarterTurns | None:
        """x's reduction (`cmath.QuarterTurns`) where it computes in float64, one per
        tensor; None for float32 and constants."""
        if _is_np(x) or self.work_dtype != np.float64:
            return None
        turns = self._turns.get(x.name)
        if turns is None:
            turns = self._turns[x.name] = cmath.QuarterTurns(self, x)
        return turns

    def sin(self, x):
        """sin x; in float64, reduced first (`cmath.QuarterTurns`)."""
        turns = self._quarter_turns(x)
        return self.small_sin(x) if turns is None else turns.sin()

    def cos(self, x):
        """cos x; in float64, reduced first (`cmath.QuarterTurns`)."""
        turns = self._quarter_turns(x)
        return self.small_cos(x) if turns is None else turns.cos()

    def sinh(self, x):
        """sinh x."""
        return cmath.sinh_by_tanh(self, x) if self._double("Sinh", x) else self._sinh(x)

    def cosh(self, x):
        """cosh x."""
        return cmath.cosh_by_exp(self, x) if self._double("Cosh", x) else self._cosh(x)

    def asinh(self, x):
        """asinh x."""
        # Built for float32 too: onnxruntime's float Asinh is several times slower
        # than the dozen elementwise ops that replace it.
        if _is_np(x):
            return self._asinh(x)
        return cmath.asinh_by_log(self, x, self.work_dtype)

    def atan_unit(self, t):
        """atan t for t in [0, 1]."""
        if self._double("Atan", t):
            return cmath.atan_unit_refined(self, t, self._atan)
        return self._atan(t)

    def atan(self, x):
        """atan x."""
        return cmath.atan_refined(self, x, self._atan) if self._double("Atan", x) else self._atan(x)
