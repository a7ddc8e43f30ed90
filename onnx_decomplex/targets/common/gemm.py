"""A product of two matrices less a value, or a value less one, as one Gemm:

    Sub(C, MatMul(A, B))  ->  Gemm(A, B, C, alpha=-1)
    Sub(MatMul(A, B), C)  ->  Gemm(A, B, C, beta=-1)

where A and B have rank 2 (and no size 0), C broadcasts to the product's [M, N] one way
(Gemm's rule), both are floats of one type, and nothing else reads the product. onnxruntime fuses
Add(MatMul(A, B), C) into a Gemm itself, but not a Sub: a Newton-Schulz step
X (2I - R X), twelve of them in the MVDR beamformer, is then a MatMul and a Gemm, not
two MatMuls and a Sub (0.93 of the beamformer's time), and a complex product on parts,
Ar Br - Ai Bi, two nodes.
"""

from __future__ import annotations

import onnx
from onnx import helper

from .chains import FLOATS, drop_unused
from .matching import Matched


def gemms(model: onnx.ModelProto) -> list[str]:
    """Puts one Gemm in the place of each difference with a product (see the module);
    edits `model` in place. Returns one note per Gemm."""
    graph = model.graph
    products = {out for n in graph.node if n.op_type == "MatMul" for out in n.output}
    if not any(n.op_type == "Sub" and products.intersection(n.input) for n in graph.node):
        return []
    g = Matched(model)
    notes = []
    for node in list(graph.node):
        if node.op_type != "Sub" or node.domain not in ("", "ai.onnx"):
            continue
        found = _product_and_rest(g, node)
        if found is None:
            continue
        product, c, first = found
        alpha, beta = (1.0, -1.0) if first else (-1.0, 1.0)
        gemm = helper.make_node("Gemm", [*product.input, c], list(node.output),
                                name=f"{node.output[0]}_gemm", alpha=alpha, beta=beta)  # fmt: skip
        graph.node.insert(list(graph.node).index(node), gemm)
        graph.node.remove(node)
        notes.append(f"{node.output[0]}: a difference with a product -> one Gemm")
    if notes:
        drop_unused(graph)
    return notes


def _product_and_rest(g: Matched, node: onnx.NodeProto):
    """(the MatMul, C, whether the product is the first operand) where `node` subtracts
    a product of two matrices read nowhere else and a C that Gemm takes, one from the
    other; else None."""
    for first, (a, c) in ((True, node.input), (False, node.input[::-1])):
        product = g.producer.get(a)
        if product is None or product.op_type != "MatMul" or a == c:
            continue
        if product.domain not in ("", "ai.onnx") or g.readers.get(a) != 1:
            continue
        dims = [g.known_dims(name) for name in product.input]
        if g.elem(a) not in FLOATS or g.elem(c) != g.elem(a):
            continue
        if any(d is None or len(d) != 2 or 0 in d for d in dims):
            continue
        if not _broadcasts(g.known_dims(c), dims):
            continue
        return product, c, first
    return None


def _broadcasts(c: list | None, dims: list[list]) -> bool:
    """Whether C of `c` dims broadcasts one way to A B's [M, N] (static dims only)."""
    (m, _), (_, n) = dims
    if c is None or len(c) > 2 or not all(isinstance(d, int) for d in c):
        return False
    target = [m, n][2 - len(c) :]
    return all(d == 1 or d == t for d, t in zip(c, target, strict=True))
