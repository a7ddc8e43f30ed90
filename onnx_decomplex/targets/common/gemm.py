"""A product of two matrices less a value, or a value less one, as one Gemm:

    Sub(C, MatMul(A, B))  ->  Gemm(A, B, C, alpha=-1)
    Sub(MatMul(A, B), C)  ->  Gemm(A, B, C, beta=-1)

where A and B have rank 2 (and no size 0), C broadcasts to the product's [M, N] one way
(Gemm's rule), both are floats of one type, and nothing else reads the product. onnxruntime fuses
Add(MatMul(A, B), C) into a Gemm itself, but not a Sub: a Newton-Schulz step
X (2I - R X), twelve of them in the MVDR beamformer, is then a MatMul and a Gemm, not
two MatMuls and a Sub (0.93 of the beamformer's time), and a complex product on parts,
Ar Br - Ai Bi, two nodes.

A or B transposed (a Transpose of a matrix) is read as Gemm's transA or transB, and a sum
with such a product is one Gemm too: onnxruntime folds a Transpose into a MatMul, but not
into a Gemm, its own or ours, where it stays a node of its own (the MVDR beamformer's
covariance X X^H on parts, two of them).
"""

from __future__ import annotations

import onnx
from onnx import helper

from ...shapes import static
from .chains import FLOATS, drop_unused
from .matching import Matched, perm

SIGNS = {"Sub": -1.0, "Add": 1.0}
"""The ops taken, by the sign of their second operand."""


def gemms(model: onnx.ModelProto) -> list[str]:
    """Puts one Gemm in the place of each difference with a product, and of each sum
    with a product of a transposed matrix (see the module); edits `model` in place.
    Returns one note per Gemm."""
    graph = model.graph
    products = {out for n in graph.node if n.op_type == "MatMul" for out in n.output}
    if not any(n.op_type in SIGNS and products.intersection(n.input) for n in graph.node):
        return []
    g = Matched(model)
    notes = []
    for node in list(graph.node):
        if node.op_type not in SIGNS or node.domain not in ("", "ai.onnx"):
            continue
        found = _product_and_rest(g, node)
        if found is None:
            continue
        (a, trans_a), (b, trans_b), c, first = found
        alpha, beta = (1.0, SIGNS[node.op_type]) if first else (SIGNS[node.op_type], 1.0)
        gemm = helper.make_node("Gemm", [a, b, c], list(node.output), name=f"{node.output[0]}_gemm",
                                alpha=alpha, beta=beta, transA=trans_a, transB=trans_b)  # fmt: skip
        graph.node.insert(list(graph.node).index(node), gemm)
        graph.node.remove(node)
        kind = "difference" if node.op_type == "Sub" else "sum"
        notes.append(f"{node.output[0]}: a {kind} with a product -> one Gemm")
    if notes:
        drop_unused(graph)
    return notes


def _product_and_rest(g: Matched, node: onnx.NodeProto):
    """((A, transA), (B, transB), C, whether the product is the first operand) where
    `node` subtracts or adds a product of two matrices read nowhere else and a C that
    Gemm takes (a sum only where A or B is transposed, which onnxruntime's own Gemm
    would leave a node); else None."""
    for first, (a, c) in ((True, node.input), (False, node.input[::-1])):
        product = g.producer.get(a)
        if product is None or product.op_type != "MatMul" or a == c:
            continue
        if product.domain not in ("", "ai.onnx") or g.readers.get(a) != 1:
            continue
        operands = [_untransposed(g, name) for name in product.input]
        if node.op_type == "Add" and not any(trans for _, trans in operands):
            continue
        dims = [g.known_dims(name) for name in product.input]
        if g.elem(a) not in FLOATS or g.elem(c) != g.elem(a):
            continue
        if any(d is None or len(d) != 2 or 0 in d for d in dims):
            continue
        if not _broadcasts(g.known_dims(c), dims):
            continue
        return *operands, c, first
    return None


def _untransposed(g: Matched, name: str) -> tuple[str, int]:
    """(M, 1) where `name` is M transposed (a Transpose of a matrix), else (name, 0)."""
    node = g.producer.get(name)
    if node is None or node.op_type != "Transpose" or node.domain not in ("", "ai.onnx"):
        return name, 0
    return (node.input[0], 1) if perm(node) in (None, [1, 0]) else (name, 0)


def _broadcasts(c: list | None, dims: list[list]) -> bool:
    """Whether C of `c` dims broadcasts one way to A B's [M, N] (static dims only)."""
    (m, _), (_, n) = dims
    if not static(c) or len(c) > 2:
        return False
    target = [m, n][2 - len(c) :]
    return all(d == 1 or d == t for d, t in zip(c, target, strict=True))
