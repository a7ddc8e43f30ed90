"""If: branches that capture or return complex values are rewritten in place.

    If(c, then: f(z), else: g(z)) -> If(c, then: f'(p), else: g'(p))

Each branch is rewritten with the forms the enclosing graph has made for the
values it captures. A complex branch output becomes a packed tensor in both
branches, so the If output is the packed value. Loop and Scan bodies, whose
carried values would need packed loop state, are refused.
"""

from __future__ import annotations

from .registry import rule


def _outputs_from_analysis(node, kinds):
    # Analysis decides an If's outputs from its branches; see analyze._branches.
    return [None] * len(node.outputs)


@rule("If", infer=_outputs_from_analysis)
def if_(ctx, node):
    from ..rewrite import rewrite_branch  # the rewrite drives rules; imported at use

    for graph, analysis in ctx.analysis.branches[node.name]:
        rewrite_branch(ctx, graph, analysis)
    for out in node.outputs:
        if ctx.is_complex(out):
            out.dtype, out.shape = ctx.real_dtype(out), None
            ctx.set_packed(out, out)
    ctx.keep(node)
    ctx.explain("branches rewritten; complex outputs are packed in both")
