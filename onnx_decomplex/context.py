"""The one object rules talk to: value forms, real operands and node emission.

A complex value can exist as a packed tensor (shape S + [2]), as a (re, im) pair
of tensors of shape S, or both. Rules ask for the form they need; a conversion is
emitted at most once per value, and a constant is converted in numpy instead.
Pair parts may be numpy arrays: the arithmetic below folds them at rewrite time.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs
from onnx import helper

from . import cmath
from .analyze import Analysis
from .dtypes import onnx_of, real_of
from .errors import DecomplexError
from .tidy import fresh_name

Part = "gs.Tensor | np.ndarray"


def _is_np(x) -> bool:
    return isinstance(x, np.ndarray)


def _is_scalar(x, value: float) -> bool:
    """A 0-d numpy constant equal to `value`: it never widens a broadcast."""
    return _is_np(x) and x.ndim == 0 and x == value


def _elementwise(op: str, fold):
    """A Context method that emits `op`, or computes `fold` when every input is numpy."""

    def method(self, *args):
        if all(_is_np(a) for a in args):
            return np.asarray(fold(*args))
        return self.emit(op, list(args))

    method.__name__ = op.lower()
    method.__doc__ = f"{op}, folded in numpy when every input is a constant."
    return method


class Context:
    """Rewrite state for one graph. Rules get it as their first argument.

    Attributes:
        graph: The graph being rewritten; emitted nodes are appended to it.
        analysis: Which values are complex.
        opset: The default-domain opset, which picks attribute or input spellings.
        mul_strategy: How products of two runtime complex operands are formed:
            "four", "gauss" (three products), or "auto".
        contrib: Whether onnxruntime's own ops (domain com.microsoft) may be
            emitted: the target is onnxruntime.
        node: The node whose rule is running; emitted names start with its name.
        explanations: One line per rewrite, shown with `-v`.
    """

    def __init__(
        self,
        graph: gs.Graph,
        analysis: Analysis,
        opset: int,
        mul_strategy: str = "auto",
        contrib: bool = False,
    ):
        self.graph = graph
        self.analysis = analysis
        self.opset = opset
        self.mul_strategy = mul_strategy
        self.contrib = contrib
        self.node: gs.Node | None = None
        self.explanations: list[str] = []
        self.emitted = 0
        self._packed: dict[str, gs.Tensor] = {}
        self._pair: dict[str, tuple] = {}
        self._sparse: dict[str, tuple] = {}
        self._real_parts: dict[str, gs.Tensor] = {}
        self._const: dict[str, np.ndarray] = {}
        self._alias: dict[str, str] = {}
        self._casts: dict[tuple[str, str], gs.Tensor] = {}
        self._names: set[str] = set(graph.tensors().keys()) | {n.name for n in graph.nodes}
        self.kept: set[int] = set()

    def child(self, graph: gs.Graph, analysis: Analysis) -> Context:
        """A context for a branch of `graph`: it sees every form made so far, and
        what it makes stays in the branch. Names stay unique across both."""
        ctx = Context(graph, analysis, self.opset, self.mul_strategy, self.contrib)
        ctx._names = self._names
        ctx._names.update(graph.tensors().keys())
        for mine, theirs in (
            (self._packed, ctx._packed),
            (self._pair, ctx._pair),
            (self._sparse, ctx._sparse),
            (self._real_parts, ctx._real_parts),
            (self._const, ctx._const),
            (self._alias, ctx._alias),
            (self._casts, ctx._casts),
        ):
            theirs.update(mine)
        return ctx

    def keep(self, node: gs.Node) -> None:
        """Keeps the running node in the graph (its rule changed it in place)."""
        self.kept.add(id(node))

    # ---- names -------------------------------------------------------------------------

    def unique(self, base: str) -> str:
        """`base`, or `base_1`, `base_2`, ... : the first name not yet in the graph."""
        return fresh_name(base, self._names)

    def _prefix(self) -> str:
        if self.node is None:
            raise RuntimeError("emit() outside a rule needs an explicit name")
        return self.node.name

    # ---- facts about original tensors --------------------------------------------------

    def is_complex(self, t: gs.Tensor) -> bool:
        return bool(t.name) and t.name in self.analysis.complex

    def dtype(self, t: gs.Tensor) -> np.dtype:
        """The complex dtype of a complex value."""
        return self.analysis.complex[t.name]

    def real_dtype(self, t: gs.Tensor) -> np.dtype:
        """float32 for complex64 values, float64 for complex128."""
        return real_of(self.dtype(t))

    def shape(self, t: gs.Tensor) -> list | None:
        """The logical shape known for `t` (ints, dim names or None), or None."""
        if isinstance(t, gs.Constant):
            return list(t.shape)
        return list(t.shape) if t.shape is not None else None

    def rank(self, t: gs.Tensor) -> int | None:
        shape = self.shape(t)
        return None if shape is None else len(shape)

    def broadcasts_into(self, small: gs.Tensor, big: gs.Tensor) -> bool:
        """True when broadcasting `small` against `big` provably keeps `big`'s shape."""
        s, b = self.shape(small), self.shape(big)
        if s is None or b is None or len(s) > len(b):
            return False
        for ds, db in zip(reversed(s), reversed(b), strict=False):
            if ds == 1 or (ds is not None and ds == db):
                continue
            return False
        return True

    def constant(self, t: gs.Tensor) -> np.ndarray | None:
        """The value of `t` when it is known at rewrite time, else None."""
        if self._key(t) in self._const:
            return self._const[self._key(t)]
        if isinstance(t, gs.Constant):
            return np.asarray(t.values)
        if len(t.inputs) == 1 and t.inputs[0].op == "Constant":
            value = t.inputs[0].attrs.get("value")
            if isinstance(value, gs.Constant):
                return np.asarray(value.values)
        return None

    # ---- complex value forms -----------------------------------------------------------

    def set_packed(self, out: gs.Tensor, packed: gs.Tensor) -> None:
        """Records `packed` (shape S + [2]) as the packed form of complex value `out`."""
        self._packed[self._key(out)] = packed

    def set_pair(self, out: gs.Tensor, re: Part, im: Part) -> None:
        """Records (re, im) as the pair form of complex value `out`."""
        if _is_np(re) and _is_np(im):
            value = (re + 1j * im).astype(self.dtype(out))
            self.set_constant(out, value)
            return
        self._pair[out.name] = (re, im)
        source = self._gathered_from(re, im, self.real_dtype(out))
        if source is not None:
            self._packed.setdefault(out.name, source)

    def set_parts(self, out: gs.Tensor, re: Part | None, im: Part | None) -> None:
        """Records (re, im) where one part may be None: known to be zero, and not made.

        A real value cast to complex is (x, None); times i, it is (None, x). Products
        and sums then skip the zero part, and a pair or packed form is only made
        when a rule asks for one.
        """
        if re is not None and im is not None:
            self.set_pair(out, re, im)
            return
        part = re if re is not None else im
        if _is_np(part):
            zero = np.zeros_like(part)
            self.set_pair(out, *((part, zero) if re is not None else (zero, part)))
            return
        self._sparse[out.name] = (re, im)

    def known_zero_parts(self, t: gs.Tensor, dtype: np.dtype | None = None) -> tuple | None:
        """(re, im) with the part known to be zero as None, or None when neither is.

        That is a value recorded by `set_parts`, or a constant whose imaginary (or
        real) part is all zero.
        """
        dtype = np.dtype(dtype or self.real_dtype(t))
        key = self._key(t)
        if key in self._sparse:
            parts = self._sparse[key]
            if dtype == self.real_dtype(t):
                return parts
            return tuple(None if p is None else self._cast_part(p, dtype) for p in parts)
        value = self.constant(t)
        if value is None or value.size == 0:
            return None
        if not np.any(value.imag):
            return value.real.astype(dtype), None
        if not np.any(value.real):
            return None, value.imag.astype(dtype)
        return None

    def has_known_zero(self, t: gs.Tensor) -> bool:
        """True for a runtime complex value with a part known to be zero."""
        return self.is_complex(t) and self._key(t) in self._sparse

    def set_constant(self, out: gs.Tensor, value: np.ndarray) -> None:
        """Records a complex value known at rewrite time; forms are made in numpy."""
        self._const[out.name] = np.asarray(value, dtype=self.dtype(out))

    def set_real(self, out: gs.Tensor, value: Part) -> None:
        """Makes real output `out` of the running node hold `value`.

        A fresh result of an emitted node is produced under `out`'s name directly;
        anything else (an input, a constant, a shared tensor) is copied by Identity.
        """
        if (
            isinstance(value, gs.Variable)
            and len(value.inputs) == 1
            and not value.outputs
            and value not in self.graph.outputs
        ):
            producer = value.inputs[0]
            producer.outputs[producer.outputs.index(value)] = out
        else:
            self.emit("Identity", [value], outputs=[out])

    def alias(self, out: gs.Tensor, src: gs.Tensor) -> None:
        """`out` is the same complex value as `src`: they share every form, now and later."""
        self._alias[out.name] = self._key(src)

    def _key(self, t: gs.Tensor) -> str:
        return self._alias.get(t.name, t.name)

    def prefers_pair(self, *ts: gs.Tensor) -> bool:
        """True when a runtime value among `ts` exists only as a pair.

        Layout rules then act on each part, rather than pay a pack and an unpack.
        """
        return any(
            self.is_complex(t)
            and (self._key(t) in self._pair or self._key(t) in self._sparse)
            and self._key(t) not in self._packed
            for t in ts
        )

    def has_packed(self, t: gs.Tensor) -> bool:
        """True when complex value `t` already exists as a packed tensor."""
        return self._key(t) in self._packed

    def packed(self, t: gs.Tensor, dtype: np.dtype | None = None) -> gs.Tensor:
        """The packed form (shape S + [2]) of complex value `t`, converting once if needed.

        With `dtype` (a real dtype), the result is cast to it: numpy's promotion of
        complex64 with complex128 operands.
        """
        packed = self._packed_form(t)
        if dtype is None or np.dtype(dtype) == self.real_dtype(t):
            return packed
        return self._cast_part(packed, dtype)

    def _cast_part(self, part: Part, dtype: np.dtype) -> Part:
        if isinstance(part, gs.Constant):
            part = np.asarray(part.values)
        if _is_np(part):
            return part.astype(dtype)
        return self.emit(
            "Cast", [part], {"to": onnx_of(dtype)}, name=f"{part.name}_as_{np.dtype(dtype).name}"
        )

    def _packed_form(self, t: gs.Tensor) -> gs.Tensor:
        name = self._key(t)
        if name in self._packed:
            return self._packed[name]
        if name in self._const:
            packed = gs.Constant(self.unique(f"{name}_packed"), cmath.pack(self._const[name]))
        elif name in self._pair:
            packed = self.pack_parts(*self._pair[name], name=f"{name}_packed")
        elif name in self._sparse and self.rank(t) is not None:
            packed = self._pad_part(*self._sparse[name], rank=self.rank(t), name=f"{name}_packed")
        elif name in self._sparse:
            packed = self.pack_parts(*self._pair_form(t), name=f"{name}_packed")
        else:
            raise RuntimeError(f"complex value '{name}' has no form yet")
        self._packed[name] = packed
        return packed

    def _pad_part(self, re, im, rank: int, name: str) -> gs.Tensor:
        """The packed form of (re, 0) or (0, im): the part with a zero padded beside it."""
        part = self.unsqueeze(re if re is not None else im, [-1], name=f"{name}_u")
        pads = np.zeros(2 * (rank + 1), np.int64)
        pads[-1 if re is not None else rank] = 1  # after the real part, or before the imaginary
        return self.emit("Pad", [part, pads], name=name)

    def real_part(self, t: gs.Tensor) -> Part:
        """Re t alone: from the pair when there is one, else one Gather from the packed
        tensor, which reads half of what a Split into both parts writes."""
        name = self._key(t)
        parts = self.known_zero_parts(t) if name in self._sparse else None
        if parts is not None and parts[0] is not None:
            return parts[0]
        if name in self._pair or name in self._const or name not in self._packed:
            return self.pair(t)[0]
        if name not in self._real_parts:
            self._real_parts[name] = self.emit(
                "Gather", [self._packed[name], np.array(0, np.int64)], {"axis": -1},
                name=f"{name}_re",
            )  # fmt: skip
        return self._real_parts[name]

    def pair(self, t: gs.Tensor, dtype: np.dtype | None = None) -> tuple:
        """The (re, im) form of complex value `t`, converting once if needed.

        Parts of constants are numpy arrays; every other part is a tensor of shape S.
        With `dtype` (a real dtype), both parts are cast to it.
        """
        re, im = self._pair_form(t)
        if dtype is None or np.dtype(dtype) == self.real_dtype(t):
            return re, im
        return self._cast_part(re, dtype), self._cast_part(im, dtype)

    def _pair_form(self, t: gs.Tensor) -> tuple:
        name = self._key(t)
        if name in self._pair:
            return self._pair[name]
        if name in self._const:
            parts = cmath.split(self._const[name])
        elif name in self._sparse:
            re, im = self._sparse[name]
            zero = self.zeros_like(
                re if re is not None else im, self.real_dtype(t), name=f"{name}_zero"
            )
            parts = (zero, im) if re is None else (re, zero)
        elif name in self._packed:
            # One Split reads the packed tensor once; two Gathers would read it twice.
            halves = self.split_halves(self._packed[name], -1, name=f"{name}_split")
            re, im = (
                self.squeeze(h, [-1], name=f"{name}_{r}") for h, r in zip(halves, "ri", strict=True)
            )
            parts = (re, im)
        else:
            raise RuntimeError(f"complex value '{name}' has no form yet")
        self._pair[name] = parts
        return parts

    def _gathered_from(self, re, im, dtype: np.dtype) -> gs.Tensor | None:
        """P when `re` is Gather(P, 0) and `im` is Gather(P, 1) on P's last axis, of size 2.

        P is then already the packed layout of (re, im): a model that views interleaved
        real pairs as complex numbers (RoPE's view_as_complex) does this.
        """
        nodes = []
        for part in (re, im):
            if not isinstance(part, gs.Variable) or len(part.inputs) != 1:
                return None
            nodes.append(part.inputs[0])
        sources = {id(n.inputs[0]) for n in nodes}
        p = nodes[0].inputs[0]
        if len(sources) != 1 or p.shape is None or not p.shape or p.shape[-1] != 2:
            return None
        if p.dtype is None or np.dtype(p.dtype) != np.dtype(dtype):
            return None
        for node, index in zip(nodes, (0, 1), strict=True):
            if node.op != "Gather" or node.attrs.get("axis", 0) not in (-1, len(p.shape) - 1):
                return None
            at = self.constant(node.inputs[1])
            if at is None or at.shape != () or int(at) != index:
                return None
        return p

    # ---- real operands -----------------------------------------------------------------

    def real(self, t: gs.Tensor, dtype: np.dtype) -> Part:
        """Real tensor `t` as `dtype`: constants convert in numpy, others get one Cast."""
        value = self.constant(t)
        if value is not None:
            return np.asarray(value, dtype=dtype)
        if t.dtype is not None and np.dtype(t.dtype) == np.dtype(dtype):
            return t
        key = (t.name, np.dtype(dtype).name)
        if key not in self._casts:
            self._casts[key] = self.emit(
                "Cast", [t], {"to": onnx_of(dtype)}, name=f"{t.name}_as_{np.dtype(dtype).name}"
            )
        return self._casts[key]

    def zeros_like(self, part: Part, dtype: np.dtype, name: str | None = None) -> Part:
        """Zeros of `part`'s shape: the imaginary part of a real value."""
        if _is_np(part):
            return np.zeros(part.shape, dtype)
        zero = helper.make_tensor("value", onnx_of(dtype), [1], [0])
        shape = self.emit("Shape", [part], name=name and f"{name}_shape")
        return self.emit("ConstantOfShape", [shape], {"value": zero}, name=name)

    def as_pair(self, t: gs.Tensor, dtype: np.dtype, full: bool = False) -> tuple:
        """The (re, im) form of `t`, complex or real, as `dtype`.

        A real value has a zero imaginary part: a 0-d zero, which broadcasts, or
        with `full`, zeros of its own shape (for ops that do not broadcast).
        """
        if self.is_complex(t):
            return self.pair(t, dtype)
        re = self.real(t, dtype)
        return re, (self.zeros_like(re, dtype) if full else np.zeros((), dtype))

    def as_packed(self, t: gs.Tensor, dtype: np.dtype) -> Part:
        """The packed form of `t`, complex or real (packed as (r, 0)), as `dtype`."""
        if self.is_complex(t):
            return self.packed(t, dtype)
        value = self.constant(t)
        if value is not None:
            return cmath.pack(np.asarray(value, dtype))
        return self.pack_parts(*self.as_pair(t, dtype, full=True), name=f"{t.name}_packed")

    def pack_parts(self, re: Part, im: Part, name: str) -> gs.Tensor:
        """Unsqueeze + Concat of a pair into one packed tensor."""
        parts = [self.unsqueeze(p, [-1], name=f"{name}_{r}_u") for p, r in ((re, "re"), (im, "im"))]
        return self.emit("Concat", parts, {"axis": -1}, name=name)

    def gauss(self, op: str) -> bool:
        """Whether products of two runtime complex operands of `op` use three products.

        "auto" takes three where a product is a contraction, which saves a whole
        real product, and keeps four for elementwise Mul, where three save little
        time and lose accuracy (Gauss's form subtracts products of sums).
        """
        if self.mul_strategy == "auto":
            return op != "Mul"
        return self.mul_strategy == "gauss"

    # ---- emission ----------------------------------------------------------------------

    def emit(
        self,
        op: str,
        inputs: list,
        attrs: dict | None = None,
        *,
        outputs: int | list[gs.Tensor] = 1,
        name: str | None = None,
        domain: str = "",
    ):
        """Appends one node; numpy inputs become initializers.

        Args:
            op: The ONNX op type.
            inputs: Tensors, numpy arrays, or None for an omitted optional input.
            attrs: Node attributes.
            outputs: How many new outputs to make, or the exact tensors to produce
                (a rule passes an original real output to keep its name).
            name: The node name; by default `{node}_{op}` for the running rule.
            domain: The op's domain; the default one when empty.

        Returns:
            The output tensor when `outputs` is 1, else the list of outputs.
        """
        node_name = self.unique(name or f"{self._prefix()}_{op.lower()}")
        ins = []
        for x in inputs:
            if x is None:
                ins.append(gs.Variable.empty())
            elif _is_np(x):
                ins.append(gs.Constant(self.unique(f"{node_name}_c"), x))
            else:
                ins.append(x)
        if isinstance(outputs, int):
            if outputs == 1:
                outs = [gs.Variable(self.unique(node_name))]
            else:
                outs = [gs.Variable(self.unique(f"{node_name}_{i}")) for i in range(outputs)]
        else:
            outs = list(outputs)
        self.graph.nodes.append(
            gs.Node(op, node_name, dict(attrs or {}), ins, outs, domain=domain or None)
        )
        self.emitted += 1
        return outs[0] if isinstance(outputs, int) and outputs == 1 else outs

    def explain(self, message: str) -> None:
        """Notes what the running rule did, for `-v`."""
        self.explanations.append(f"{self.node.name} ({self.node.op}): {message}")

    def fail(self, message: str, tensor: gs.Tensor | None = None) -> DecomplexError:
        """An error about the running node, to raise."""
        return DecomplexError(
            message,
            node=self.node.name,
            op_type=self.node.op,
            tensor=tensor.name if tensor else None,
        )

    # ---- ops whose spelling depends on the opset ---------------------------------------

    def _axes_op(self, op: str, x, axes, name, since: int = 13):
        if axes is None:
            return self.emit(op, [x], name=name)
        axes = [int(a) for a in axes]
        if self.opset >= since:
            return self.emit(op, [x, np.array(axes, np.int64)], name=name)
        return self.emit(op, [x], {"axes": axes}, name=name)

    def unsqueeze(self, x, axes, name: str | None = None):
        """Unsqueeze with axes as an input (opset 13+) or an attribute; numpy folds."""
        if _is_np(x):
            return np.expand_dims(x, tuple(axes))
        return self._axes_op("Unsqueeze", x, axes, name)

    def concat(self, parts: list, axis: int):
        """Concat, folded in numpy when every part is a constant."""
        if all(_is_np(p) for p in parts):
            return np.concatenate(parts, axis=axis)
        return self.emit("Concat", parts, {"axis": axis})

    def squeeze(self, x, axes, name: str | None = None):
        """Squeeze with axes as an input (opset 13+) or an attribute."""
        return self._axes_op("Squeeze", x, axes, name)

    def split_halves(self, x, axis: int, name: str | None = None):
        """Two equal halves of `x` along `axis` (num_outputs is required from opset 18)."""
        attrs = {"axis": axis, "num_outputs": 2} if self.opset >= 18 else {"axis": axis}
        return self.emit("Split", [x], attrs, outputs=2, name=name)

    def reduce(self, op: str, x, axes, keepdims: int = 1, name: str | None = None):
        """A Reduce* op with axes as an input (ReduceSum 13+, others 18+) or an attribute."""
        since = 13 if op == "ReduceSum" else 18
        if axes is None:
            return self.emit(op, [x], {"keepdims": keepdims}, name=name)
        axes = [int(a) for a in axes]
        if self.opset >= since:
            return self.emit(op, [x, np.array(axes, np.int64)], {"keepdims": keepdims}, name=name)
        return self.emit(op, [x], {"axes": axes, "keepdims": keepdims}, name=name)

    # ---- elementwise arithmetic for cmath, folding numpy constants ---------------------

    def add(self, a, b):
        if _is_np(a) and _is_np(b):
            return np.asarray(a + b)
        if _is_scalar(b, 0):
            return a
        if _is_scalar(a, 0):
            return b
        return self.emit("Add", [a, b])

    def sub(self, a, b):
        if _is_np(a) and _is_np(b):
            return np.asarray(a - b)
        if _is_scalar(b, 0):
            return a
        if _is_scalar(a, 0):
            return self.neg(b)
        return self.emit("Sub", [a, b])

    def mul(self, a, b):
        if _is_np(a) and _is_np(b):
            return np.asarray(a * b)
        for x, y in ((a, b), (b, a)):
            if _is_scalar(y, 1):
                return x
            if _is_scalar(y, -1):
                return self.neg(x)
        return self.emit("Mul", [a, b])

    def neg(self, a):
        if _is_np(a):
            return np.asarray(-a)
        return self.emit("Neg", [a])

    def div(self, a, b):
        if _is_np(a) and _is_np(b):
            with np.errstate(divide="ignore", invalid="ignore"):  # inf and NaN, as at run time
                return np.asarray(a / b)
        if _is_scalar(b, 1):
            return a
        return self.emit("Div", [a, b])

    pow = _elementwise("Pow", np.power)
    abs = _elementwise("Abs", np.abs)
    max = _elementwise("Max", np.maximum)
    min = _elementwise("Min", np.minimum)
    sqrt = _elementwise("Sqrt", np.sqrt)
    exp = _elementwise("Exp", np.exp)
    log = _elementwise("Log", np.log)
    ceil = _elementwise("Ceil", np.ceil)
    sin = _elementwise("Sin", np.sin)
    cos = _elementwise("Cos", np.cos)
    _sinh = _elementwise("Sinh", np.sinh)
    _cosh = _elementwise("Cosh", np.cosh)
    tanh = _elementwise("Tanh", np.tanh)
    _asinh = _elementwise("Asinh", np.arcsinh)
    _atan = _elementwise("Atan", np.arctan)

    # onnxruntime's CPU provider has no float64 Sinh, Cosh, Asinh or Atan; for
    # complex128 they are built from ops it has, at full double precision.

    def _double(self, *args) -> bool:
        return self.work_dtype == np.float64 and not all(_is_np(a) for a in args)

    def sinh(self, x):
        return cmath.sinh_by_tanh(self, x) if self._double(x) else self._sinh(x)

    def cosh(self, x):
        return cmath.cosh_by_exp(self, x) if self._double(x) else self._cosh(x)

    def asinh(self, x):
        # Built for float32 too: onnxruntime's float Asinh is several times slower
        # than the dozen elementwise ops that replace it.
        if _is_np(x):
            return self._asinh(x)
        return cmath.asinh_by_log(self, x, self.work_dtype)

    def atan_unit(self, t):
        """atan t for t in [0, 1]."""
        if self._double(t):
            return cmath.atan_unit_refined(self, t, self._atan)
        return self._atan(t)

    def atan(self, x):
        return cmath.atan_refined(self, x, self._atan) if self._double(x) else self._atan(x)

    def cast(self, x, dtype):
        """Cast to a real dtype, in numpy for constants."""
        if _is_np(x):
            return x.astype(dtype)
        return self.emit("Cast", [x], {"to": onnx_of(dtype)})

    @property
    def work_dtype(self) -> np.dtype | None:
        """The real dtype the running node computes in: its complex values' precision."""
        if self.node is None:
            return None
        for t in [*self.node.outputs, *self.node.inputs]:
            if self.is_complex(t):
                return self.real_dtype(t)
        return None

    less = _elementwise("Less", np.less)
    equal = _elementwise("Equal", np.equal)
    and_ = _elementwise("And", np.logical_and)
    isinf = _elementwise("IsInf", np.isinf)
    where = _elementwise("Where", np.where)
