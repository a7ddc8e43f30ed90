"""If, Loop and Scan: subgraphs that capture, carry or return complex values are
rewritten in place, and the node passes packed values in and out.

    If(c, then: f(z), else: g(z))       -> If(c, then: f'(p), else: g'(p))
    Loop(M, c, z0, body: z -> h(z))     -> Loop(M, c, p0, body: p -> h'(p))
    Scan(z0, xs, body, scan_axes=[-1])  -> Scan(p0, xs', body', scan_axes=[-2])

Each subgraph is rewritten with the forms the enclosing graph has made for the
values it captures. A complex subgraph input or output is a packed tensor, so a
complex node input or output is the packed value: loop state stays packed from one
iteration to the next, and a scan output of packed slices, stacked on a new axis,
is the packed stack. Negative scan axes skip the trailing (re, im) axis.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from .common import shift_axis
from .registry import rule


def _outputs_from_analysis(node, kinds):
    # Analysis decides these outputs from the subgraphs; see analyze._subgraphs.
    return [None] * len(node.outputs)


def _shift_scan_axes(ctx, node):
    """Moves the negative scan axes of complex scan inputs and outputs."""
    scans = node.inputs[len(node.inputs) - int(node.attrs["num_scan_inputs"]) :]
    scan_outs = node.outputs[len(node.inputs) - len(scans) :]
    for attr, tensors in (("scan_input_axes", scans), ("scan_output_axes", scan_outs)):
        if attr in node.attrs:
            node.attrs[attr] = [
                shift_axis(a) if ctx.is_complex(t) else int(a)
                for a, t in zip(node.attrs[attr], tensors, strict=True)
            ]


@rule("If", "Loop", "Scan", infer=_outputs_from_analysis)
def control_flow(ctx, node):
    if node.op == "Scan":
        _shift_scan_axes(ctx, node)
    for i, t in enumerate(node.inputs):
        if ctx.is_complex(t):
            node.inputs[i] = ctx.packed(t)
    for graph, analysis in ctx.analysis.subgraphs[node.name]:
        ctx.rewrite_subgraph(graph, analysis)
    for i, out in enumerate(node.outputs):
        if ctx.is_complex(out):
            node.outputs[i] = gs.Variable(ctx.unique(f"{out.name}_packed"), ctx.real_dtype(out))
            ctx.set_packed(out, node.outputs[i])
    ctx.keep(node)
    what = "branches" if node.op == "If" else "body"
    ctx.explain(f"{what} rewritten; complex values in and out are packed")
