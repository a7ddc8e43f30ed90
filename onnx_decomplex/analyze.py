"""Find every complex value by propagating types from their sources.

Sources are complex graph inputs, initializers, `Constant` nodes and casts to a
complex type; each rule's `infer` carries them through its op. Labels that
exporters leave in `value_info` are never read: they are often stale.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from .analysis import Analysis
from .dtypes import is_complex_np, promote
from .errors import Unsupported
from .graphs import is_default_domain
from .rules import refused, registry


def _is_complex_tensor(t: gs.Tensor) -> bool:
    # A constant's dtype is known without loading its values, which may be on disk.
    return t.dtype is not None and is_complex_np(t.dtype)


def _subgraph_unsupported(node: gs.Node, complex_names: dict[str, np.dtype]) -> list[Unsupported]:
    """Subgraphs of an op with no rule (a custom domain's, say) that hold or capture
    complex values: nothing says how its subgraph inputs and outputs line up."""
    found = []
    for sub in node.subgraphs(recursive=True):
        for name, t in sub.tensors().items():
            dtype = complex_names.get(name)
            if dtype is None and _is_complex_tensor(t):
                dtype = np.dtype(t.dtype)
            if dtype is not None:
                found.append(
                    Unsupported(
                        node.name,
                        node.op,
                        name,
                        str(dtype),
                        "complex value inside the subgraph of an op with no rule",
                    )
                )
                break
    return found


def _typed_like_inputs(node: gs.Node) -> bool:
    """True for an ONNX op whose every output has the type of one of its inputs (Relu,
    Floor, ...): with real inputs its outputs are real, whatever shape inference, which
    carries a complex Abs's type on, labels them."""
    if not is_default_domain(node.domain):
        return False
    try:
        schema = onnx.defs.get_schema(node.op)
    except onnx.defs.SchemaError:
        return False
    ins = {i.type_str for i in schema.inputs}
    return all(o.type_str in ins for o in schema.outputs)


def _refusal(node: gs.Node, tensor: str, kind, why: str) -> Unsupported:
    return Unsupported(node.name, node.op, tensor, str(kind), why)


def _carried(node: gs.Node, state_kinds, body: gs.Graph, sa: Analysis, first_out: int):
    """Refusals for loop state whose initial value and body output differ in kind."""
    found = []
    for k_in, out in zip(state_kinds, body.outputs[first_out:], strict=False):
        k_out = sa.complex.get(out.name)
        if (k_in is None) != (k_out is None):
            found.append(
                _refusal(node, out.name, k_in or k_out,
                         "loop state is complex on one side of the body and real on the other")
            )  # fmt: skip
    return found


def _subgraphs(node: gs.Node, a: Analysis, kinds, opset: int) -> list[Unsupported] | None:
    """Analyzes the subgraphs of an `If`, `Loop` or `Scan` that touches complex values.

    Each body is analyzed with the kinds of the values it is given: Loop's carried
    values after the iteration count and condition, Scan's state and scan slices in
    node order. Returns None when nothing complex touches the node; else the refusals
    found (empty when it can be rewritten). Its outputs' kinds are recorded.
    """
    if node.op == "If":
        graphs = [(node.attrs["then_branch"], []), (node.attrs["else_branch"], [])]
    elif node.op == "Loop":
        graphs = [(node.attrs["body"], [None, None, *kinds[2:]])]
    else:
        graphs = [(node.attrs["body"], list(kinds))]
    subs = []
    for g, given in graphs:
        g.toposort()
        subs.append((g, analyze(g, outer=a.complex, input_kinds=given, opset=opset)))
    # Loop's outputs skip the body's condition; If's and Scan's match one to one.
    skip = 1 if node.op == "Loop" else 0
    out_kinds = [[sa.complex.get(t.name) for t in g.outputs[skip:]] for g, sa in subs]
    touched = any(sa.nodes or sa.inputs or sa.initializers or sa.unsupported for _, sa in subs)
    if not touched and not any(k for ks in out_kinds for k in ks):
        return None
    found = [u for _, sa in subs for u in sa.unsupported]
    if node.op == "If":
        for out, k_then, k_else in zip(node.outputs, *out_kinds, strict=True):
            if (k_then is None) != (k_else is None):
                found.append(_refusal(node, out.name, k_then or k_else,
                                      "one branch returns a complex value, the other a real one"))  # fmt: skip
            elif k_then is not None:
                a.complex[out.name] = promote(k_then, k_else)
    else:
        (body, sa), ks = subs[0], out_kinds[0]
        if node.op == "Loop":
            state = kinds[2:]
        else:
            state = kinds[: len(kinds) - int(node.attrs["num_scan_inputs"])]
        found += _carried(node, state, body, sa, skip)
        for out, k in zip(node.outputs, ks, strict=False):
            if k is not None:
                a.complex[out.name] = k
    a.subgraphs[node.name] = subs
    return found


def analyze(
    graph: gs.Graph,
    outer: dict[str, np.dtype] | None = None,
    input_kinds: list[np.dtype | None] | None = None,
    opset: int | None = None,
    tensors: dict[str, gs.Tensor] | None = None,
) -> Analysis:
    """Propagates complex types through `graph`, which must be topologically sorted.

    Args:
        graph: The imported model graph, or a subgraph (an `If` branch, a `Loop` or
            `Scan` body).
        outer: For a subgraph, the complex values of the enclosing graphs, which it
            may capture by name.
        input_kinds: For a subgraph, the kind of each of its inputs, from what the
            node gives it; its input labels are not read.
        opset: The default-domain opset, which some refusals depend on; by default
            the one `graph` was imported with.
        tensors: `graph.tensors()`, where the caller has it already.

    Returns:
        The complex values, their sources, the nodes to rewrite and the nodes that
        cannot be rewritten (all of them, so one error can list every one).
    """
    opset = graph.opset if opset is None else opset
    a = Analysis()
    a.complex.update(outer or {})
    _sources(a, graph, input_kinds, tensors)
    for node in graph.nodes:
        _visit(a, node, opset)
    return a


def _sources(
    a: Analysis,
    graph: gs.Graph,
    input_kinds: list[np.dtype | None] | None,
    tensors: dict[str, gs.Tensor] | None,
) -> None:
    """The complex values `graph` starts from: its inputs (of `input_kinds`, for a
    subgraph) and its constants."""
    given = input_kinds if input_kinds is not None else [None] * len(graph.inputs)
    for t, kind in zip(graph.inputs, given, strict=True):
        if input_kinds is not None:
            a.complex.pop(t.name, None)  # a body input shadows an outer value
        elif _is_complex_tensor(t):
            kind = t.dtype
        if kind is not None:
            a.complex[t.name] = np.dtype(kind)
            a.inputs.append(t.name)
    a.tensors = graph.tensors() if tensors is None else tensors
    for name, t in a.tensors.items():
        if isinstance(t, gs.Constant) and _is_complex_tensor(t):
            a.complex[name] = np.dtype(t.dtype)
            a.initializers.append(name)


def _visit(a: Analysis, node: gs.Node, opset: int) -> None:
    """One node: refused, analyzed with its bodies, or carried through by its rule."""
    kinds = [a.complex.get(t.name) if t.name else None for t in node.inputs]
    first = next((i for i, k in enumerate(kinds) if k is not None), None)
    r = registry.get(node.op, node.domain or "")
    why = None
    if r is None:
        why = refused.reason(node.op) if first is not None else None
    elif first is not None:
        why = r.refuse(node, kinds, opset)
    if why is not None:
        _refuse(a, node, kinds, first, why)
    elif r is not None and node.op in ("If", "Loop", "Scan"):
        found = _subgraphs(node, a, kinds, opset)
        if found:
            a.unsupported.extend(found)
        elif found is not None:
            a.nodes.append(node)
    elif r is None:
        _no_rule(a, node)
    else:
        _infer(a, node, r.infer(node, kinds), kinds, first)


def _refuse(a: Analysis, node: gs.Node, kinds: list, first: int, why: str) -> None:
    """A refused node, recorded with the complex value (its `first`) that reaches it."""
    src = node.inputs[first].name
    a.unsupported.append(Unsupported(node.name, node.op, src, str(kinds[first]), why, a.path(src)))
    # Keep going as if the outputs were complex, so that every node
    # downstream that could not take them is reported too.
    for out in node.outputs:
        a.complex[out.name] = kinds[first]
        a.came_from[out.name] = (node.name, src)


def _no_rule(a: Analysis, node: gs.Node) -> None:
    """A node no rule takes, and no complex input reaches: refused still where it
    makes a complex value, or holds one in a subgraph."""
    made = None
    if not _typed_like_inputs(node):
        made = next((t for t in node.outputs if _is_complex_tensor(t)), None)
    if made is not None:
        # A complex value from an op with no rule: its labels are all there is
        # to go on, and they are enough to refuse it.
        a.unsupported.append(
            Unsupported(node.name, node.op, made.name, str(np.dtype(made.dtype)),
                        refused.reason(node.op), role="output")
        )  # fmt: skip
    a.unsupported.extend(_subgraph_unsupported(node, a.complex))


def _infer(a: Analysis, node: gs.Node, outs: list, kinds: list, first: int | None) -> None:
    """The kinds of a node's outputs (`outs`, from its rule) recorded; the node is one
    to rewrite when it takes or makes a complex value."""
    if first is None and not any(d is not None for d in outs):
        return
    a.nodes.append(node)
    for out, dtype in zip(node.outputs, outs, strict=True):
        if dtype is not None:
            a.complex[out.name] = np.dtype(dtype)
            if first is not None:
                a.came_from[out.name] = (node.name, node.inputs[first].name)
            if node.op == "Constant":
                a.constants.append(out.name)
            elif node.op == "Cast" and not any(kinds):
                a.casts.append(out.name)
