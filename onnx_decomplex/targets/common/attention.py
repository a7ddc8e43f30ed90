"""Scaled dot-product attention over heads, written as ops, as one attention node.

Exporters spell a model's attention (jax2onnx's Einsums, once lowered to MatMuls) as:

    q, k, v = Reshape(xq | xk | xv, [B, S, H, D])       xq, xk, xv: [B, S, H D]
    s = MatMul(Transpose(q, [0, 2, 1, 3]), Transpose(k, [0, 2, 3, 1]))    [B, H, S, T]
    s = s / c  (or s * c)                                the scale, where there is one
    s = Where(mask, s, -inf)  (or s + bias)              a mask, where there is one
    p = Softmax(s, axis=-1)
    y = Reshape(Transpose(MatMul(p, Transpose(v, [0, 2, 1, 3])), [0, 2, 1, 3]), [B, S, H D])

onnxruntime runs that as ten to twelve nodes, three of them Transposes that copy. The
standard Attention (from opset 23) computes the same from xq, xk and xv in one, with
q_num_heads and kv_num_heads, and so does onnxruntime's com.microsoft.MultiHeadAttention,
the mask as an additive bias in both (0 where kept, the Where's constant elsewhere: the
same weights, since the constant is -inf or below -1e30, past which s + c rounds to c; a
bias added is taken as it is). onnxruntime 1.32 runs the standard node in 0.71 to 0.96 of
MultiHeadAttention's time on its CPU, one thread, from 2 x 8 tokens of 4 heads of 16 to
4 x 128 of 12 heads of 64, masked or not; but it gives a row of scores that are all -inf
0, where Softmax gives NaN, so it takes only a mask that keeps a key in every row (`_node`).
Keys moved heads first and then transposed (two Transposes, as torch's and Llama's
heads-first attention writes k^T) are read as the one they make. `attentions` finds the
spelling by its ops, each value read by the next op alone, and puts the node in the place
of the last Reshape.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto

from ...graphs import default_opset
from ...rules.rotary import CONTRIB
from ...shapes import static
from ...tidy import import_emitted
from .chains import Placed, drop_unused
from .matching import Matched, perm

HEADS_FIRST = [0, 2, 1, 3]
KEYS_TRANSPOSED = [0, 2, 3, 1]

ATTENTION_OPSET = 23

MASKED_AT_MOST = -1e30
"""The largest constant a Where may put where the mask is off: a sum with it rounds to
it, so an additive bias gives the Where's weights (a row masked whole as well)."""


def _heads(g: Matched, name: str, wanted: list[int], used: list):
    """(x, [B, S, H, D]) where `name` is Transpose(Reshape(x), wanted), x [B, S, H D]; or
    two Transposes in a row that make `wanted` (keys moved heads first, then transposed)."""
    transpose = g.made(name, "Transpose", used, alone=True)
    if transpose is None or perm(transpose) is None:
        return None
    moved = perm(transpose)
    before = g.producer.get(transpose.input[0])
    if moved != wanted and before is not None and before.op_type == "Transpose":
        first = perm(before)
        if first is None or g.made(transpose.input[0], "Transpose", used, alone=True) is None:
            return None
        moved, transpose = [first[i] for i in moved], before
    if moved != wanted:
        return None
    reshape = g.made(transpose.input[0], "Reshape", used, alone=True)
    if reshape is None:
        return None
    x, split = reshape.input[0], g.dims(transpose.input[0])
    whole = g.dims(x)
    if len(split) != 4 or len(whole) != 3 or not static(split[2:]):
        return None
    if whole[:2] != split[:2] or whole[2] != split[2] * split[3]:
        return None
    return x, split


