"""LayerNorm and RMSNorm written as means and elementwise ops, as one node each.

Exporters spell a normalization over the last axis as the formula:

    LayerNorm   d = x - ReduceMean(x);  y = d / Sqrt(ReduceMean(d d) + eps)
    RMSNorm     y = x / Sqrt(ReduceMean(x x) + eps)

with `d d` also as Pow(d, 2), `a / Sqrt(v)` also as a (1 / Sqrt(v)), and a constant
weight (a LayerNorm's bias too) applied after. onnxruntime runs each op on its own,
seven to nine nodes of a few microseconds; the standard LayerNormalization (opset 17)
and RMSNormalization (opset 23) compute the same in one. `normalizations` finds them by
their ops and puts the node in the place of the last; a value the formula computes that
anything else reads leaves it as written. (onnxruntime's SimplifiedLayerNormalization,
its RMSNorm below opset 23, is registered in the default domain, which the ONNX checker
refuses: an RMSNorm below 23 stays as written.)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ...graphs import default_opset
from .chains import Placed, drop_unused
from .matching import Matched

LAYER_NORM_OPSET = 17
RMS_NORM_OPSET = 23


class _Graph(Matched):
    """What the matching reads (`Matched`), and a normalization's weights and means."""

    def weight(self, name: str, width: int) -> np.ndarray | None:
        """A constant that varies along the last axis alone, as [width]."""
        value = self.constant(name)
        if (
            value is None
            or value.size not in (1, width)
            or value.shape[-1:] not in ((1,), (width,), ())
        ):
            return None
        return np.broadcast_to(value.reshape(-1), (width,))

    def last_axis_mean(self, node: onnx.NodeProto, rank: int) -> bool:
        """A ReduceMean over the last axis, its dims kept."""
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("keepdims", 1) != 1:
            return False
        axes = attrs.get("axes")
        if axes is None and len(node.input) > 1:
            axes = self.constant(node.input[1])
        return axes is not None and [int(a) % rank for a in np.ravel(axes)] == [rank - 1]


def normalizations(model: onnx.ModelProto) -> list[str]:
    """Puts one node in the place of each normalization of `model` it finds (see the
    module), and of each square of an L2 norm, changing `model` in place; a note per
    node. Only where the opset has the node."""
    opset = default_opset(model) or 1
    g, notes, replaced = _Graph(model), [], set()
    if opset < LAYER_NORM_OPSET:
        notes = _squared_norms(g, model)
        if notes:
            drop_unused(model.graph)
        return notes
    for node in list(model.graph.node):
        if node.op_type not in ("Div", "Mul") or node.output[0] in replaced:
            continue
        found = _normalized(g, node)
        if found is None:
            continue
        x, eps, centered, used = found
        try:
            rank = len(g.dims(x))
        except Exception:  # onnx raises several types: the shapes are unknown
            break
        if not rank or not all(
            g.last_axis_mean(n, rank) for n in used if n.op_type == "ReduceMean"
        ):
            continue
        inner = {out for n in used for out in n.output} - {node.output[0]}
        if any(g.readers.get(v, 0) != sum(list(n.input).count(v) for n in used) for v in inner):
            continue  # a value of the formula is read elsewhere
        width = (g.dims(x) or [None])[-1]
        if not isinstance(width, int) or g.elem(x) is None:
            continue
        elem = helper.tensor_dtype_to_np_dtype(g.elem(x))
        last, weights = node, [np.ones(width, elem), np.zeros(width, elem)]
        for op, k in (("Mul", 0), ("Add", 1)):  # a weight, then a LayerNorm's bias
            after = g.only_reader(last.output[0], model.graph.node)
            if after is None or after.op_type != op or (op == "Add" and not centered):
                break
            other = [name for name in after.input if name != last.output[0]]
            value = g.weight(other[0], width) if len(other) == 1 else None
            if value is None:
                break
            weights[k] = value.astype(elem) if k == 1 else weights[0] * value.astype(elem)
            used.append(after)
            last = after
        if not centered and opset < RMS_NORM_OPSET:
            continue
        op = "LayerNormalization" if centered else "RMSNormalization"
        y = last.output[0]
        put = Placed(model.graph, y)
        inputs = [x, put.constant("scale", weights[0])]
        inputs += [put.constant("bias", weights[1])] if centered else []
        put.node(op, inputs, axis=-1, epsilon=eps)
        put.done()
        replaced.add(y)
        notes.append(f"{y}: {'LayerNorm' if centered else 'RMSNorm'} of {x} over its last "
                     f"axis ({len(used)} nodes) -> one {op}")  # fmt: skip
    notes += _squared_norms(g, model)
    if notes:
        drop_unused(model.graph)
    return notes


