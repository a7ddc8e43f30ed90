"""Visit complex-touching nodes in topological order and hand each to its rule."""

from __future__ import annotations

import onnx_graphsurgeon as gs

from .analyze import Analysis
from .context import Context
from .dtypes import real_of
from .rules import registry


def _packed_shape(t: gs.Tensor) -> list | None:
    return None if t.shape is None else [*t.shape, 2]


def rewrite(graph: gs.Graph, analysis: Analysis, opset: int, mul_strategy: str = "auto") -> Context:
    """Rewrites every complex value of `graph` into packed-real form, in place.

    Complex graph inputs and outputs keep their names and dims, with a trailing 2.
    Rewritten nodes are detached; `tidy` removes what is left unused.

    Args:
        graph: A topologically sorted graph.
        analysis: The result of `analyze(graph)`, with nothing unsupported.
        opset: The default-domain opset of the model.
        mul_strategy: Passed to the context: "auto", "four" or "gauss".

    Returns:
        The context, which holds the explanations and counts of what was done.
    """
    ctx = Context(graph, analysis, opset, mul_strategy)
    tensors = graph.tensors()

    inputs = []
    for t in graph.inputs:
        if ctx.is_complex(t):
            packed = gs.Variable(t.name, dtype=ctx.real_dtype(t), shape=_packed_shape(t))
            ctx.set_packed(t, packed)
            inputs.append(packed)
        else:
            inputs.append(t)
    for name in analysis.initializers:
        ctx.set_constant(tensors[name], tensors[name].values)

    for node in analysis.nodes:
        ctx.node = node
        registry.get(node.op, node.domain or "").fn(ctx, node)
    ctx.node = None

    claimed = {id(t) for t in inputs}
    outputs = []
    for t in graph.outputs:
        if not ctx.is_complex(t):
            outputs.append(t)
            continue
        packed = ctx.packed(t)
        if packed.name == t.name and id(packed) in claimed:
            # A graph input that is also an output, as in the original.
            outputs.append(packed)
            continue
        # Rename the tensor that already holds the result, unless it is also an input,
        # a constant or another output: those need an Identity to carry the name.
        if isinstance(packed, gs.Variable) and packed.inputs and id(packed) not in claimed:
            packed.name = t.name
        else:
            out = gs.Variable(t.name)
            ctx.emit("Identity", [packed], outputs=[out], name=ctx.unique(f"{t.name}_identity"))
            packed = out
        packed.dtype = real_of(ctx.dtype(t))
        packed.shape = _packed_shape(t)
        claimed.add(id(packed))
        outputs.append(packed)

    rewritten = {id(n) for n in analysis.nodes}
    for node in analysis.nodes:
        node.inputs.clear()
        node.outputs.clear()
    graph.nodes = [n for n in graph.nodes if id(n) not in rewritten]
    graph.inputs = inputs
    graph.outputs = outputs
    return ctx