def _scores(g: Matched, softmax: onnx.NodeProto, used: list):
    """(q, k, qdims, scale, mask) for the Softmax's input, or None. The mask is a Where's
    (condition, constant), or an additive bias's (bias, None)."""
    s, mask = softmax.input[0], None
    where = g.producer.get(s)
    if where is not None and where.op_type == "Add":
        if g.made(s, "Add", used, alone=True) is None:
            return None
        scores = [i for i, name in enumerate(where.input) if _scored(g, name)]
        if len(scores) != 1:
            return None
        s, mask = where.input[scores[0]], (where.input[1 - scores[0]], None)
    elif where is not None and where.op_type == "Where":
        if g.made(s, "Where", used, alone=True) is None:
            return None
        kept = g.scalar(where.input[2])
        if kept is None or kept > MASKED_AT_MOST:
            return None
        mask, s = (where.input[0], kept), where.input[1]
    scale = 1.0
    scaled = g.producer.get(s)
    if scaled is not None and scaled.op_type in ("Div", "Mul"):
        c = g.scalar(scaled.input[1])
        if c is None or g.made(s, scaled.op_type, used, alone=True) is None:
            return None
        scale, s = (c if scaled.op_type == "Mul" else 1 / c if c else np.inf), scaled.input[0]
    product = g.made(s, "MatMul", used, alone=True)
    if product is None:
        return None
    q = _heads(g, product.input[0], HEADS_FIRST, used)
    k = _heads(g, product.input[1], KEYS_TRANSPOSED, used)
    if q is None or k is None or q[1][2:] != k[1][2:]:
        return None
    return q[0], k[0], q[1], scale, mask


def _scored(g: Matched, name: str) -> bool:
    """Whether `name` is the scores before a bias is added: a product, or its scaling."""
    node = g.producer.get(name)
    if node is not None and node.op_type in ("Div", "Mul"):
        node = g.producer.get(node.input[0])
    return node is not None and node.op_type == "MatMul"


def _values(g: Matched, probabilities: str, used: list, heads: int):
    """(v, y) where the weights multiply `heads` heads of v and the result is put back as
    y [B, S, H D]; or None."""
    nodes = g.model.graph.node
    product = g.only_reader(probabilities, nodes)
    if product is None or product.op_type != "MatMul" or product.input[0] != probabilities:
        return None
    used.append(product)
    v = _heads(g, product.input[1], HEADS_FIRST, used)
    back = g.only_reader(product.output[0], nodes)
    if v is None or v[1][2] != heads or back is None or back.op_type != "Transpose":
        return None
    if perm(back) != HEADS_FIRST:
        return None
    used.append(back)
    last = g.only_reader(back.output[0], nodes)
    if last is None or last.op_type != "Reshape":
        return None
    used.append(last)
    y, dims = last.output[0], g.dims(last.output[0])
    if len(dims) != 3 or not isinstance(dims[2], int) or dims[2] != np.prod(v[1][2:]):
        return None
    return v[0], y


def attentions(model: onnx.ModelProto, contrib: bool = True) -> list[str]:
    """Puts one attention node in the place of each attention of `model` it finds (see
    the module), in float32, changing `model` in place: the standard Attention from
    opset 23, else com.microsoft.MultiHeadAttention where `contrib`; a note per node."""
    opset = default_opset(model) or 1
    standard = opset >= ATTENTION_OPSET
    if not (standard or contrib) or not any(n.op_type == "Softmax" for n in model.graph.node):
        return []
    g = Matched(model)
    try:
        g.values  # noqa: B018  (inferred once here, or nothing is matched)
    except Exception:  # onnx raises several types: the shapes are unknown
        return []
    notes, domains = [], set()
    for softmax in [n for n in model.graph.node if n.op_type == "Softmax"]:
        used = [softmax]
        found = _scores(g, softmax, used)
        if found is None or g.elem(softmax.input[0]) != TensorProto.FLOAT:
            continue
        q, k, dims, scale, mask = found
        axis = next((a.i for a in softmax.attribute if a.name == "axis"), -1)
        if axis not in (-1, 3):
            continue
        values = _values(g, softmax.output[0], used, dims[2])
        if values is None:
            continue
        v, y = values
        if g.dims(v)[:1] != dims[:1] or g.dims(v)[1] != g.dims(k)[1]:
            continue  # values of another batch, or for other keys
        bias = _bias(g, mask, dims, g.dims(k)[1]) if mask is not None else None
        if mask is not None and bias is None:
            continue
        node = _node(g, standard, contrib, scale, mask, opset)
        if node is None:
            continue
        put = Placed(model.graph, y)
        inputs = [q, k, v] if node == "Attention" else [q, k, v, "", ""]
        if bias is not None:
            name, kept = bias
            added = name
            if kept is not None:  # a Where's mask: 0 where kept, its constant elsewhere
                zero = put.constant("kept", np.zeros((), np.float32))
                off = put.constant("masked", np.array(kept, np.float32))
                added = put.node("Where", [name, zero, off])
            shape = g.dims(name)
            if not (shape and static(shape)):
                batch = dims[0] if isinstance(dims[0], int) else 1
                scores = np.array([batch, dims[2], dims[1], g.dims(k)[1]], np.int64)
                added = put.node("Expand", [added, put.constant("scores", scores)])
            elif len(shape) < 4:
                axes = np.arange(4 - len(shape))
                added = put.node("Unsqueeze", [added, put.constant("axes", axes)])
            inputs.append(added)
        heads = dims[2]
        if node == "Attention":
            put.node(node, inputs, q_num_heads=heads, kv_num_heads=heads, scale=float(scale))
        else:
            put.node(node, inputs, domain=CONTRIB, num_heads=heads, scale=float(scale))
            node, domains = f"{CONTRIB}.{node}", {CONTRIB}
        put.done()
        notes.append(f"{y}: attention of {heads} heads over {q}, {k}, {v} ({len(used)} nodes) "
                     f"-> one {node}")  # fmt: skip
    if notes:
        drop_unused(model.graph)
        import_emitted(model, domains)
    return notes


