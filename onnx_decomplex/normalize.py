"""Read an exporter's mixed graph as the native-complex model it means.

jax2onnx keeps some complex values typed complex and packs others itself as real
`[..., 2]` tensors, and one op may read a value in one form while the next reads
it in the other. No runtime can run such a graph as written. This pass reads it
value by value and consumer by consumer, and writes the valid native-complex model
the exporter meant. Each consumer reads a complex value z as:

    Gather(z, 0|1, axis=rank z)                      -> Re z | Im z
    Concat(Unsqueeze(a, k), Unsqueeze(b, k), axis=k) -> a + i b     # k = rank a, or 0
    Cast(z, to=complex)                              -> z
    DFT(z)                                           -> DFT(view_as_real z), packed out
    Reshape(z, s), s twice z's element count         -> Reshape(view_as_real z, s)
    any other op                                     -> the op on native z

and a real operand of an op with a complex one is promoted by that op. DFT's packed
output is a complex value too, which each consumer reads in its own form; ReduceL1's
(a sum of moduli) is the real value it is, though ONNX types it complex. A Loop body
that declares packed the complex state it is given is read the same way, with that
state; a Scan body like it is not read.

TensorFlow's own complex ops, which tf2onnx writes as they are in the default domain
where it has no converter (`Complex`, `Real`, `Imag`, `Conj`, `ConjugateTranspose`,
`ComplexAbs`, `Angle`, and `FFT`, `IFFT`, `RFFT`, `IRFFT` with their 2-D and 3-D forms), get
TensorFlow's meaning, in If branches and Loop bodies too (`Angle` as atan2's, signed
zeros included). tf2onnx's own magnitude of a complex z, Gathers on axis 0 squared with a
`2+0j` exponent, summed, squeezed on axis 0 and rooted, reads z's pair on that leading
axis; without the Squeeze and the root, the squares are complex squares. A complex value cast to real, moved, and cast back to complex is converted as written,
with a warning: the imaginary part is gone (tf2onnx's complex Pad).

A graph input or output declared real `S + [2]` for a complex value of shape S is
its packed declaration; the normalized model declares it complex S. Such an input
is read as complex when a Gather splits it on its last axis, when it meets a
complex operand, or when no other reading is free of contradictions. The pair on
axis 0 (`[2, *S]`) is how the exporter packs a complex value whose parts come from a
scalar's; a real stack on axis 0 is read as a pair only when its parts come from the
parts of complex values.

Every value gets a type and a rank: complex sources include what ONNX's schemas type no
complex (a complex ConstantOfShape, EyeLike of a complex dtype), Loop and Scan outputs
are their bodies', and the small integer values exporters build shapes from are computed
(`constants.evaluate`), so a Reshape's target or an Expand's shape is known. A reading that
leaves a value untyped is refused, naming the node where inference failed.

A graph that reads consistently as written, as native complex or as plain real, is
left alone, unless an op that computes something else on a packed tensor than on
the complex value it holds (Exp, Abs, a product of two pairs, ...) reads a pair the
graph built. Otherwise the readings apply once the graph contradicts itself (shapes
that cannot agree, an axis past a complex value's rank, an output declared with
another shape than the one computed). Where they leave a contradiction, nothing is
guessed: the node is named.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import helper, numpy_helper, shape_inference
from onnx_graphsurgeon.exporters.onnx_exporter import OnnxExporter

from .check import holds_complex
from .constants import evaluate, gs_value
from .dtypes import TYPE_ATTRIBUTES, is_complex_np, is_complex_onnx, np_of, onnx_of, real_of
from .errors import DecomplexError
from .graphs import (
    graph_nodes,
    gs_graphs,
    gs_holds_graphs,
    gs_sorted,
    is_default_domain,
    opset_versions,
    topologically_sorted,
)
from .load import TENSORFLOW_OPS, is_tensorflow_op
from .rules import registry
from .rules.common import node_axes
from .rules.patterns import unsqueezed
from .tidy import fresh_name, keep_model_fields, name_nodes

Shape = list | None

COMPLEX_OF = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}
"""The complex type whose parts have this float type."""

MAX_READ_ELEMENTS = 1 << 12
"""Constants this small are read (indices, shapes, scalars); larger ones never are."""

PROMOTED = frozenset({"Add", "Sub", "Mul", "Div", "MatMul", "Equal"})
"""Ops whose operands share one type: a real operand meeting a complex one is cast to
complex, as the exporter's framework promoted it."""

DIFFERS = frozenset(
    {"Exp", "Log", "Sqrt", "Abs", "Sin", "Cos", "Tan", "Sinh", "Cosh", "Tanh", "Asin", "Acos",
     "Atan", "Asinh", "Acosh", "Atanh", "Sigmoid", "Reciprocal", "Sign", "Pow", "MatMul",
     "Gemm", "Einsum", "Conv", "ConvTranspose", "ReduceProd", "ReduceL1", "ReduceL2",
     "ReduceSumSquare", "ReduceLogSumExp", "Softmax", "LogSoftmax"}
)  # fmt: skip
"""Ops that compute something else on a packed tensor than on the complex value it
holds (so do Mul and Div of two complex values). One of them reading a pair the
graph built is evidence, even in a graph that runs as written."""

REAL_VALUED = frozenset({"ReduceL1"})
"""Ops whose complex result has no imaginary part (ReduceL1 sums moduli): the exporter
means the real value."""

AXIS_OPS = frozenset({"ArgMax", "ArgMin", "Softmax", "LogSoftmax", "Hardmax", "CumSum", "TopK"})
"""Ops besides the reductions that work along a named axis."""

TRANSFORMS = {
    f"{kind}{suffix}": k
    for kind in ("FFT", "IFFT", "RFFT", "IRFFT")
    for suffix, k in (("", 1), ("2D", 2), ("3D", 3))
}
"""TensorFlow's Fourier transforms, by how many innermost axes they transform."""

MOVES = frozenset(
    {"Identity", "Pad", "Reshape", "Transpose", "Slice", "Squeeze", "Unsqueeze", "Expand", "Tile",
     "Flatten", "Gather", "Split"}
)  # fmt: skip
"""Ops that only move values: a real part they carry is still the one a Cast kept."""

ONESIDED_DEFAULT = {"DFT": 0, "STFT": 1}
"""The spec's default of each transform's `onesided`: DFT is two-sided unless told,
STFT one-sided."""


def _onesided(node: gs.Node) -> bool:
    """Whether a DFT or STFT `node` is one-sided, its own default where it says nothing."""
    return bool(node.attrs.get("onesided", ONESIDED_DEFAULT[node.op]))


FOLDED = frozenset(
    {"Shape", "Concat", "Gather", "Unsqueeze", "Squeeze", "Slice", "Cast", "Identity", "Reshape",
     "Add", "Sub", "Mul", "Div", "Neg", "Range", "ConstantOfShape", "Expand"}
)  # fmt: skip
"""Ops whose small integer results the walk computes (`_Walk._fold`)."""

SOURCES = frozenset({"Cast", "Constant", "ConstantOfShape", "EyeLike"})
"""Ops that may make a complex value from no complex input: their rules' `infer` says
which outputs are complex, as it tells analysis."""

MAX_ROUNDS = 4
"""Walks at most: each may find more inputs declared packed that must be read complex."""


class NormalizeError(DecomplexError):
    """No consistent reading of the exported graph exists."""


@dataclass
class Normalized:
    """The outcome of `normalize`.

    Attributes:
        model: The native-complex model, or the input itself when it read
            consistently as written.
        readings: One line per node read other than as written, for `-v`.
        packed_io: Graph inputs and outputs declared packed (`S + [2]`).
        axis0: Nodes read as a complex pair stacked on axis 0.
        warnings: Places where the graph, read as it is, likely computes something
            other than its exporter's framework did; one line each.
    """

    model: onnx.ModelProto
    readings: list[str] = field(default_factory=list)
    packed_io: list[str] = field(default_factory=list)
    axis0: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.readings or self.packed_io)


@dataclass
class _Conflict:
    node: str | None
    op_type: str | None
    tensor: str | None
    message: str


def _is_tensorflow(node: gs.Node) -> bool:
    return node.op in TENSORFLOW_OPS and is_default_domain(node.domain)


def _holds_tensorflow(node: gs.Node) -> bool:
    """True when a body or branch of `node`, at any depth, holds a TensorFlow op."""
    return any(_is_tensorflow(n) for g in node.subgraphs(recursive=True) for n in g.nodes)


def _declared(v: gs.Tensor) -> tuple[np.dtype | None, Shape]:
    dtype = None if v.dtype is None else np.dtype(v.dtype)
    return dtype, None if v.shape is None else list(v.shape)


def _dims_equal(a: Shape, b: Shape) -> bool:
    """False only when both are known and provably differ."""
    if a is None or b is None:
        return True
    if len(a) != len(b):
        return False
    return all(
        not (isinstance(x, int) and isinstance(y, int)) or x == y for x, y in zip(a, b, strict=True)
    )


def _merged(a: Shape, b: Shape) -> Shape:
    """The shape of a value that is `a` or `b` (an If's branches): a dim where both
    agree, unknown where they differ; None where the ranks differ."""
    if a is None or b is None or len(a) != len(b):
        return None
    return [x if x == y else None for x, y in zip(a, b, strict=True)]