def _squared_norms(g: _Graph, model: onnx.ModelProto) -> list[str]:
    """Pow(ReduceL2(x), 2), a power spectrum's square of a magnitude, as ReduceSum(x x)
    on the same axes: no root taken and squared again (and one rounding fewer).
    onnxruntime 1.32's ReduceSumSquare takes 1.5 to 3 times as long as the Mul and the
    ReduceSum (over the last axis of [2, 129, 30, 2] or of [64, 4096], or the second of
    [2, 2, 129, 30])."""
    notes = []
    opset = default_opset(model) or 1
    for node in list(model.graph.node):
        if node.op_type != "Pow" or g.scalar(node.input[1]) != 2.0:
            continue
        norm = g.producer.get(node.input[0])
        if norm is None or norm.op_type != "ReduceL2" or g.readers.get(node.input[0]) != 1:
            continue
        x, y = norm.input[0], node.output[0]
        put = Placed(model.graph, y)
        attrs = {a.name: helper.get_attribute_value(a) for a in norm.attribute}
        axes = list(norm.input[1:2])
        if "axes" in attrs and opset >= 13:  # ReduceSum reads its axes as an input from 13
            axes = [put.constant("axes", np.array(attrs.pop("axes"), np.int64))]
        put.node("ReduceSum", [put.node("Mul", [x, x]), *axes], **attrs)
        put.done()
        notes.append(f"{y}: the square of {x}'s L2 norm -> ReduceSum of its squares")
    return notes


def _normalized(g: _Graph, node: onnx.NodeProto):
    """(x, eps, whether x is centred first, the formula's nodes) where `node` divides a
    value by the root of its mean square plus eps (see the module); else None."""
    used = [node]
    if node.op_type == "Div":
        a, root = node.input
    else:  # a times 1 / root, either way round
        a, root = None, None
        for first, second in (node.input, node.input[::-1]):
            inverse = g.producer.get(second)
            if inverse is not None and inverse.op_type == "Div" and g.scalar(inverse.input[0]) == 1:
                a, root = first, inverse.input[1]
                used.append(inverse)
                break
        if a is None:
            return None
    sqrt = g.made(root, "Sqrt", used)
    add = sqrt and g.made(sqrt.input[0], "Add", used)
    if add is None:
        return None
    eps = g.scalar(add.input[1]) if g.scalar(add.input[1]) is not None else g.scalar(add.input[0])
    mean_name = add.input[0] if g.scalar(add.input[1]) is not None else add.input[1]
    mean = g.made(mean_name, "ReduceMean", used)
    square = mean and g.producer.get(mean.input[0])
    if eps is None or square is None or not _squares(g, square, a):
        return None
    used.append(square)
    sub = g.producer.get(a)
    if sub is not None and sub.op_type == "Sub":  # LayerNorm: x less its mean
        centre = g.producer.get(sub.input[1])
        if (
            centre is not None
            and centre.op_type == "ReduceMean"
            and centre.input[0] == sub.input[0]
        ):
            return sub.input[0], eps, True, [*used, sub, centre]
    return a, eps, False, used


def _squares(g: _Graph, node: onnx.NodeProto, a: str) -> bool:
    """Whether `node` is a a, or Pow(a, 2)."""
    if node.op_type == "Mul":
        return list(node.input) == [a, a]
    return node.op_type == "Pow" and node.input[0] == a and g.scalar(node.input[1]) == 2.0