def _node(g: Matched, standard: bool, contrib: bool, scale: float, mask, opset: int):
    """The node an attention becomes: the standard Attention where the opset has it, its
    scale is above 0 (onnxruntime refuses any other) and no row of its scores is masked
    whole with -inf (onnxruntime's gives such a row 0, where Softmax gives NaN); else
    com.microsoft.MultiHeadAttention where `contrib` and its scale is not 0 (it reads 0
    as not given, 1 / sqrt(D)); else None."""
    if not np.isfinite(scale):
        return None
    if standard and scale > 0 and _keeps_every_row(g, mask, opset):
        return "Attention"
    return "MultiHeadAttention" if contrib and scale != 0 else None


def _keeps_every_row(g: Matched, mask, opset: int) -> bool:
    """Whether each row of the scores keeps a key that `mask` (a Where's (condition,
    constant), or a bias's (bias, None)) does not set to -inf: one with no mask, or
    whose constant is finite, does; else its condition's or its bias's value decides,
    read where it is a constant or made of constants (a causal mask made by a Trilu)."""
    if mask is None:
        return True
    name, kept = mask
    if kept is not None and kept > -np.inf:
        return True
    value = g.computed(name, opset, MASK_AT_MOST, [MASK_NODES])
    if value is None or value.ndim < 1:
        return False
    masked = np.logical_not(value) if kept is not None else value == -np.inf
    return bool(np.all(np.any(~masked, axis=-1)))


MASK_AT_MOST = 1 << 22
"""The most values of a mask read to learn whether it masks a row whole."""

MASK_NODES = 16
"""The most nodes evaluated to compute a mask made of constants."""


def _bias(g: Matched, mask, dims: list, keys) -> tuple[str, float | None] | None:
    """The mask as the additive bias's source, where it broadcasts as MultiHeadAttention's
    bias does: [..., S, T] with S and T its own, of rank up to 4, its leading dims 1 or
    the batch's and heads'. A bias added whose shape is not known here (one computed,
    a causal mask made by Trilu) is taken: the scores it is added to are [B, H, S, T],
    which it broadcasts to."""
    name, kept = mask
    shape = g.dims(name)
    if kept is None and not (shape and static(shape)):
        # a bias of a shape not inferred here: broadcast by an Expand to the scores' (of
        # rank 4: the weights' product is moved back by a Transpose of four axes)
        return (name, kept) if isinstance(dims[1], int) and isinstance(keys, int) else None
    if not shape or len(shape) > 4 or shape[-2:] != [dims[1], keys]:
        return None
    lead = [1, 1][: 4 - len(shape)] + shape[:-2]
    if not all(d == 1 or d == full for d, full in zip(lead, [dims[0], dims[2]], strict=True)):
        return None
    return name, kept
