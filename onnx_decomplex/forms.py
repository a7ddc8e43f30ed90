"""The forms of each complex value: packed, (re, im) pair, or both.

A complex value can exist as a packed tensor (shape S + [2]), as a (re, im) pair
of tensors of shape S, or both. Rules ask for the form they need; a conversion is
emitted at most once per value, and a constant is converted in numpy instead.
Pair parts may be numpy arrays: the ops fold them at rewrite time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import onnx_graphsurgeon as gs
from onnx import TensorProto, helper

from . import cmath
from .constants import gs_value
from .dtypes import onnx_of, real_of
from .files.stream import Streamed, left_on_disk
from .ops import Ops
from .rules.common import node_axes

Part = "gs.Tensor | np.ndarray"


def _pairs_on(p, axis) -> bool:
    """Whether `axis` is the last of tensor `p`, and holds 2."""
    shape = getattr(p, "shape", None)
    return bool(shape) and shape[-1] == 2 and axis in (-1, len(shape) - 1)


def _is_np(x) -> bool:
    return isinstance(x, np.ndarray)


@dataclass
class Form:
    """What is known of one complex value. Any form may be None: not made yet.

    Attributes:
        name: The value's name; conversions are named after it. Aliases of the
            value share its record.
        packed: The packed tensor, shape S + [2].
        pair: (re, im), tensors of shape S or numpy arrays.
        sparse: (re, im) where one part is None: known to be zero, and not made.
        constant: The complex value, when it is known at rewrite time.
        on_disk: The initializer, when it is one left on disk: its forms are made
            there (see `stream`), and its value is never read.
    """

    name: str
    packed: gs.Tensor | None = None
    pair: tuple | None = None
    sparse: tuple | None = None
    constant: np.ndarray | None = None
    on_disk: TensorProto | None = None


class Forms:
    """The forms of every complex value of one graph, and the conversions between them.

    Args:
        ops: Where conversions are emitted.
        complex_dtypes: Tensor name -> complex dtype, for every complex value.
        streamed: Where the forms of initializers left on disk are made; None when
            every initializer is loaded.
    """

    def __init__(
        self,
        ops: Ops,
        complex_dtypes: Mapping[str, np.dtype],
        streamed: Streamed | None = None,
    ):
        self.ops = ops
        self.streamed = streamed
        self._dtypes = complex_dtypes
        self._forms: dict[str, Form] = {}
        self._casts: dict[tuple[str, str], gs.Tensor] = {}

    def child(self, ops: Ops) -> Forms:
        """The forms as a subgraph sees them: every form made so far, and what it makes
        stays in the subgraph. Aliases stay shared within it. Its complex values are
        those of `ops`, the subgraph's."""
        forms = Forms(ops, ops.complex_dtypes, self.streamed)
        copies: dict[int, Form] = {}
        for name, form in self._forms.items():
            if id(form) not in copies:
                copies[id(form)] = dataclasses.replace(form)
            forms._forms[name] = copies[id(form)]
        forms._casts.update(self._casts)
        return forms

    def _get(self, t: gs.Tensor) -> Form:
        return self._forms.get(t.name) or Form(t.name)

    def _at(self, t: gs.Tensor) -> Form:
        """The record of `t`, made on first use."""
        if t.name not in self._forms:
            self._forms[t.name] = Form(t.name)
        return self._forms[t.name]

    def dtype(self, t: gs.Tensor) -> np.dtype:
        return self._dtypes[t.name]

    def real_dtype(self, t: gs.Tensor) -> np.dtype:
        return real_of(self.dtype(t))

    def is_complex(self, t: gs.Tensor) -> bool:
        return bool(t.name) and t.name in self._dtypes

    # ---- recording ---------------------------------------------------------------------

    def constant(self, t: gs.Tensor) -> np.ndarray | None:
        """The value of `t` when it is known at rewrite time, else None."""
        form = self._get(t)
        if form.on_disk is not None:
            return None
        return form.constant if form.constant is not None else gs_value(t)

    def set_constant(self, out: gs.Tensor, value: np.ndarray) -> None:
        """Records a complex value known at rewrite time; forms are made in numpy."""
        self._at(out).constant = np.asarray(value, dtype=self.dtype(out))

    def set_initializer(self, out: gs.Constant) -> None:
        """Records a complex initializer: one left on disk keeps its bytes there (when
        a file run can make its forms there), any other is a constant."""
        tensor = left_on_disk(out) if self.streamed is not None else None
        if tensor is None:
            self.set_constant(out, out.values)
        else:
            self._at(out).on_disk = tensor

    def set_packed(self, out: gs.Tensor, packed: gs.Tensor) -> None:
        """Records `packed` (shape S + [2]) as the packed form of complex value `out`."""
        self._at(out).packed = packed

    def set_pair(self, out: gs.Tensor, re: Part, im: Part) -> None:
        """Records (re, im) as the pair form of complex value `out`."""
        if _is_np(re) and _is_np(im):
            self.set_constant(out, cmath.join(re, im, self.dtype(out)))
            return
        form = self._at(out)
        form.pair = (re, im)
        source = self._gathered_from(re, im, self.real_dtype(out))
        if source is not None and form.packed is None:
            form.packed = source

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
        self._at(out).sparse = (re, im)

    def alias(self, out: gs.Tensor, src: gs.Tensor) -> None:
        """`out` is the same complex value as `src`: they share every form, now and later."""
        self._forms[out.name] = self._at(src)

    def held(self) -> dict[str, tuple[str, ...]]:
        """The tensors that hold each complex value computed at run time, by the value's
        name: ("packed", tensor) where it has a packed form, else ("pair", re, im)."""
        found = {}
        for name, form in self._forms.items():
            if isinstance(form.packed, gs.Variable):
                found[name] = ("packed", form.packed.name)
            elif form.pair is not None and all(isinstance(p, gs.Variable) for p in form.pair):
                found[name] = ("pair", form.pair[0].name, form.pair[1].name)
        return found

    # ---- questions ---------------------------------------------------------------------

    def known_zero_parts(self, t: gs.Tensor, dtype: np.dtype | None = None) -> tuple | None:
        """(re, im) with the part known to be zero as None, or None when neither is.

        That is a value recorded by `set_parts`, or a constant whose imaginary (or
        real) part is all zero.
        """
        dtype = np.dtype(dtype or self.real_dtype(t))
        parts = self._get(t).sparse
        if parts is not None:
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
        return self.is_complex(t) and self._get(t).sparse is not None

    def prefers_pair(self, *ts: gs.Tensor) -> bool:
        """True when a runtime value among `ts` exists only as a pair.

        Layout rules then act on each part, rather than pay a pack and an unpack.
        """
        for t in ts:
            form = self._get(t)
            only_pair = form.packed is None and (form.pair is not None or form.sparse is not None)
            if only_pair and self.is_complex(t):
                return True
        return False

    def has_packed(self, t: gs.Tensor) -> bool:
        """True when complex value `t` already exists as a packed tensor."""
        return self._get(t).packed is not None

    # ---- conversions -------------------------------------------------------------------

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
        return self.ops.emit(
            "Cast", [part], {"to": onnx_of(dtype)}, name=f"{part.name}_as_{np.dtype(dtype).name}"
        )

    def _packed_form(self, t: gs.Tensor) -> gs.Tensor:
        form = self._get(t)
        name = form.name
        if form.packed is not None:
            return form.packed
        if form.constant is not None:
            unique = self.ops.emitter.unique(f"{name}_packed")
            packed = gs.Constant(unique, cmath.pack(form.constant))
        elif form.on_disk is not None:
            packed = self.streamed.packed(form.on_disk, self.ops.emitter.unique(f"{name}_packed"))
        elif form.pair is not None:
            packed = self.pack_parts(*form.pair, name=f"{name}_packed")
        elif form.sparse is not None and t.shape is not None:
            packed = self._beside_zeros(*form.sparse, self.real_dtype(t), name=f"{name}_packed")
        elif form.sparse is not None:
            packed = self.pack_parts(*self._pair_form(t), name=f"{name}_packed")
        else:
            raise RuntimeError(f"complex value '{name}' has no form yet")
        self._at(t).packed = packed
        return packed

    def _beside_zeros(self, re, im, dtype: np.dtype, name: str) -> gs.Tensor:
        """The packed form of (re, 0) or (0, im): the part, and zeros of its shape (an
        Expand), concatenated on a new last axis. onnxruntime's Pad of that axis takes 6
        to 11 times the time of the Concat and its zeros (4096 to 2^20 values, one
        thread)."""
        part = self.ops.unsqueeze(re if re is not None else im, [-1], name=f"{name}_u")
        shape = self.ops.emit("Shape", [part], name=f"{name}_shape")
        zeros = self.ops.emit("Expand", [np.zeros(1, dtype), shape], name=f"{name}_zeros")
        parts = [part, zeros] if re is not None else [zeros, part]
        return self.ops.emit("Concat", parts, {"axis": -1}, name=name)

    def real_part(self, t: gs.Tensor) -> Part:
        """Re t alone: from the pair, split from the packed tensor where there is no pair
        yet. onnxruntime's Split and Squeeze take 0.15 to 0.26 of the time of one Gather
        of the last axis (4096 to 2^20 values, one thread), though the Gather reads half;
        the imaginary half's Squeeze is dropped where nothing reads it."""
        form = self._get(t)
        parts = self.known_zero_parts(t) if form.sparse is not None else None
        if parts is not None and parts[0] is not None:
            return parts[0]
        return self.pair(t)[0]

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
        form = self._get(t)
        name = form.name
        if form.pair is not None:
            return form.pair
        if form.constant is not None:
            parts = cmath.split(form.constant)
        elif form.on_disk is not None:
            unique = self.ops.emitter.unique
            parts = self.streamed.parts(form.on_disk, (unique(f"{name}_re"), unique(f"{name}_im")))
        elif form.sparse is not None:
            re, im = form.sparse
            zero = self.zeros_like(
                re if re is not None else im, self.real_dtype(t), name=f"{name}_zero"
            )
            parts = (zero, im) if re is None else (re, zero)
        elif form.packed is not None:
            # One Split reads the packed tensor once; two Gathers would read it twice.
            halves = self.ops.split_halves(form.packed, -1, name=f"{name}_split")
            re, im = (
                self.ops.squeeze(h, [-1], name=f"{name}_{r}")
                for h, r in zip(halves, "ri", strict=True)
            )
            parts = (re, im)
        else:
            raise RuntimeError(f"complex value '{name}' has no form yet")
        self._at(t).pair = parts
        return parts

    def _gathered_from(self, re, im, dtype: np.dtype) -> gs.Tensor | None:
        """P when (`re`, `im`) are P's halves on its last axis, of size 2: Gather(P, 0)
        and Gather(P, 1), or the Squeezed outputs of one Split of P.

        P is then already the packed layout of (re, im): a model that views interleaved
        real pairs as complex numbers (RoPE's view_as_complex) does this, and so does a
        reading of an exporter's packed pairs (tf2onnx's spectrum, split into parts).
        """
        found = [self._half_of(part, index) for index, part in enumerate((re, im))]
        p = found[0]
        if p is None or found[1] is not p or p.dtype is None:
            return None
        return p if np.dtype(p.dtype) == np.dtype(dtype) else None

    def _half_of(self, part, index: int) -> gs.Tensor | None:
        """P where `part` is P's `index`th half on its last axis, of size 2."""
        if not isinstance(part, gs.Variable) or len(part.inputs) != 1:
            return None
        node = part.inputs[0]
        p = node.inputs[0] if node.inputs else None
        if node.op == "Squeeze" and isinstance(p, gs.Variable) and len(p.inputs) == 1:
            split, squeezed = p.inputs[0], p
            p = split.inputs[0] if split.inputs else None
            if not _pairs_on(p, split.attrs.get("axis", 0)) or len(split.outputs) != 2:
                return None
            kind, axes = node_axes(self, node)
            if split.outputs[index] is not squeezed or kind != "list" or len(axes) != 1:
                return None
            if not _pairs_on(p, axes[0]):
                return None
            sizes = self.constant(split.inputs[1]) if len(split.inputs) > 1 else None
            return p if sizes is None or list(np.ravel(sizes)) == [1, 1] else None
        if node.op != "Gather" or not _pairs_on(p, node.attrs.get("axis", 0)):
            return None
        at = self.constant(node.inputs[1])
        return p if at is not None and at.shape == () and int(at) == index else None

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
            self._casts[key] = self.ops.emit(
                "Cast", [t], {"to": onnx_of(dtype)}, name=f"{t.name}_as_{np.dtype(dtype).name}"
            )
        return self._casts[key]

    def zeros_like(self, part: Part, dtype: np.dtype, name: str | None = None) -> Part:
        """Zeros of `part`'s shape: the imaginary part of a real value."""
        if _is_np(part):
            return np.zeros(part.shape, dtype)
        zero = helper.make_tensor("value", onnx_of(dtype), [1], [0])
        shape = self.ops.emit("Shape", [part], name=name and f"{name}_shape")
        return self.ops.emit("ConstantOfShape", [shape], {"value": zero}, name=name)

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
        parts = [
            self.ops.unsqueeze(p, [-1], name=f"{name}_{r}_u") for p, r in ((re, "re"), (im, "im"))
        ]
        return self.ops.emit("Concat", parts, {"axis": -1}, name=name)
