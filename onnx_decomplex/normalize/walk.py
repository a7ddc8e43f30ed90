"""One reading of a whole graph: what it knows of each value, and how it emits.

A complex value z is known in up to three forms, each made from another on demand
and kept: native (typed complex), packed (`view_as_real z`, a real `[..., 2]`) and its
parts `(Re z, Im z)`. The readings ask for the form they read, and never build a
conversion by hand:

    native_of(z) = Re z + i Im z                 (of a real x: Cast(x, to=complex))
    parts_of(z)  = Gather(packed z, 0|1, axis=-1), or (Re z, Re(-i z)) cast to real
    packed_of(z) = Concat(Unsqueeze(Re z, -1), Unsqueeze(Im z, -1), axis=-1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from ..constants import gs_value
from ..dtypes import is_complex_np, np_of, onnx_of, real_of
from ..graphs import gs_graphs
from ..tidy import fresh_name, keep_model_fields
from . import inference, nodes
from .declared import check_outputs
from .facts import COMPLEX_OF, MAX_READ_ELEMENTS, Shape, declared


@dataclass
class Conflict:
    """Where and why the graph, so read, contradicts itself."""

    node: str | None
    op_type: str | None
    tensor: str | None
    message: str


class Walk:
    """One reading of the whole graph.

    With `mixed` off, values are what their types say and every node reads them as
    written; the walk only looks for contradictions, and changes nothing in the graph
    but the labels of values, noting in `labels` each label it changes, as it was.
    With it on, the exporters' readings apply. `given` are the inputs read as
    complex, with their type: inputs declared real `S + [2]` read as complex S, or a
    Loop body's state. A `parent` walk lends a body walk the forms of the values the
    body captures. `inferred` holds the shapes earlier walks inferred, shared;
    `in_order` says the graph's nodes are sorted already; `tensors` is
    `graph.tensors()`, where the caller has it.
    """

    def __init__(
        self,
        graph: gs.Graph,
        opset: dict[str, int],
        mixed: bool,
        given: dict[str, np.dtype],
        parent: Walk | None = None,
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
        self._findings()
        self._knowledge(parent)
        self.output_names = [t.name for t in self.graph.outputs]
        self.declared_outputs = {t.name: declared(t) for t in self.graph.outputs}
        self._sources(given, self.graph.tensors() if tensors is None else tensors)
        for node in list(self.graph.nodes):
            nodes.visit(self, node)
        check_outputs(self)

    def _findings(self) -> None:
        """What the walk reports: to `normalize`, which decides, and to the user."""
        self.conflicts: list[Conflict] = []
        self.readings: list[str] = []
        self.packed_io: list[str] = []
        self.axis0: list[str] = []
        self.wants_complex: set[str] = set()
        self.evidence: list[str] = []  # nodes that read a pair the graph stacked as complex
        self.weak: list[str] = []  # nodes that read a split input or a DFT output so
        self.unread: list[gs.Node] = []  # Scan nodes whose bodies mix the forms too
        self.warnings: list[str] = []
        self.splits = False  # a Gather reads the parts of a real [..., 2], or a DFT runs
        self.failures: dict[str, str] = {}  # why inference failed, by node
        self.bodies: list[Walk] = []  # the walks of the bodies and branches read

    def _knowledge(self, parent: Walk | None) -> None:
        """What the walk knows of values, a `parent`'s included."""
        # Complex values the graph holds packed as written: "last" ([..., 2]) or
        # "first" ([2, ...]), where the pair lies.
        self.as_packed: dict[str, str] = {}
        self.built: set[str] = set()  # of those, pairs the graph stacked itself
        # Real parts a Cast kept, by that Cast, and whether an op has moved them since
        self.cast_real: dict[str, tuple[gs.Node, bool]] = {}
        self.magnitude: dict[str, int] = {}  # Gathers of tf2onnx's magnitude, read already
        self.kind: dict[str, np.dtype] = {}  # complex values, by tensor name
        self.shape: dict[str, Shape] = {}  # logical shapes
        self.elem: dict[str, np.dtype] = {}  # real element types of real values
        self.native: dict[str, gs.Tensor] = {}
        self.packed: dict[str, gs.Tensor] = {}
        self.parts: dict[str, tuple[gs.Tensor, gs.Tensor]] = {}
        self.from_parts: set[str] = set()  # real values computed from parts of complex ones
        self.folded: dict[str, np.ndarray] = {}  # small integer values computed (`fold`)
        self.root: Walk = self if parent is None else parent.root
        self._names: set[str] | None = None  # taken, once the walk emits (see `names`)
        if parent is not None:
            for mine in ("kind", "shape", "elem", "native", "packed", "parts", "as_packed",
                         "folded"):  # fmt: skip
                getattr(self, mine).update(getattr(parent, mine))
            self.from_parts |= parent.from_parts
            self.built |= parent.built

    def child(self, graph: gs.Graph, mixed: bool, given: dict[str, np.dtype]) -> Walk:
        """The walk of a body or branch of this graph, which captures its values."""
        return Walk(graph, self.opset, mixed, given, parent=self)

    # ---- sources ---------------------------------------------------------------------

    def _sources(self, given: dict[str, np.dtype], tensors: dict[str, gs.Tensor]) -> None:
        outputs = {id(t) for t in self.graph.outputs}
        for node in self.graph.nodes:
            for t in node.outputs:
                # Exporters' labels of intermediate values are often wrong; outputs
                # keep their declarations in `declared_outputs`. (Values a body
                # captures are its enclosing graph's, and keep theirs.)
                self.keep_label(t)
                t.dtype, t.shape = None, None
                if id(t) in outputs:
                    t.dtype, t.shape = self.declared_outputs[t.name]
        for t in tensors.values():
            if isinstance(t, gs.Constant):
                self.record(t, np.dtype(t.dtype), list(t.shape))
        for t in self.graph.inputs:
            dtype, shape = declared(t)
            if t.name in given and not (dtype is not None and is_complex_np(dtype)):
                dtype = given[t.name]
                shape = None if shape is None else shape[:-1]
                t.dtype, t.shape = dtype, shape
                self.packed_io.append(f"input '{t.name}'")
                self.as_packed[t.name] = "last"
            if dtype is not None:
                self.record(t, dtype, shape)

    def keep_label(self, t: gs.Tensor) -> None:
        """Notes `t`'s label as it is, for the reading as written to put back."""
        if self.labels is not None:
            self.labels.append((t, t.dtype, t.shape))

    def record(self, t: gs.Tensor, dtype: np.dtype, shape: Shape) -> None:
        """`t` is a value of `dtype` and `shape`, complex values native."""
        self.shape[t.name] = shape
        if is_complex_np(dtype):
            self.kind[t.name] = np.dtype(dtype)
            self.native[t.name] = t
        else:
            self.elem[t.name] = np.dtype(dtype)

    def set_native(self, out: gs.Tensor, dtype: np.dtype, shape: Shape) -> None:
        """`out` is a complex value of `dtype` and `shape`, typed complex."""
        self.kind[out.name] = np.dtype(dtype)
        self.native[out.name] = out
        self.shape[out.name] = shape

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
            Conflict(node.name if node else None, node.op if node else None, tensor, message)
        )

    @property
    def changed(self) -> bool:
        return bool(self.readings or self.packed_io)

    def typed(self, t: gs.Tensor, rank: bool = True) -> bool:
        """True when the walk knows `t`'s type (and, with `rank`, its rank)."""
        known = t.name in self.kind or t.name in self.elem
        return known and (not rank or self.shape.get(t.name) is not None)

    def untyped(self, rank: bool = True) -> list[tuple[gs.Node, gs.Tensor]]:
        """Each value this walk left without a type (or, with `rank`, a rank) although
        it knew those of every input of the node that makes it: where inference failed
        first (what follows it is unknown for that reason alone)."""
        found = []
        for node in self.graph.nodes:
            if any(t.name and not self.typed(t, rank) for t in node.inputs):
                continue
            found += [(node, t) for t in node.outputs if t.name and not self.typed(t, rank)]
        return found

    # ---- nodes -----------------------------------------------------------------------

    def infer(self, node: gs.Node, promoted: dict[str, np.dtype] | None = None) -> None:
        """Shapes of `node`'s outputs (`inference.infer`)."""
        inference.infer(self, node, promoted)

    def plain(self, node: gs.Node) -> None:
        """`node`, which reads no complex value, taken as written (`nodes.plain`)."""
        nodes.plain(self, node)

    def become(self, node: gs.Node, op: str, inputs: list[gs.Tensor]) -> None:
        """`node`, in place, as `op` of `inputs` with no attributes."""
        node.op, node.attrs, node.domain = op, {}, None
        node.inputs.clear()
        node.inputs.extend(inputs)

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
        self.record(out, dtype, shape)
        if shape is None:
            self.infer(node)
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

    def combine(self, re, im, dtype, shape, name, exact: bool = False) -> gs.Tensor:
        """re + i im, for real or complex re and im; with `exact`, of real parts, signed
        zeros kept.

        Cast(re) + Cast(im) i is (re, +0) + (im 0 - 0, im + 0): in IEEE arithmetic, which
        numpy's complex ops follow, an imaginary -0 comes out +0, and the angle of
        Complex(-1, -0) +pi, where TensorFlow's is -pi. Of real parts it is instead

            (re, -0) + (-0, im),  (re, -0) = -Cast(-re),  (-0, im) = -((-Cast(im)) i)

        exact for every sign: x + -0 is x, and (y, -0) i is (-0 y + 0, y), (+0, y). It
        costs four Negs, so it is asked for where a model builds a value from its parts
        (TensorFlow's Complex), not where the walk moves a value between forms."""
        if exact and re.name in self.elem and im.name in self.elem:
            return self._exact(re, im, dtype, shape, name)
        i = self.scalar(1j, dtype, f"{name}_i")
        scaled = self.emit("Mul", [self.native_of(im), i], name=f"{name}_i_im", dtype=dtype,
                           shape=self.shape.get(im.name))  # fmt: skip
        return self.emit("Add", [self.native_of(re), scaled], name=f"{name}_complex",
                         dtype=dtype, shape=shape)  # fmt: skip

    def _exact(self, re, im, dtype, shape, name) -> gs.Tensor:
        """(re, -0) + (-0, im) of real re and im (see `combine`)."""

        def neg(t, what, kind):
            return self.emit("Neg", [t], name=f"{name}_{what}", dtype=kind,
                             shape=self.shape.get(t.name))  # fmt: skip

        real = self.elem[re.name]
        left = neg(self.native_of(neg(re, "minus_re", real), dtype), "re", dtype)
        rotated = self.emit("Mul", [neg(self.native_of(im, dtype), "minus_im", dtype),
                                    self.scalar(1j, dtype, f"{name}_i")],
                            name=f"{name}_i_im", dtype=dtype, shape=self.shape.get(im.name))  # fmt: skip
        right = neg(rotated, "im", dtype)
        return self.emit("Add", [left, right], name=f"{name}_complex", dtype=dtype, shape=shape)

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
            # Both halves at once: onnxruntime's Split and Squeeze take 0.15 to 0.26 of
            # the time of one Gather of the last axis; a half nothing reads is dropped.
            self.parts[t.name] = self._halves(self.packed[t.name], t.name, dtype, shape)
            return self.parts[t.name][index]
        z = self.native_of(t)
        if index == 1:
            # Im z = Re(-i z): a cast to real keeps the real part.
            minus_i = self.scalar(-1j, self.kind[t.name], f"{t.name}_minus_i")
            z = self.emit("Mul", [z, minus_i], name=f"{t.name}_times_minus_i",
                          dtype=self.kind[t.name], shape=shape)  # fmt: skip
        return self.emit("Cast", [z], {"to": onnx_of(dtype)}, name=f"{t.name}_{which}",
                         dtype=dtype, shape=shape)  # fmt: skip

    def _halves(self, p: gs.Tensor, name: str, dtype, shape) -> tuple[gs.Tensor, gs.Tensor]:
        """(p[..., 0], p[..., 1]): one Split of p's last axis, each half squeezed."""
        opset = self.opset.get("", 0)
        halves = [gs.Variable(self.unique(f"{name}_{w}_half"), dtype=dtype) for w in "ri"]
        split = gs.Node(
            "Split",
            name=self.unique(f"{name}_split_node"),
            attrs={"axis": -1, **({"num_outputs": 2} if opset >= 18 else {})},
        )
        split.inputs, split.outputs = [p], halves
        self.graph.nodes.append(split)
        for half in halves:
            self.record(half, dtype, None if shape is None else [*shape, 1])
        if shape is None:
            self.infer(split)
        if opset >= 13:
            axes, attrs = [self.scalar([-1], np.int64, f"{name}_last_axis")], {}
        else:
            axes, attrs = [], {"axes": [-1]}
        return tuple(
            self.emit(
                "Squeeze", [half, *axes], attrs, name=f"{name}_{which}", dtype=dtype, shape=shape
            )  # fmt: skip
            for half, which in zip(halves, ("re", "im"), strict=True)
        )

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

    # ---- the result ------------------------------------------------------------------

    def export(self, model: onnx.ModelProto) -> onnx.ModelProto:
        """The graph as a model with `model`'s versions and metadata."""
        graphs = gs_graphs(self.graph)
        io = {id(t) for g in graphs for t in [*g.inputs, *g.outputs]}
        for g in graphs:
            for t in g.tensors().values():
                if isinstance(t, gs.Variable) and id(t) not in io:
                    t.dtype, t.shape = None, None
        self.graph.cleanup(remove_unused_graph_inputs=False).toposort()
        out = gs.export_onnx(self.graph, do_type_check=False)
        keep_model_fields(model, out)
        return out