def _count(shape: Shape) -> int | None:
    if shape is None or not all(isinstance(d, int) and d >= 0 for d in shape):
        return None
    return int(np.prod(shape, dtype=np.int64))


class _Walk:
    """One reading of the whole graph.

    With `mixed` off, values are what their types say and every node reads them as
    written; the walk only looks for contradictions, and changes nothing in the graph
    but the labels of values, noting in `labels` each label it changes, as it was.
    With it on, the readings of the module docstring apply. `given` are the
    inputs read as complex, with their type: inputs declared real `S + [2]` read as
    complex S, or a Loop body's state. A `parent` walk lends a body walk the forms of
    the values the body captures. `inferred` holds the shapes earlier walks inferred,
    shared; `in_order` says the graph's nodes are sorted already; `tensors` is
    `graph.tensors()`, where the caller has it.
    """

    def __init__(
        self,
        graph: gs.Graph,
        opset: dict[str, int],
        mixed: bool,
        given: dict[str, np.dtype],
        parent: _Walk | None = None,
        inferred: dict | None = None,
        in_order: bool = False,
        labels: list | None = None,
        tensors: dict[str, gs.Tensor] | None = None,
    ):
        self.mixed = mixed
        self.labels = parent.labels if parent is not None else labels
        # Shapes inferred, by what decides them: a stack of like layers asks once.
        self.inferred = parent.inferred if parent is not None else inferred
        if self.inferred is None:
            self.inferred = {}
        self.opset = opset
        self.graph = graph
        if not in_order:
            self.graph.toposort()
        self.conflicts: list[_Conflict] = []
        self.readings: list[str] = []
        self.packed_io: list[str] = []
        self.axis0: list[str] = []
        self.wants_complex: set[str] = set()
        self.evidence: list[str] = []  # nodes that read a pair the graph stacked as complex
        self.weak: list[str] = []  # nodes that read a split input or a DFT output so
        # Complex values the graph holds packed as written: "last" ([..., 2]) or
        # "first" ([2, ...]), where the pair lies.
        self.as_packed: dict[str, str] = {}
        self.built: set[str] = set()  # of those, pairs the graph stacked itself
        self.unread: list[gs.Node] = []  # Scan nodes whose bodies mix the forms too
        self.warnings: list[str] = []
        # Real parts a Cast kept, by that Cast, and whether an op has moved them since
        self.cast_real: dict[str, tuple[gs.Node, bool]] = {}
        self.magnitude: dict[str, int] = {}  # Gathers of tf2onnx's magnitude, read already
        self.splits = False  # a Gather reads the parts of a real [..., 2], or a DFT runs
        self.kind: dict[str, np.dtype] = {}  # complex values, by tensor name
        self.shape: dict[str, Shape] = {}  # logical shapes
        self.elem: dict[str, np.dtype] = {}  # real element types of real values
        self.native: dict[str, gs.Tensor] = {}
        self.packed: dict[str, gs.Tensor] = {}
        self.parts: dict[str, tuple[gs.Tensor, gs.Tensor]] = {}
        self.from_parts: set[str] = set()  # real values computed from parts of complex ones
        self.folded: dict[str, np.ndarray] = {}  # small integer values computed (`_fold`)
        self.failures: dict[str, str] = {}  # why inference failed, by node
        self.bodies: list[_Walk] = []  # the walks of the bodies and branches read
        self.root: _Walk = self if parent is None else parent.root
        self._names: set[str] | None = None  # taken, once the walk emits (see `names`)
        if parent is not None:
            for mine in ("kind", "shape", "elem", "native", "packed", "parts", "as_packed",
                         "folded"):  # fmt: skip
                getattr(self, mine).update(getattr(parent, mine))
            self.from_parts |= parent.from_parts
            self.built |= parent.built
        self.output_names = [t.name for t in self.graph.outputs]
        self.declared_outputs = {t.name: _declared(t) for t in self.graph.outputs}
        self._sources(given, self.graph.tensors() if tensors is None else tensors)
        for node in list(self.graph.nodes):
            self._visit(node)
        self._outputs()

    # ---- sources ---------------------------------------------------------------------

    def _sources(self, given: dict[str, np.dtype], tensors: dict[str, gs.Tensor]) -> None:
        outputs = {id(t) for t in self.graph.outputs}
        for node in self.graph.nodes:
            for t in node.outputs:
                # Exporters' labels of intermediate values are often wrong; outputs
                # keep their declarations in `declared_outputs`. (Values a body
                # captures are its enclosing graph's, and keep theirs.)
                self._keep_label(t)
                t.dtype, t.shape = None, None
                if id(t) in outputs:
                    t.dtype, t.shape = self.declared_outputs[t.name]
        for t in tensors.values():
            if isinstance(t, gs.Constant):
                self._record(t, np.dtype(t.dtype), list(t.shape))
        for t in self.graph.inputs:
            dtype, shape = _declared(t)
            if t.name in given and not (dtype is not None and is_complex_np(dtype)):
                dtype = given[t.name]
                shape = None if shape is None else shape[:-1]
                t.dtype, t.shape = dtype, shape
                self.packed_io.append(f"input '{t.name}'")
                self.as_packed[t.name] = "last"
            if dtype is not None:
                self._record(t, dtype, shape)

    def _keep_label(self, t: gs.Tensor) -> None:
        if self.labels is not None:
            self.labels.append((t, t.dtype, t.shape))

    def _record(self, t: gs.Tensor, dtype: np.dtype, shape: Shape) -> None:
        self.shape[t.name] = shape
        if is_complex_np(dtype):
            self.kind[t.name] = np.dtype(dtype)
            self.native[t.name] = t
        else:
            self.elem[t.name] = np.dtype(dtype)

    # ---- facts -----------------------------------------------------------------------

    def rank(self, t: gs.Tensor) -> int | None:
        shape = self.shape.get(t.name)
        return None if shape is None else len(shape)

    def is_float(self, t: gs.Tensor) -> bool:
        """True for a complex value, or a real one of a type complex values have parts of
        (float32, float64: ONNX has no complex half)."""
        return t.name in self.kind or self.elem.get(t.name) in COMPLEX_OF

    def constant(self, t: gs.Tensor) -> np.ndarray | None:
        """The value of a small constant (an index, a shape, a scalar), else None.

        Weights are never loaded: they may be on disk, and no reading needs them."""
        value = gs_value(t, MAX_READ_ELEMENTS)
        if value is not None or isinstance(t, gs.Constant):
            return value
        if t.name in self.folded:
            return self.folded[t.name]
        if len(t.inputs) == 1 and t.inputs[0].op == "Cast":  # a promoted constant
            value = self.constant(t.inputs[0].inputs[0])
            return None if value is None else value.astype(np_of(t.inputs[0].attrs["to"]))
        return None

    def conflict(self, node: gs.Node | None, message: str, tensor: str | None = None) -> None:
        self.conflicts.append(
            _Conflict(node.name if node else None, node.op if node else None, tensor, message)
        )

    @property
    def changed(self) -> bool:
        return bool(self.readings or self.packed_io)

    # ---- emission --------------------------------------------------------------------

    @property
    def names(self) -> set[str]:
        """Every tensor and node name of the whole graph, bodies included, and those
        emitted since: gathered on the first emission (the walk as written emits none)."""
        root = self.root
        if root._names is None:
            root._names = {name for g in gs_graphs(root.graph)
                           for name in [*g.tensors(), *(n.name for n in g.nodes)]}  # fmt: skip
        return root._names

    def unique(self, base: str) -> str:
        return fresh_name(base, self.names)

    def emit(self, op, inputs, attrs=None, *, name, dtype, shape) -> gs.Variable:
        assert self.mixed, "the walk as written only reads its graph"
        out = gs.Variable(self.unique(name), dtype=dtype, shape=shape)
        node = gs.Node(op, name=self.unique(f"{name}_node"), attrs=attrs or {})
        node.inputs, node.outputs = list(inputs), [out]
        self.graph.nodes.append(node)
        self._record(out, dtype, shape)
        if shape is None:
            self._infer(node)
        return out

    def scalar(self, value, dtype: np.dtype, name: str) -> gs.Constant:
        return gs.Constant(self.unique(name), np.array(value, dtype=dtype))

    # ---- forms of a complex value ----------------------------------------------------

    def native_of(self, t: gs.Tensor, dtype: np.dtype | None = None) -> gs.Tensor:
        """The typed-complex form of complex value `t`; a real `t` cast to complex
        (to `dtype`, or to the complex type of its parts' precision)."""
        if t.name in self.native:
            return self.native[t.name]
        if t.name not in self.kind:
            dtype = np.dtype(dtype or COMPLEX_OF.get(self.elem.get(t.name), np.complex64))
            key = f"{t.name}:{dtype.name}"
            if key not in self.native:
                self.native[key] = self.emit(
                    "Cast", [t], {"to": onnx_of(dtype)}, name=f"{t.name}_as_{dtype.name}",
                    dtype=dtype, shape=self.shape.get(t.name),
                )  # fmt: skip
            return self.native[key]
        re, im = self.parts_of(t)
        z = self.combine(re, im, self.kind[t.name], self.shape.get(t.name), t.name)
        self.native[t.name] = z
        return z

    def combine(self, re, im, dtype, shape, name) -> gs.Tensor:
        """re + i im, for real or complex re and im."""
        i = self.scalar(1j, dtype, f"{name}_i")
        scaled = self.emit("Mul", [self.native_of(im), i], name=f"{name}_i_im", dtype=dtype,
                           shape=self.shape.get(im.name))  # fmt: skip
        return self.emit("Add", [self.native_of(re), scaled], name=f"{name}_complex",
                         dtype=dtype, shape=shape)  # fmt: skip

    def parts_of(self, t: gs.Tensor) -> tuple[gs.Tensor, gs.Tensor]:
        """(Re t, Im t) as real tensors of t's logical shape."""
        if t.name not in self.parts:
            self.parts[t.name] = (self.part(t, 0), self.part(t, 1))
        return self.parts[t.name]

    def part(self, t: gs.Tensor, index: int) -> gs.Tensor:
        if t.name in self.parts:
            return self.parts[t.name][index]
        dtype, shape = real_of(self.kind[t.name]), self.shape.get(t.name)
        which = ("re", "im")[index]
        if t.name in self.packed:
            p = self.packed[t.name]
            idx = self.scalar(index, np.int64, f"{t.name}_{which}_index")
            return self.emit("Gather", [p, idx], {"axis": -1}, name=f"{t.name}_{which}",
                             dtype=dtype, shape=shape)  # fmt: skip
        z = self.native_of(t)
        if index == 1:
            # Im z = Re(-i z): a cast to real keeps the real part.
            minus_i = self.scalar(-1j, self.kind[t.name], f"{t.name}_minus_i")
            z = self.emit("Mul", [z, minus_i], name=f"{t.name}_times_minus_i",
                          dtype=self.kind[t.name], shape=shape)  # fmt: skip
        return self.emit("Cast", [z], {"to": onnx_of(dtype)}, name=f"{t.name}_{which}",
                         dtype=dtype, shape=shape)  # fmt: skip

    def packed_of(self, t: gs.Tensor) -> gs.Tensor:
        """view_as_real(t): the pair on a new last axis."""
        if t.name in self.packed:
            return self.packed[t.name]
        dtype, shape = real_of(self.kind[t.name]), self.shape.get(t.name)
        if self.opset.get("", 0) >= 13:
            axes, attrs = [self.scalar([-1], np.int64, f"{t.name}_last_axis")], {}
        else:
            axes, attrs = [], {"axes": [-1]}
        parts = [
            self.emit(
                "Unsqueeze",
                [p, *axes],
                attrs,
                name=f"{p.name}_unsqueezed",
                dtype=dtype,
                shape=None if shape is None else [*shape, 1],
            )  # fmt: skip
            for p in self.parts_of(t)
        ]
        p = self.emit("Concat", parts, {"axis": -1}, name=f"{t.name}_packed", dtype=dtype,
                      shape=None if shape is None else [*shape, 2])  # fmt: skip
        self.packed[t.name] = p
        return p

    # ---- nodes -----------------------------------------------------------------------

    def _visit(self, node: gs.Node) -> None:
        kinds = [self.kind.get(t.name) if t.name else None for t in node.inputs]
        if _is_tensorflow(node):
            if self.mixed:
                self._tensorflow(node)
            else:
                self.conflict(node, f"{node.op} is TensorFlow's op, left as it is; no ONNX op")
            return
        if node.op == "If":
            self._branches(node)
            return
        why = self._body_to_read(node, kinds)
        if why is not None:
            if not self.mixed:
                self.conflict(node, why)
            elif node.op == "Loop":
                self._loop(node, kinds)
                return
            else:
                self.unread.append(node)
        if not self.mixed and node.op == "Gather" and self._magnitude_part(node) is not None:
            self.conflict(node, "tf2onnx's magnitude, which reads its pair on a leading axis")
        if self.mixed and self._read(node, kinds):
            return
        if not any(kinds):
            self._plain(node)
            return
        self._native(node, kinds)

    def _plain(self, node: gs.Node) -> None:
        """A node that reads no complex value: as written."""
        if node.op == "DFT" or node.op == "Gather" and self._splits_last_axis(node):
            self.splits = True
        if any(t.name in self.from_parts for t in node.inputs):
            self.from_parts.update(t.name for t in node.outputs)
        self._cast_back(node)
        source = registry.get(node.op) if node.op in SOURCES else None
        if source is not None and is_default_domain(node.domain):  # (none: analysis refuses)
            kinds = source.infer(node, [None] * len(node.inputs))
            for out, kind in zip(node.outputs, kinds, strict=True):
                if kind is not None:
                    self.kind[out.name] = np.dtype(kind)
                    self.native[out.name] = out
        self._infer(node)

    def _cast_back(self, node: gs.Node) -> None:
        """Warns of a complex value cast to real, moved (padded, sliced, ...) but not
        computed on, and cast back to complex: the imaginary part is lost. tf2onnx wraps
        its real-only converters so (a complex Pad). Cast to real and straight back, with
        nothing between, is Re z as a complex value: an idiom, and no warning."""
        kept = next((self.cast_real[t.name] for t in node.inputs if t.name in self.cast_real), None)
        if kept is None:
            return
        cast, moved = kept
        if node.op == "Cast" and is_complex_onnx(node.attrs["to"]) and moved:
            self.warnings.append(
                f"'{cast.name}' casts complex '{cast.inputs[0].name}' to real, '{node.name}' "
                "casts it back to complex: its imaginary part is dropped (converted as written)"
            )
        elif node.op in MOVES:
            self.cast_real.update((t.name, (cast, True)) for t in node.outputs)

    def _splits_last_axis(self, node: gs.Node) -> bool:
        """Gather(x, 0|1, axis=-1) on a real x whose last axis is 2."""
        x, idx = node.inputs
        shape, index = self.shape.get(x.name), self.constant(idx)
        if not shape or shape[-1] != 2 or index is None or index.ndim or int(index) not in (0, 1):
            return False
        return int(node.attrs.get("axis", 0)) in (-1, len(shape) - 1)

    def _native(self, node: gs.Node, kinds) -> None:
        """Any op on native complex values, a real operand promoted by the op."""
        if self.mixed:
            for t in node.inputs:
                self._wants_complex(node, t, kinds)
            self._evidence(node, kinds)
        to = np.result_type(*[k for k in kinds if k is not None])
        promoted = {}  # the walk as written reads a promoted operand, and casts none
        for i, (t, kind) in enumerate(zip(node.inputs, kinds, strict=True)):
            if kind is not None and self.mixed:
                node.inputs[i] = self.native_of(t)
            elif kind is None and node.op in PROMOTED and t.name and self.is_float(t):
                if self.mixed:
                    node.inputs[i] = self.native_of(t, to)
                else:
                    promoted[t.name] = np.dtype(to)
        if node.op == "Cast" and not is_complex_onnx(node.attrs["to"]):
            self.cast_real[node.outputs[0].name] = (node, False)
        r = registry.get(node.op, node.domain or "")
        outs = r.infer(node, kinds) if r is not None else registry.complex_like_inputs(node, kinds)
        for out, kind in zip(node.outputs, outs, strict=True):
            if kind is not None:
                self.kind[out.name] = np.dtype(kind)
                self.native[out.name] = out
        self._infer(node, promoted)

    def _loop(self, node: gs.Node, kinds) -> None:
        """A Loop whose body mixes the forms too: its body read the same way, with the
        state the node gives it, and the state and scan outputs it gives back."""
        body = node.attrs["body"]
        given = {b.name: k for b, k in zip(body.inputs[2:], kinds[2:], strict=False) if k}
        inner = _Walk(body, self.opset, True, given, parent=self)
        self._adopt(inner, f"{node.name} body")
        for i, (t, kind) in enumerate(zip(node.inputs, kinds, strict=True)):
            if kind is not None:
                node.inputs[i] = self.native_of(t)
        states = len(node.inputs) - 2
        results = self._body_results(node, inner)
        for j, (out, result) in enumerate(zip(node.outputs, body.outputs[1:], strict=False)):
            kind = inner.kind.get(result.name)
            if j < states and (kind is None) != (kinds[2 + j] is None):
                self.conflict(node, "loop state is complex on one side of the body only", out.name)
            dtype, shape = results[j] or (kind, None)
            if kind is not None:
                self._set_native(out, kind, shape)
            elif dtype is not None:
                self._record(out, dtype, shape)

    def _branches(self, node: gs.Node) -> None:
        """An If: each branch read the same way, with the values it captures. An output
        is complex where the branches' are."""
        walks = []
        for key in ("then_branch", "else_branch"):
            inner = _Walk(node.attrs[key], self.opset, self.mixed, {}, parent=self)
            self._adopt(inner, f"{node.name} {key}")
            walks.append(inner)
        then, other = walks
        for out, a, b in zip(node.outputs, then.output_names, other.output_names, strict=False):
            kinds = then.kind.get(a), other.kind.get(b)
            reals = then.elem.get(a), other.elem.get(b)
            known = [k is not None or r is not None for k, r in zip(kinds, reals, strict=True)]
            if all(known) and (kinds[0] is None) != (kinds[1] is None):
                self.conflict(node, "complex in one branch only", out.name)
            shape = _merged(then.shape.get(a), other.shape.get(b))
            if kinds[0] or kinds[1]:
                self._set_native(out, kinds[0] or kinds[1], shape)
            elif reals[0] is not None:
                self._record(out, reals[0], shape)

    def _adopt(self, inner: _Walk, where: str) -> None:
        """What the walk of a body or a branch found, as this walk's."""
        self.bodies += [inner, *inner.bodies]
        self.failures.update(inner.failures)
        self.conflicts += inner.conflicts
        self.readings += [f"{where}: {line}" for line in inner.readings]
        self.readings += [f"{where}: {io} declared packed" for io in inner.packed_io]
        self.unread += inner.unread
        self.axis0 += inner.axis0
        self.warnings += [f"{where}: {line}" for line in inner.warnings]
        self.evidence += inner.evidence
        self.weak += inner.weak
        self.splits |= inner.splits

    def _body_to_read(self, node: gs.Node, kinds) -> str | None:
        """Why the body of a Loop or Scan must be read too, not taken as written: it
        holds TensorFlow's ops, or declares packed the complex values it is given."""
        if node.op not in ("Loop", "Scan"):
            return None
        if _holds_tensorflow(node):
            return "its body holds TensorFlow's ops, left as they are"
        if self._mixed_body(node, kinds):
            return "its body declares packed the complex values it is given"
        return None

    def _mixed_body(self, node: gs.Node, kinds) -> bool:
        """True when the body declares real an input the node gives it complex: the
        exporter's packed declaration, inside a body."""
        body = node.attrs["body"]
        given = kinds[2:] if node.op == "Loop" else kinds
        skip = 2 if node.op == "Loop" else 0
        for t, kind in zip(body.inputs[skip:], given, strict=False):
            if kind is not None and t.dtype is not None and not is_complex_np(t.dtype):
                return True
        return False

    def _evidence(self, node: gs.Node, kinds) -> None:
        """Notes an op that reads a pair the graph stacked itself, where the packed
        tensor and the complex value it holds give different results. Ops that give the
        same on both (a sum, a real scale) keep their result packed as written.

        A stacked pair is evidence. A real input split by a Gather, or a DFT's output,
        read whole is weaker: a real graph may do that too, so it counts only in a
        graph that stacks pairs itself."""
        packed = [t for t, k in zip(node.inputs, kinds, strict=True)
                  if k is not None and t.name in self.as_packed]  # fmt: skip
        if not packed:
            return
        several = sum(k is not None for k in kinds) > 1
        scales = node.op in ("Mul", "Div") and not several and kinds[-1] is None
        layouts = {self.as_packed.get(t.name) for t, k in zip(node.inputs, kinds, strict=True) if k}
        built = [t for t in packed if t.name in self.built]
        if node.op in ("Neg", "Identity", "Add", "Sub") or scales:
            if len(layouts) == 1 and None not in layouts:
                self.as_packed.update((t.name, layouts.pop()) for t in node.outputs)
                self.built.update(t.name for t in node.outputs if built)
        elif node.op in DIFFERS or node.op in ("Mul", "Div"):
            (self.evidence if built else self.weak).append(node.name)
            name = (built or packed)[0].name
            self.readings.append(f"{node.name} ({node.op}): reads '{name}' as complex")

    def _wants_complex(self, node: gs.Node, t: gs.Tensor, kinds) -> None:
        """Notes a graph input declared real S + [2] that meets a complex operand."""
        if t.name in self.kind or t not in self.graph.inputs or not any(kinds):
            return
        shape = self.shape.get(t.name)
        if shape and shape[-1] == 2 and self.is_float(t) and node.op in registry.supported_ops():
            self.wants_complex.add(t.name)

    def _read(self, node: gs.Node, kinds) -> bool:
        """Applies the exporter's readings to `node`; False when none applies."""
        if node.op == "Gather" and kinds[0] is not None:
            return self._channel(node)
        if node.op == "Pow" and kinds[0] is None and kinds[1] is not None:
            return self._real_exponent(node)
        if node.op == "Concat":
            return self._pair(node)
        if node.op == "DFT":
            return self._dft(node, kinds)
        if node.op == "Reshape" and kinds[0] is not None:
            return self._reshape_packed(node)
        if node.op in REAL_VALUED and kinds[0] is not None:
            self._real_valued(node)
            return True
        if node.op == "Cast" and kinds[0] is not None and is_complex_onnx(node.attrs["to"]):
            z = node.inputs[0]
            if np_of(node.attrs["to"]) != self.kind[z.name]:
                return False
            self._become(node, "Identity", [self.native_of(z)])
            self._set_native(node.outputs[0], self.kind[z.name], self.shape.get(z.name))
            self.readings.append(f"{node.name} (Cast): '{z.name}' is complex already")
            return True
        return False

    def _emit_dft(self, signal, axis: int, name: str, length=None, **attrs) -> gs.Tensor:
        """DFT of a [..., 1] or [..., 2] tensor along `axis`, in the opset's spelling."""
        dtype = self.elem.get(signal.name, np.dtype(np.float32))
        extra = [self.scalar(length, np.int64, f"{name}_length") if length is not None else None]
        if self.opset.get("", 0) >= 20:
            extra.append(self.scalar(axis, np.int64, f"{name}_axis"))
        else:
            attrs["axis"] = axis
        inputs = [signal, *extra]
        while inputs[-1] is None:
            inputs.pop()
        inputs = [t if t is not None else gs.Variable.empty() for t in inputs]
        return self.emit("DFT", inputs, attrs, name=name, dtype=dtype, shape=None)

    def _tensorflow(self, node: gs.Node) -> None:
        """TensorFlow's own complex ops, which tf2onnx writes as they are: their meaning
        in TensorFlow, spelled in ONNX."""
        op, x, out = node.op, node.inputs[0], node.outputs[0]
        shape, rank = self.shape.get(x.name), self.rank(x)
        real_in = op == "Complex" or op.startswith("RFFT")
        for t in node.inputs[: 2 if op == "Complex" else 1]:
            if (self.elem.get(t.name) in COMPLEX_OF) if real_in else (t.name in self.kind):
                continue
            want = "a float32 or float64 tensor" if real_in else "a complex value"
            self.conflict(node, f"{op} takes {want}, and '{t.name}' is not one", t.name)
            return
        if op in TRANSFORMS and rank is None:
            self.conflict(node, f"{op} of a value of unknown rank", x.name)
            return
        if op == "Complex":
            re, im = node.inputs
            kind = COMPLEX_OF[self.elem[re.name]]
            shape = shape if shape == self.shape.get(im.name) else None  # broadcast
            result = self.combine(re, im, kind, shape, out.name)
        elif op in ("Real", "Imag"):
            result = self.part(x, int(op == "Imag"))
        elif op == "Conj":
            result = self._conj(x, out.name)
        elif op == "ConjugateTranspose":
            perm = self.constant(node.inputs[1])
            if perm is None or rank is None or sorted(perm.reshape(-1)) != list(range(rank)):
                self.conflict(node, f"{op}'s perm is not a constant permutation of {rank} axes",
                              node.inputs[1].name)  # fmt: skip
                return
            perm = [int(p) for p in perm.reshape(-1)]
            shape = None if shape is None else [shape[p] for p in perm]
            result = self.emit("Transpose", [self._conj(x, out.name)], {"perm": perm},
                               name=f"{out.name}_transposed", dtype=self.kind[x.name], shape=shape)  # fmt: skip
        elif op == "ComplexAbs":
            # The Abs rule computes |z| as hypot does: no overflow where re^2 + im^2 would.
            result = self.emit("Abs", [self.native_of(x)], name=f"{out.name}_abs",
                               dtype=real_of(self.kind[x.name]), shape=shape)  # fmt: skip
        elif op == "Angle":
            # arg z = Im log z, which is atan2(Im z, Re z), signed zeros included.
            log = self.emit("Log", [self._off_zero(x, out.name)], name=f"{out.name}_log",
                            dtype=self.kind[x.name], shape=shape)  # fmt: skip
            result = self.part(log, 1)
        elif op in TRANSFORMS and not op.startswith(("RFFT", "IRFFT")):
            result = self.packed_of(x)
            for axis in range(rank - TRANSFORMS[op], rank):
                result = self._emit_dft(result, axis, f"{out.name}_dft", inverse=int(op[0] == "I"))
        else:  # RFFT, IRFFT and their 2-D and 3-D forms, with their fft_length
            k = TRANSFORMS[op]
            length = self.constant(node.inputs[1])
            if length is None or length.size != k:
                self.conflict(
                    node, f"{op}'s fft_length is not a constant of {k}", node.inputs[1].name
                )
                return
            *outer, n = (int(v) for v in length.reshape(-1))
            axes = range(rank - k, rank - 1)
            if op.startswith("RFFT"):
                signal = self.emit("Unsqueeze", [x, self.scalar([-1], np.int64, f"{out.name}_axes")],
                                   name=f"{out.name}_signal", dtype=self.elem[x.name], shape=None)  # fmt: skip
                result = self._emit_dft(signal, rank - 1, f"{out.name}_dft", length=n, onesided=1)
                for axis, m in zip(axes, outer, strict=True):
                    result = self._emit_dft(result, axis, f"{out.name}_dft", length=m)
                result = self._real_bins(result, [*outer, n], out.name)
                shape = None if shape is None else [*shape[: rank - k], *outer, n // 2 + 1]
            else:
                # onnx's one-sided inverse is numpy's irfft: the imaginary parts of the
                # DC and Nyquist bins are ignored, as TensorFlow ignores them.
                result = self.packed_of(x)
                for axis, m in zip(axes, outer, strict=True):
                    result = self._emit_dft(result, axis, f"{out.name}_dft", length=m, inverse=1)
                result = self._emit_dft(result, rank - 1, f"{out.name}_dft", length=n,
                                        inverse=1, onesided=1)  # fmt: skip
                result = self.emit("Squeeze", [result, self.scalar([-1], np.int64, f"{out.name}_axes")],
                                   name=f"{out.name}_real", dtype=real_of(self.kind[x.name]), shape=None)  # fmt: skip
                shape = None if shape is None else [*shape[: rank - k], *outer, n]
        self._become(node, "Identity", [result])
        packed = op in TRANSFORMS and not op.startswith("IRFFT")
        if shape is None and self.shape.get(result.name) is not None:
            # what the emitted nodes inferred (a broadcast, an unknown input dim)
            shape = self.shape[result.name][: -1 if packed else None]
        if packed:
            kind = COMPLEX_OF[self.elem[result.name]]
            self.kind[out.name], self.shape[out.name] = kind, shape
            self.packed[out.name], self.as_packed[out.name] = out, "last"
        elif op in ("Complex", "Conj", "ConjugateTranspose"):
            self._set_native(out, self.kind[result.name], shape)
        else:
            self.elem[out.name], self.shape[out.name] = self.elem[result.name], shape
        self.readings.append(f"{node.name} ({op}): TensorFlow's {op}, left as it is by tf2onnx")

    def _off_zero(self, z: gs.Tensor, name: str) -> gs.Tensor:
        """z, with a signed zero z moved to (±1, Im z) by the sign of Re z: the same
        angle, atan2's with signed zeros, where Im log z would be Im(-inf + i arg) and
        its product with -i a NaN.

            z - (z = 0 ? (Re z is -0 ? 1 : -1) : 0)

        Subtracting a real value (+0 i) keeps every imaginary part as it is, -0 included,
        where adding one would turn -0 into +0."""
        kind, shape = self.kind[z.name], self.shape.get(z.name)
        real = real_of(kind)
        # The sign bit of Re z, -0 included: 1 / -0 is -inf.
        inverse = self.emit("Reciprocal", [self.part(z, 0)], name=f"{name}_inverse_re",
                            dtype=real, shape=shape)  # fmt: skip
        negative = self.emit("Less", [inverse, self.scalar(0, real, f"{name}_zero")],
                             name=f"{name}_negative", dtype=np.dtype(bool), shape=shape)  # fmt: skip
        zero = self.emit("Equal", [self.native_of(z), self.scalar(0, kind, f"{name}_origin")],
                         name=f"{name}_at_zero", dtype=np.dtype(bool), shape=shape)  # fmt: skip
        unit = self.emit("Where", [negative, *(self.scalar(v, real, f"{name}_unit") for v in (1, -1))],
                         name=f"{name}_unit", dtype=real, shape=shape)  # fmt: skip
        step = self.emit("Where", [zero, unit, self.scalar(0, real, f"{name}_none")],
                         name=f"{name}_step", dtype=real, shape=shape)  # fmt: skip
        return self.emit("Sub", [self.native_of(z), self.native_of(step, kind)],
                         name=f"{name}_off_zero", dtype=kind, shape=shape)  # fmt: skip

    def _real_bins(self, packed: gs.Tensor, lengths: list[int], name: str) -> gs.Tensor:
        """A real signal's spectrum, packed, with +0 imaginary parts at the bins that are
        real (every transformed index at 0 or at a Nyquist bin), as TensorFlow gives them.
        Computed, they may come out -0 or a rounding error below it, and the angle of a
        negative real bin would jump by 2 pi."""
        *outer, n = lengths
        real = [np.isin(np.arange(m), [0, m // 2] if m % 2 == 0 else [0]) for m in outer]
        real.append(np.isin(np.arange(n // 2 + 1), [0, n // 2] if n % 2 == 0 else [0]))
        both = real[0]
        for r in real[1:]:
            both = np.logical_and.outer(both, r)
        mask = np.stack([np.zeros_like(both), both], axis=-1)
        dtype = self.elem.get(packed.name, np.dtype(np.float32))
        where = gs.Constant(self.unique(f"{name}_real_bins"), mask)
        zero = self.scalar(0, dtype, f"{name}_zero")
        return self.emit("Where", [where, zero, packed], name=f"{name}_signed", dtype=dtype,
                         shape=None)  # fmt: skip

    def _conj(self, z: gs.Tensor, name: str) -> gs.Tensor:
        re, im = self.parts_of(z)
        minus = self.emit("Neg", [im], name=f"{name}_minus_im", dtype=self.elem[im.name],
                          shape=self.shape.get(z.name))  # fmt: skip
        return self.combine(re, minus, self.kind[z.name], self.shape.get(z.name), name)

    def _real_valued(self, node: gs.Node) -> None:
        """ReduceL1(z) and the like: the real value, which ONNX types complex."""
        z, out = node.inputs[0], node.outputs[0]
        kind = self.kind[z.name]
        node.inputs[0] = self.native_of(z)
        value = gs.Variable(self.unique(f"{out.name}_complex"), dtype=kind)
        node.outputs[0] = value
        self._set_native(value, kind, None)
        self._infer(node)
        real = real_of(kind)
        cast = gs.Node("Cast", name=self.unique(f"{out.name}_real"), attrs={"to": onnx_of(real)})
        cast.inputs, cast.outputs = [value], [out]
        self.graph.nodes.append(cast)
        self.elem[out.name], self.shape[out.name] = real, self.shape.get(value.name)
        self.readings.append(f"{node.name} ({node.op}): a real value, typed complex by ONNX")

    def _become(self, node: gs.Node, op: str, inputs: list[gs.Tensor]) -> None:
        node.op, node.attrs, node.domain = op, {}, None
        node.inputs.clear()
        node.inputs.extend(inputs)

    def _set_native(self, out: gs.Tensor, dtype: np.dtype, shape: Shape) -> None:
        self.kind[out.name] = np.dtype(dtype)
        self.native[out.name] = out
        self.shape[out.name] = shape

    def _real_exponent(self, node: gs.Node) -> bool:
        """Pow(x, w) of a real x, w a complex constant with no imaginary part (tf2onnx's
        2+0j of a magnitude): the real power."""
        base, w = node.inputs
        value = self.constant(w)
        if value is None or np.any(value.imag):
            return False
        real = value.real.astype(self.elem.get(base.name, np.float32))
        node.inputs[1] = gs.Constant(self.unique(f"{w.name}_real"), real)
        self._record(node.inputs[1], real.dtype, list(real.shape))
        self.readings.append(f"{node.name} (Pow): exponent '{w.name}' is real")
        self._plain(node)
        return True

    def _channel(self, node: gs.Node) -> bool:
        """Gather(z, 0|1, axis=rank z): Re z or Im z."""
        z, idx = node.inputs
        value = self.constant(idx)
        index = self._magnitude_part(node)
        if index is not None:
            return self._leading_part(node, z, index)
        if value is None or value.ndim != 0 or int(value) not in (0, 1):
            return False
        axis = int(node.attrs.get("axis", 0))
        rank = self.rank(z)
        on_pair = rank is not None and axis == rank
        on_pair0 = axis == 0 and self.as_packed.get(z.name) == "first"
        if not (on_pair or on_pair0):
            return False
        part = self.part(z, int(value))
        self._become(node, "Identity", [part])
        out = node.outputs[0]
        self.elem[out.name] = real_of(self.kind[z.name])
        self.shape[out.name] = self.shape.get(z.name)
        self.from_parts.add(out.name)
        self.readings.append(
            f"{node.name} (Gather): {('Re', 'Im')[int(value)]} '{z.name}' (axis {axis} is its pair)"
        )
        return True

    def _magnitude_part(self, node: gs.Node) -> int | None:
        """i, when `node` is Gather(z, [i], axis=0) of a complex z in tf2onnx's magnitude

            Sqrt(Squeeze(Pow(Gather(z, [0]), 2+0j) + Pow(Gather(z, [1]), 2+0j), 0))

        which reads z as tf2onnx's own packed layout, the pair on a leading axis. Its
        converter writes this for a raw FFT's output, and for any complex value whose
        leading dim is 2; a native reading of it may type-check, but means another thing."""
        if node.name in self.magnitude:
            return self.magnitude[node.name]
        z, idx = node.inputs
        index = self.constant(idx)
        if (
            z.name not in self.kind
            or int(node.attrs.get("axis", 0)) != 0
            or index is None
            or index.shape != (1,)
            or int(index[0]) not in (0, 1)
        ):
            return None
        i = int(index[0])
        squares = [self._squared(t) for t in self._summed_with(node.outputs[0])]
        other = [g for g in squares if g is not None and g is not node and g.inputs[0] is z]
        other_index = self.constant(other[0].inputs[1]) if other else None
        if other_index is None or other_index.size != 1 or int(other_index.ravel()[0]) != 1 - i:
            return None
        self.magnitude[other[0].name] = 1 - i
        return i

    def _summed_with(self, part: gs.Tensor) -> list[gs.Tensor]:
        """The two operands of Sqrt(Squeeze(Add(Pow(part, 2), y), 0)), when that is
        `part`'s one use. Without the root and the Squeeze, a sum of squares of the
        rows is the complex value it says: no magnitude."""
        if len(part.outputs) != 1:
            return []
        square = part.outputs[0].outputs[0]
        if self._squared(square) is None or [n.op for n in square.outputs] != ["Add"]:
            return []
        total = square.outputs[0].outputs[0]
        squeeze = total.outputs[0] if [n.op for n in total.outputs] == ["Squeeze"] else None
        if squeeze is None or not self._squeezes_first(squeeze):
            return []
        if [n.op for n in squeeze.outputs[0].outputs] != ["Sqrt"]:
            return []
        return list(square.outputs[0].inputs)

    def _squeezes_first(self, node: gs.Node) -> bool:
        """True for a Squeeze of axis 0 alone."""
        return node_axes(self, node) == ("list", [0])

    def _squared(self, t: gs.Tensor) -> gs.Node | None:
        """The Gather node g when `t` = Pow(g's output, 2) with a 2 or 2+0j exponent."""
        if not isinstance(t, gs.Variable) or len(t.inputs) != 1 or t.inputs[0].op != "Pow":
            return None
        base, w = t.inputs[0].inputs
        value = self.constant(w)
        if value is None or value.size != 1 or value.reshape(-1)[0] != 2:
            return None
        if len(base.inputs) != 1 or base.inputs[0].op != "Gather":
            return None
        return base.inputs[0]

    def _leading_part(self, node: gs.Node, z: gs.Tensor, index: int) -> bool:
        """Re z or Im z on a leading axis of 1: the Gather of tf2onnx's magnitude."""
        part = self.part(z, index)
        self._become(node, "Unsqueeze", [part, self.scalar([0], np.int64, f"{node.name}_axes")])
        out = node.outputs[0]
        shape = self.shape.get(z.name)
        self.elem[out.name] = real_of(self.kind[z.name])
        self.shape[out.name] = None if shape is None else [1, *shape]
        self.readings.append(
            f"{node.name} (Gather): {('Re', 'Im')[index]} '{z.name}', tf2onnx's pair on axis 0"
        )
        return True

    def _unsqueezed(self, t: gs.Tensor) -> tuple[gs.Tensor, int] | None:
        """(x, axis) when `t` = Unsqueeze(x) on one new axis, the axis counted from 0."""
        found = unsqueezed(self, t)
        rank = None if found is None else self.rank(found[0])
        if rank is None:
            return None
        x, axis = found
        return x, axis + rank + 1 if axis < 0 else axis

    def _pair(self, node: gs.Node) -> bool:
        """Concat(Unsqueeze(a, k), Unsqueeze(b, k), axis=k): a + i b."""
        if len(node.inputs) != 2:
            return False
        found = [self._unsqueezed(t) for t in node.inputs]
        if None in found:
            return False
        (a, ka), (b, kb) = found
        rank = self.rank(a)
        if (
            rank is None
            or rank != self.rank(b)
            or ka != kb
            or not (self.is_float(a) and self.is_float(b))
        ):
            return False
        axis = int(node.attrs["axis"])
        axis = axis + rank + 1 if axis < 0 else axis
        complex_parts = a.name in self.kind or b.name in self.kind
        last = axis == ka == rank
        first = axis == ka == 0 and (complex_parts or {a.name, b.name} & self.from_parts)
        if not (last or first) or self._reduced_along(node.outputs[0], axis):
            return False
        dtype = next(
            (self.kind[t.name] for t in (a, b) if t.name in self.kind),
            COMPLEX_OF.get(self.elem.get(a.name), np.dtype(np.complex64)),
        )
        out = node.outputs[0]
        shape = self.shape.get(a.name)
        where = "the last axis" if last else "axis 0"
        if complex_parts:
            zero = self._zero_scaled(b, a)
            z = self.native_of(a) if zero else self.combine(a, b, dtype, shape, out.name)
            self._become(node, "Identity", [z])
            self._set_native(out, dtype, shape)
            how = f"'{a.name}' + i 0" if zero else f"'{a.name}' + i '{b.name}'"
            self.readings.append(f"{node.name} (Concat): {how}, parts stacked on {where}")
        else:
            self.kind[out.name] = dtype
            self.shape[out.name] = shape
            self.parts[out.name] = (a, b)
            if last:
                self.packed[out.name] = out
            self.as_packed[out.name] = "last" if last else "first"
            self.built.add(out.name)
            self.readings.append(
                f"{node.name} (Concat): '{a.name}' + i '{b.name}', stacked on {where}"
            )
        if not last and rank > 0:
            self.axis0.append(node.name)
        return True

    def _reduced_along(self, t: gs.Tensor, axis: int) -> bool:
        """True when a consumer reduces `t` along `axis` by name (ReduceSum(axes=[-1]),
        Softmax, ...): a real stack, whose two halves are summed or compared, not a
        complex pair. The exporter never reduces over the axis it packs a pair on."""
        rank = len(self.shape.get(t.name) or []) + 1
        for node in t.outputs:
            if not (node.op.startswith("Reduce") or node.op in AXIS_OPS):
                continue
            axes = node.attrs.get("axes", node.attrs.get("axis"))
            if axes is None and len(node.inputs) > 1 and node.inputs[1].name:
                axes = self.constant(node.inputs[1])
            if axes is not None and {int(a) % rank for a in np.ravel(axes)} & {axis % rank}:
                return True
        return False

    def _zero_scaled(self, b: gs.Tensor, a: gs.Tensor) -> bool:
        """True when b = a * 0: the exporter's imaginary part of a value already complex."""
        if not (isinstance(b, gs.Variable) and len(b.inputs) == 1 and b.inputs[0].op == "Mul"):
            return False
        x, y = b.inputs[0].inputs
        for w, c in ((x, y), (y, x)):
            value = self.constant(c)
            if w is a and value is not None and value.size and not np.any(value):
                return True
        return False

    def _dft(self, node: gs.Node, kinds) -> bool:
        """DFT reads its signal packed and gives a packed complex value."""
        x = node.inputs[0]
        if not self.is_float(x):
            return False  # a half-precision signal: no complex type to read it as
        if kinds[0] is not None:
            node.inputs[0] = self.packed_of(x)
        self._infer(node)
        out = node.outputs[0]
        self.readings.append(
            f"{node.name} (DFT): reads '{x.name}' packed, gives '{out.name}' packed"
        )
        shape = self.shape.get(out.name)
        dtype = self.elem.pop(out.name, None) or real_of(kinds[0] or np.complex64)
        self.kind[out.name] = COMPLEX_OF[np.dtype(dtype)]
        self.shape[out.name] = None if shape is None else shape[:-1]
        self.packed[out.name] = out
        self.as_packed[out.name] = "last"
        return True

    def _reshape_packed(self, node: gs.Node) -> bool:
        """Reshape(z, s) with s twice z's element count: reads z packed."""
        z, target = node.inputs[0], node.inputs[1]
        value = self.constant(target)
        n = _count(self.shape.get(z.name))
        if value is None or n is None or np.any(value <= 0) or node.attrs.get("allowzero"):
            return False
        if int(np.prod(value)) != 2 * n:
            return False
        node.inputs[0] = self.packed_of(z)
        self.readings.append(f"{node.name} (Reshape): reads '{z.name}' packed")
        self._infer(node)
        return True

    # ---- shapes ----------------------------------------------------------------------

    def _type_of(self, t: gs.Tensor, elem: np.dtype) -> onnx.TypeProto:
        if is_complex_np(elem):
            elem = real_of(elem)
        return helper.make_tensor_type_proto(onnx_of(elem), self.shape.get(t.name))

    def _infer(self, node: gs.Node, promoted: dict[str, np.dtype] | None = None) -> None:
        """Shapes of `node`'s outputs, logical for complex values; a contradiction when
        the node's inputs cannot agree.

        Complex values take part as real tensors of their logical shape, which is how
        they meet every shape rule of the op. `promoted` are real operands the op reads
        as complex of the type given."""
        if node.op == "DFT" and node.inputs[0].name in self.kind:
            # A native complex signal: a complex value of the same shape, unless
            # the length or one-sidedness changes it.
            same = len(node.inputs) < 2 or not node.inputs[1].name
            if same and not _onesided(node):
                self.shape[node.outputs[0].name] = self.shape.get(node.inputs[0].name)
            return
        if node.op == "Transpose" and "perm" in node.attrs:
            rank = self.rank(node.inputs[0])
            if rank is not None and len(node.attrs["perm"]) != rank:
                self.conflict(node, f"perm {list(node.attrs['perm'])} for a value of rank {rank}",
                              node.inputs[0].name)  # fmt: skip
                return
        known, values, elems = [], {}, {}
        for t in node.inputs:  # every node's: dtypes as stored, three lookups at most
            name = t.name
            if not name:
                known.append(None)
                continue
            elem = promoted.get(name) if promoted else None
            if elem is None:
                elem = self.kind.get(name)
            if elem is None:
                elem = self.elem.get(name)
                if elem is None:
                    return
            elems[name] = elem
            shape = self.shape.get(name)
            known.append((elem.str, None if shape is None else tuple(shape)))
            if elem.kind in "iu":
                value = self.constant(t)
                if value is not None:
                    values[name] = value
        # A body or an op with no schema has no key, nor is one ever stored for it.
        key = _inference_key(node, known, [values.get(t.name) for t in node.inputs])
        if key is not None and key in self.inferred:
            self._set_inferred(node, self.inferred[key])
            return
        if gs_holds_graphs(node):
            if node.op in ("Loop", "Scan"):
                self._set_inferred(node, self._body_results(node))
            return  # an If's outputs are its branches' (`_branches`)
        domain = "" if is_default_domain(node.domain) else node.domain
        try:
            schema = onnx.defs.get_schema(node.op, self.opset.get(domain, 1), domain)
        except onnx.defs.SchemaError:
            self.failures[node.name] = f"no schema for {node.op} in domain '{domain}'"
            return
        types = {name: self._type_of(t, elems[name]) for t in node.inputs if (name := t.name)}
        data = {name: numpy_helper.from_array(v, name) for name, v in values.items()}
        proto = _real_typed(OnnxExporter.export_node(node))
        try:
            inferred = shape_inference.infer_node_outputs(
                schema, proto, types, data,
                opset_imports=[helper.make_opsetid(d, v) for d, v in self.opset.items()],
            )  # fmt: skip
        except shape_inference.InferenceError as e:
            self.conflict(node, str(e).strip().splitlines()[0])
            return
        except Exception as e:  # the checker's own errors: the node is malformed
            self.failures[node.name] = str(e).strip().splitlines()[0]
            return
        found = []
        for out in node.outputs:
            tp = inferred.get(out.name)
            if tp is None or not tp.tensor_type.elem_type:
                found.append(None)
                continue
            tt = tp.tensor_type
            shape = None
            if tt.HasField("shape"):
                shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                         for d in tt.shape.dim]  # fmt: skip
            found.append((np.dtype(np_of(tt.elem_type)), shape))
        if key is not None:
            self.inferred[key] = found
        self._set_inferred(node, found)

    def _body_results(self, node: gs.Node, inner: _Walk | None = None) -> list:
        """(dtype, shape) of each output of a Loop or Scan, from what its body gives
        back: a state as it is, a scan output stacked on a new axis. From the walk of
        the body where one read it, else from the body's declarations."""
        body = node.attrs["body"]
        results = body.outputs[1:] if node.op == "Loop" else body.outputs
        states = len(node.inputs) - (2 if node.op == "Loop" else node.attrs["num_scan_inputs"])
        axes = list(node.attrs.get("scan_output_axes", []))
        found = []
        for j, result in enumerate(results[: len(node.outputs)]):
            dtype, shape = _declared(result)
            if inner is not None and inner._typed(result):
                dtype = inner.kind.get(result.name, inner.elem.get(result.name))
                shape = inner.shape[result.name]
            if dtype is None or shape is None:
                found.append(None)
                continue
            if j >= states:
                axis = axes[j - states] if j - states < len(axes) else 0
                axis = axis % (len(shape) + 1)
                shape = [*shape[:axis], None, *shape[axis:]]
            found.append((dtype, shape))
        return found

    def _set_inferred(self, node: gs.Node, found: list) -> None:
        """Records the (dtype, shape) inferred for each output, None where unknown."""
        for out, inferred in zip(node.outputs, found, strict=False):
            if inferred is None:
                continue
            dtype, shape = inferred
            shape = None if shape is None else list(shape)
            if out.name in self.kind:
                self.shape[out.name] = shape
            else:  # a subgraph's declared complex output is complex here too
                self._record(out, dtype, shape)
        self._fold(node)

    def _fold(self, node: gs.Node) -> None:
        """Computes the small integer value `node` makes from known ones (a shape, an
        index, a length): exporters spell a shape as arithmetic on constants, and a
        reading needs its value (a Reshape's target, a Slice's bounds)."""
        if node.op not in FOLDED or len(node.outputs) != 1:
            return
        out = node.outputs[0]
        if self.elem.get(out.name, np.dtype(np.float32)).kind not in "iu":
            return
        if node.op == "Shape":
            shape = self.shape.get(node.inputs[0].name)
            if shape is None or not all(isinstance(d, int) for d in shape):
                return
            dims = np.array(shape, np.int64)
            start, end = node.attrs.get("start", 0), node.attrs.get("end")
            self.folded[out.name] = dims[start:end]
            return
        values = {t.name: self.constant(t) for t in node.inputs if t.name}
        if any(v is None for v in values.values()):
            return
        found = evaluate(OnnxExporter.export_node(node), values, self.opset.get("", 1))
        if found is not None and np.asarray(found[0]).size <= MAX_READ_ELEMENTS:
            self.folded[out.name] = np.asarray(found[0])

    # ---- outputs ---------------------------------------------------------------------

    def _outputs(self) -> None:
        for i, t in enumerate(self.graph.outputs):
            dtype, declared = self.declared_outputs[t.name]
            shape = self.shape.get(t.name)
            if t.name not in self.kind:
                if t.name not in self.elem:
                    continue  # made by an op whose outputs this walk cannot know
                if dtype is not None and is_complex_np(dtype):
                    self.conflict(t.inputs[0] if t.inputs else None,
                                  "declared complex, computed real", t.name)  # fmt: skip
                elif not _dims_equal(shape, declared):
                    self.conflict(t.inputs[0] if t.inputs else None,
                                  f"computed shape {shape}, declared {declared}", t.name)  # fmt: skip
                continue
            kind = self.kind[t.name]
            if dtype is not None and not is_complex_np(dtype):
                rank = None if shape is None else len(shape)
                if not self.mixed:
                    self.conflict(t.inputs[0] if t.inputs else None,
                                  f"complex of shape {shape}, declared real {declared}", t.name)  # fmt: skip
                    continue
                packed = declared is not None and declared[-1:] == [2]
                if packed and rank in (None, len(declared) - 1):
                    declared = declared[:-1]
                    self.packed_io.append(f"output '{t.name}'")
                elif declared is None or rank is None or rank == len(declared):
                    # Declared by its logical shape alone: written packed, S + [2].
                    self.packed_io.append(f"output '{t.name}' (declared {declared}, complex)")
                else:
                    self.conflict(t.inputs[0] if t.inputs else None,
                                  f"complex of shape {shape}, declared real {declared}", t.name)  # fmt: skip
                    continue
            if not _dims_equal(shape, declared):
                self.conflict(t.inputs[0] if t.inputs else None,
                              f"computed shape {shape}, declared {declared}", t.name)  # fmt: skip
            value = self.native_of(t)
            if value is not t:
                t.name = self.unique(f"{t.name}_packed")
                self._rename(t, self.output_names[i])
                out = gs.Variable(self.output_names[i], dtype=kind, shape=declared)
                node = gs.Node("Identity", name=self.unique(f"{out.name}_identity"))
                node.inputs, node.outputs = [value], [out]
                self.graph.nodes.append(node)
                self.graph.outputs[i] = out
            elif isinstance(t, gs.Variable):
                self._keep_label(t)
                t.dtype, t.shape = kind, declared

    def _rename(self, t: gs.Tensor, was: str) -> None:
        """Keeps what the walk knows of `t` under its new name."""
        for known in (self.kind, self.elem, self.shape, self.native, self.packed, self.parts):
            if was in known:
                known[t.name] = known[was]

    def untyped(self, rank: bool = True) -> list[tuple[gs.Node, gs.Tensor]]:
        """Each value this walk left without a type (or, with `rank`, a rank) although
        it knew those of every input of the node that makes it: where inference failed
        first (what follows it is unknown for that reason alone)."""
        found = []
        for node in self.graph.nodes:
            if any(t.name and not self._typed(t, rank) for t in node.inputs):
                continue
            found += [(node, t) for t in node.outputs if t.name and not self._typed(t, rank)]
        return found

    def _typed(self, t: gs.Tensor, rank: bool = True) -> bool:
        known = t.name in self.kind or t.name in self.elem
        return known and (not rank or self.shape.get(t.name) is not None)

    def packed_inputs(self) -> set[str]:
        """Real inputs declared with a trailing 2: each may be a complex value, packed."""
        return {
            t.name
            for t in self.graph.inputs
            if t.name not in self.kind
            and self.is_float(t)
            and (self.shape.get(t.name) or [])[-1:] == [2]
        }

    def split_inputs(self) -> set[str]:
        """Inputs declared real `S + [2]` that a Gather splits on the last axis: how the
        exporter reads the parts of a complex value it packed."""
        found = set()
        for name in self.packed_inputs():
            t = self.graph.tensors()[name]
            rank = self.rank(t)
            for node in t.outputs:
                if node.op != "Gather" or node.inputs[0] is not t:
                    continue
                index = self.constant(node.inputs[1])
                axis = int(node.attrs.get("axis", 0))
                if (
                    index is not None
                    and index.ndim == 0
                    and int(index) in (0, 1)
                    and axis in (-1, rank - 1)
                ):
                    found.add(name)
        return found

    def export(self, model: onnx.ModelProto) -> onnx.ModelProto:
        """The graph as a model with `model`'s versions and metadata."""
        graphs = gs_graphs(self.graph)
        declared = {id(t) for g in graphs for t in [*g.inputs, *g.outputs]}
        for g in graphs:
            for t in g.tensors().values():
                if isinstance(t, gs.Variable) and id(t) not in declared:
                    t.dtype, t.shape = None, None
        self.graph.cleanup(remove_unused_graph_inputs=False).toposort()
        out = gs.export_onnx(self.graph, do_type_check=False)
        keep_model_fields(model, out)
        return out


def _may_read_packed(graph: gs.Graph) -> bool:
    """False when no op that computes something else on a packed tensor than on the
    complex value it holds (`DIFFERS`, Mul, Div) can read one, under any reading: then
    no reading finds evidence (`_Walk._evidence`), and a graph that runs as written
    stays as it is.

    What a reading may hold packed is the output of a two-input Concat (a pair), of a
    DFT, or a graph input declared `S + [2]`, and what Neg, Identity, Add and Sub make of
    one. True where bodies or TensorFlow's ops leave that open."""
    if any(_is_tensorflow(n) or gs_holds_graphs(n) for n in graph.nodes):
        return True
    held = [t for t in graph.inputs if (t.shape or [])[-1:] == [2]]
    held += [out for n in graph.nodes
             if n.op == "DFT" or (n.op == "Concat" and len(n.inputs) == 2)
             for out in n.outputs]  # fmt: skip
    seen = {id(t) for t in held}
    while held:
        for node in held.pop().outputs:
            if node.op in DIFFERS or node.op in ("Mul", "Div"):
                return True
            if node.op in ("Neg", "Identity", "Add", "Sub"):
                for out in node.outputs:
                    if id(out) not in seen:
                        seen.add(id(out))
                        held.append(out)
    return False


def _plainly_real(model: onnx.ModelProto) -> bool:
    """True for a model with no complex type that strict shape inference accepts, with
    no DFT, no Gather on a last axis of 2 and no TensorFlow op: nothing there for an
    exporter to have mixed. A quick pass for real models, which need no walk node by node."""
    if holds_complex(model) or any(is_tensorflow_op(n) for n in graph_nodes(model.graph)):
        return False
    try:
        inferred = shape_inference.infer_shapes(model, strict_mode=True)
    except Exception:
        return False
    g = inferred.graph
    dims = {t.name: list(t.dims) for t in g.initializer}
    for v in [*g.input, *g.value_info, *g.output]:
        if v.type.tensor_type.HasField("shape"):
            dims[v.name] = [d.dim_value or None for d in v.type.tensor_type.shape.dim]
    for node in g.node:
        if node.op_type == "DFT":
            return False
        if node.op_type == "Gather" and dims.get(node.input[0], [])[-1:] == [2]:
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            if axis in (-1, len(dims[node.input[0]]) - 1):
                return False
    return True


def _real_typed(proto: onnx.NodeProto) -> onnx.NodeProto:
    """`proto` with a complex type or tensor attribute made real of the same shape: a
    complex value takes part in shape inference as a real tensor of its logical shape,
    and some schemas (ConstantOfShape's) list no complex type."""
    for attr in proto.attribute:
        if (
            attr.name in TYPE_ATTRIBUTES
            and attr.type == onnx.AttributeProto.INT
            and is_complex_onnx(attr.i)
        ):
            attr.i = onnx_of(real_of(np_of(attr.i)))
        elif attr.type == onnx.AttributeProto.TENSOR and is_complex_onnx(attr.t.data_type):
            real = real_of(np_of(attr.t.data_type))
            attr.t.CopyFrom(numpy_helper.from_array(np.zeros(attr.t.dims, real), attr.t.name))
    return proto


_KEY_MAX_ELEMENTS = 64
"""Constant inputs and attributes of more elements than this are not put in a key:
such nodes infer their shapes each time."""


def _key_of(value):
    """`value` (an attribute, a constant input) as part of a hashable key; None when it
    is too large, or of a kind that has no key."""
    if isinstance(value, gs.Constant):
        value = value.values
    if isinstance(value, np.ndarray):
        if value.size > _KEY_MAX_ELEMENTS:
            return None
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        parts = tuple(_key_of(v) for v in value)
        return None if any(p is None for p in parts) else ("seq", parts)
    if isinstance(value, (bool, int, float, str, bytes)):
        return (type(value).__name__, value)
    return None


def _inference_key(node: gs.Node, known: list, values: list):
    """What decides the shapes `_infer` finds for `node`: its op, attributes, input
    types and shapes, and its small integer constant inputs; None when one of them
    has no key (the node is then inferred on its own)."""
    attrs = []
    for name, value in node.attrs.items():  # every node's: loops, no generators
        key = _key_of(value)
        if key is None:
            return None
        attrs.append((name, key))
    attrs.sort()
    data = []
    for value in values:
        key = None if value is None else _key_of(value)
        if key is None and value is not None:
            return None
        data.append(key)
    return (node.op, node.domain or "", len(node.outputs), tuple(attrs), tuple(known), tuple(data))


def imported(model: onnx.ModelProto) -> gs.Graph:
    """`model` in onnx-graphsurgeon as the reading as written takes it: its nodes named
    (`name_nodes`), and sorted where they are not."""
    graph = gs.import_onnx(model)
    name_nodes(graph)
    return graph if gs_sorted(graph) else graph.toposort()


def normalize(
    model: onnx.ModelProto,
    graph: gs.Graph | None = None,
    tensors: dict[str, gs.Tensor] | None = None,
) -> Normalized:
    """The native-complex model that an exporter's mixed graph means.

    Args:
        model: A loaded model.
        graph: `imported(model)`, for the reading as written: that reading only reads
            a graph, and leaves it as it found it, for the next pass to take.
        tensors: `graph.tensors()`, where the caller has it.

    Returns:
        The normalized model and what was read, or `model` itself when it reads
        consistently as written.

    Raises:
        NormalizeError: The graph contradicts itself under every reading; the first
            node where it does is named.
    """
    if _plainly_real(model):
        return Normalized(model)
    opset = opset_versions(model)

    inferred = {}  # shared by every reading: each asks the same nodes

    in_order = functools.cache(lambda: topologically_sorted(model.graph))

    def walk(mixed: bool, inputs: set[str] = frozenset()) -> _Walk:
        graph = gs.import_onnx(model)
        name_nodes(graph)  # so that every reading and refusal names its node
        declared = {t.name: t.dtype for t in graph.inputs}
        given = {name: COMPLEX_OF[np.dtype(declared[name])] for name in inputs}
        return _Walk(graph, opset, mixed, given, inferred=inferred, in_order=in_order())

    if graph is None:
        graph = imported(model)
    labels = []
    try:
        as_written = _Walk(graph, opset, False, {}, inferred=inferred, in_order=True,
                           labels=labels, tensors=tensors)  # fmt: skip
    finally:
        for t, dtype, shape in reversed(labels):  # the first kept is the one it had
            t.dtype, t.shape = dtype, shape
    unchanged = Normalized(model, warnings=as_written.warnings)
    if not as_written.conflicts and not (as_written.splits and _may_read_packed(graph)):
        return unchanged
    inputs = as_written.split_inputs()
    for _ in range(MAX_ROUNDS):
        read = walk(mixed=True, inputs=inputs)
        if read.wants_complex <= inputs:
            break
        inputs |= read.wants_complex
    packed = as_written.packed_inputs()
    if read.conflicts and packed - inputs:
        # No operand gave them away; the contradictions may: try every input that
        # could be packed as complex.
        every = walk(mixed=True, inputs=packed)
        if not every.conflicts:
            read = every
    if not as_written.conflicts:
        # It runs as written; only an op that reads a packed pair as complex says
        # the exporter meant otherwise.
        if not (read.evidence or (read.weak and read.built)) or read.conflicts:
            return unchanged
    else:
        if read.unread:
            node = read.unread[0]
            raise NormalizeError(
                "cannot read the exported graph: complex values enter its Scan body, which "
                "declares them packed; such bodies are not read",
                node=node.name, op_type=node.op,
            )  # fmt: skip
        before = {(c.node, c.tensor) for c in as_written.conflicts}
        if before <= {(c.node, c.tensor) for c in read.conflicts}:
            # The readings resolve nothing where the graph contradicts itself: whatever
            # is wrong is not an exporter's mixing, and the later stages say what it is.
            return unchanged
        if read.conflicts:
            c = read.conflicts[0]
            raise NormalizeError(
                f"no consistent reading of the exported graph: {c.message}",
                node=c.node, op_type=c.op_type, tensor=c.tensor,
            )  # fmt: skip
    if not read.changed:
        return unchanged
    _refuse_untyped(read)
    return Normalized(read.export(model), read.readings, read.packed_io, read.axis0, read.warnings)


def _refuse_untyped(walk: _Walk) -> None:
    """Refuses the reading `walk` made when it left a value without a type, or without
    a rank where inference failed on it: every later reading, pass and the reference
    run would meet it unknown, and fail further on, at another node. Names the first
    node whose inference failed. (A rank the inputs leave open, a reduction's over axes
    known at run time, is no failure.) A graph read as written is left to the passes
    after this one, which know every op's rule."""
    found = []
    for w in (walk, *walk.bodies):
        found += [(n, t) for n, t in w.untyped(rank=False)]
        found += [(n, t) for n, t in w.untyped() if n.name in walk.failures]
    if not found:
        return
    node, t = found[0]
    why = walk.failures.get(node.name, "its inputs do not determine it")
    raise NormalizeError(f"cannot tell the type and rank of '{t.name}': {why}",
                         node=node.name, op_type=node.op, tensor=t.name)  # fmt: skip


def unknown_values(model: onnx.ModelProto) -> list[str]:
    """'node: tensor' for each value of `model` (a native-complex model, as `normalize`
    writes one) whose type or rank a reading of it leaves unknown, where inference
    failed first. Empty for a model every later pass can type."""
    walk = _Walk(imported(model), opset_versions(model), False, {}, in_order=True)
    return [f"{n.name}: {t.name}" for w in (walk, *walk.bodies) for n, t in w.untyped()]
