"""A static check of a model against TensorRT's ONNX parser table (`support`).

It predicts what `OnnxParser` would reject, without TensorRT: ops the table lacks,
types an op does not take, float64 tensors, opsets out of range, and the table's
restrictions that can be read off the graph (constant axes, attribute values).
Errors are what would fail to parse; warnings are what parses with a change or
needs a newer parser. Restrictions it cannot read (shapes known only at build
time) are left to the parser itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import onnx
from onnx import TensorProto

from ..constants import node_tensor
from ..dtypes import is_complex_onnx
from ..graphs import default_opset, is_default_domain, subgraphs
from ..shapes import infer_shapes
from . import registrar
from .support import IO_TYPES, OPS, OPSETS, SINCE, SOURCE, TYPE_NAMES, UNSUPPORTED

ERROR, WARNING = "error", "warning"


@dataclass
class Finding:
    """One predicted parser problem.

    Attributes:
        level: ERROR (would fail to parse) or WARNING (parses with a change, or needs
            a newer TensorRT).
        message: What and why.
        node: The node's name, where one applies.
        op_type: Its op type.
        tensor: The tensor involved, where one applies.
    """

    level: str
    message: str
    node: str | None = None
    op_type: str | None = None
    tensor: str | None = None

    def __str__(self) -> str:
        where = []
        if self.node is not None:
            where.append(f"node '{self.node}' ({self.op_type})")
        if self.tensor is not None:
            where.append(f"tensor '{self.tensor}'")
        return ": ".join([*where, self.message])


@dataclass
class LintResult:
    """The findings, and the table they were checked against."""

    findings: list[Finding] = field(default_factory=list)
    source: str = SOURCE

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == WARNING]

    @property
    def passed(self) -> bool:
        return not self.errors


class _Scope:
    """Types and constants visible in one graph, and its enclosing graphs."""

    def __init__(self, graph: onnx.GraphProto, parent: _Scope | None = None):
        self.types: dict[str, int] = dict(parent.types) if parent else {}
        self.constants: set[str] = set(parent.constants) if parent else set()
        self.initializers: set[str] = set(parent.initializers) if parent else set()
        for v in [*graph.input, *graph.output, *graph.value_info]:
            if v.type.HasField("tensor_type"):
                self.types[v.name] = v.type.tensor_type.elem_type
        for t in graph.initializer:
            self.types[t.name] = t.data_type
            self.constants.add(t.name)
            self.initializers.add(t.name)
        for n in graph.node:
            value = node_tensor(n)
            if value is not None:
                self.constants.update(n.output)
                self.types[n.output[0]] = value.data_type


CHECKS: dict[str, Callable] = {}
check = registrar(CHECKS, "check")
"""`@check("Op")`: registers fn(node, scope), yielding (level, message, tensor)."""


def _attr(node: onnx.NodeProto, name: str, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _input(node: onnx.NodeProto, i: int) -> str | None:
    return node.input[i] if len(node.input) > i and node.input[i] else None


def _constant_input(ops, index: int, level: str, message: str, initializer: bool = False):
    """Registers a check that input `index` of `ops` is a constant (or an initializer)."""

    @check(*ops)
    def _check(node, scope):
        name = _input(node, index)
        known = scope.initializers if initializer else scope.constants
        if name is not None and name not in known:
            yield level, message, name


_REDUCE_OPS = [op for op in OPS if op.startswith("Reduce")]
_constant_input(_REDUCE_OPS, 1, ERROR, "`axes` must be an initializer", initializer=True)
_constant_input(["CumSum"], 1, ERROR, "`axis` must be a build-time constant")
_constant_input(
    ["Squeeze", "Unsqueeze"], 1, WARNING, "`axes` must resolve to a constant at build time"
)


@check("ScatterND")
def _scatter_reduction(node, scope):
    reduction = _attr(node, "reduction", b"none")
    if reduction not in (b"none", "none"):
        yield ERROR, f"reduction '{reduction.decode()}': only none is supported", None


@check("TopK")
def _topk_sorted(node, scope):
    if not _attr(node, "sorted", 1):
        yield ERROR, "`sorted` must be 1", None


@check("STFT")
def _stft(node, scope):
    for i, what in ((1, "frame_step"), (2, "window")):
        name = _input(node, i)
        if name is not None and name not in scope.initializers:
            yield ERROR, f"`{what}` must be an initializer", name


@check("RotaryEmbedding")
def _rotary(node, scope):
    ids = _input(node, 3)
    if ids is not None and scope.types.get(ids, TensorProto.INT64) != TensorProto.INT64:
        yield ERROR, "`position_ids` must be INT64", ids


@check("Resize")
def _resize(node, scope):
    mode = _attr(node, "mode", b"nearest").decode()
    if mode not in ("nearest", "linear"):
        yield ERROR, f"mode '{mode}': only nearest and linear are supported", None
    if _attr(node, "antialias", 0):
        yield ERROR, "antialiasing is not supported", None


def _type_name(elem: int) -> str:
    return TYPE_NAMES.get(elem) or TensorProto.DataType.Name(elem)


def _data_input(node: onnx.NodeProto) -> str | None:
    """The input whose type the table lists: Where's is x, every other op's its first."""
    return _input(node, 1 if node.op_type == "Where" else 0)


def _node_findings(node: onnx.NodeProto, scope: _Scope) -> Iterator[Finding]:
    def finding(level, message, tensor=None):
        return Finding(level, message, node.name, node.op_type, tensor)

    if not is_default_domain(node.domain):
        yield finding(WARNING, f"domain '{node.domain}': needs a TensorRT plugin")
        return
    if node.op_type in UNSUPPORTED or node.op_type not in OPS:
        known = "marked unsupported" if node.op_type in UNSUPPORTED else "not listed"
        yield finding(ERROR, f"{node.op_type} is {known} in TensorRT's ONNX parser table")
        return
    if node.op_type in SINCE:
        yield finding(WARNING, f"imported since TensorRT {SINCE[node.op_type]}")
    types, _ = OPS[node.op_type]
    data = _data_input(node)
    elem = scope.types.get(data) if data else None
    if data is None and node.output:
        elem = scope.types.get(node.output[0])
    if elem == TensorProto.DOUBLE and node.op_type == "Constant":
        yield finding(WARNING, "float64 constant: the parser casts it to float32")
    elif elem == TensorProto.DOUBLE and data in scope.constants:
        pass  # a float64 weight: reported once, where it is declared
    elif elem is not None and node.op_type not in ("If", "Loop", "Scan"):
        name = _type_name(elem)
        if name not in types:
            yield finding(ERROR, f"takes {', '.join(types)}, not {name}", data or node.output[0])
    if node.op_type in ("Cast", "CastLike"):
        to = _attr(node, "to") if node.op_type == "Cast" else scope.types.get(node.input[1])
        if to is not None and _type_name(to) not in types:
            yield finding(ERROR, f"casts to {_type_name(to)}, which TensorRT lacks")
    for level, message, tensor in CHECKS.get(node.op_type, lambda n, s: ())(node, scope):
        yield finding(level, message, tensor)


def _graph_findings(graph: onnx.GraphProto, scope: _Scope) -> Iterator[Finding]:
    for t in graph.initializer:
        if is_complex_onnx(t.data_type):
            yield Finding(ERROR, f"{_type_name(t.data_type)} weight: TensorRT has no complex type",
                          tensor=t.name)  # fmt: skip
        elif t.data_type == TensorProto.DOUBLE:
            yield Finding(
                WARNING,
                "float64 weight: the parser casts it to float32, clamping to +-FLT_MAX",
                tensor=t.name,
            )
    for node in graph.node:
        yield from _node_findings(node, scope)
        for g in subgraphs(node):
            yield from _graph_findings(g, _Scope(g, scope))


def lint(model: onnx.ModelProto) -> LintResult:
    """Checks `model` against TensorRT's ONNX parser table.

    Args:
        model: Any real model; types are inferred first, and it is not modified.

    Returns:
        Every finding, errors first in graph order.
    """
    # When inference fails, lint what is declared; the parser will say the rest.
    with contextlib.suppress(Exception):
        model = infer_shapes(model)
    result = LintResult()
    findings = result.findings
    opset = default_opset(model)
    if opset is not None and not OPSETS[0] <= opset <= OPSETS[1]:
        findings.append(
            Finding(ERROR, f"opset {opset}: the parser imports opsets {OPSETS[0]} to {OPSETS[1]}")
        )
    initializers = {t.name for t in model.graph.initializer}
    for kind, values in (("input", model.graph.input), ("output", model.graph.output)):
        for v in values:
            if v.name in initializers or not v.type.HasField("tensor_type"):
                continue
            name = _type_name(v.type.tensor_type.elem_type)
            if name not in IO_TYPES:
                findings.append(
                    Finding(
                        ERROR, f"graph {kind} of type {name}, which TensorRT lacks", tensor=v.name
                    )
                )
    findings += _graph_findings(model.graph, _Scope(model.graph))
    findings.sort(key=lambda f: f.level != ERROR)
    return result
