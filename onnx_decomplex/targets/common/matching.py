"""A read-only view of a graph for the forms that find a formula by its ops: each
value's producer and readers, small constants, and shapes as inference gives them."""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import numpy_helper

from ...constants import evaluable, evaluate
from ...shapes import declared_dims, infer_shapes

MAX_CONSTANT = 1 << 16
"""The most values of a constant read as an eps, an axis, a scale or a weight."""


def perm(node: onnx.NodeProto) -> list[int] | None:
    """A Transpose's perm, None where it has none (it reverses the axes)."""
    return next((list(a.ints) for a in node.attribute if a.name == "perm"), None)


class Matched:
    """What the matching reads: each value's producer and readers, constants, shapes."""

    def __init__(self, model: onnx.ModelProto):
        graph = model.graph
        self.producer = {out: n for n in graph.node for out in n.output}
        self.readers: dict[str, int] = {}
        for n in graph.node:
            for name in n.input:
                self.readers[name] = self.readers.get(name, 0) + 1
        for o in graph.output:
            self.readers[o.name] = self.readers.get(o.name, 0) + 1
        self.tensors = {t.name: t for t in graph.initializer}
        for n in graph.node:
            if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
                self.tensors[n.output[0]] = n.attribute[0].t
        self.model, self._values = model, None

    def constant(self, name: str) -> np.ndarray | None:
        """A small constant's value; None for any other (weights on disk are not read)."""
        t = self.tensors.get(name)
        if t is None or t.data_location == onnx.TensorProto.EXTERNAL:
            return None
        if math.prod(t.dims) > MAX_CONSTANT:
            return None
        return numpy_helper.to_array(t)

    def computed(self, name: str, opset: int, most: int, budget: list[int]) -> np.ndarray | None:
        """`name`'s value where it is an initializer or a Constant, or computed from them
        by at most `budget[0]` nodes in all (`constants.evaluate`), of up to `most` values
        each; else None (weights on disk are not read)."""
        t = self.tensors.get(name)
        if t is not None:
            if t.data_location == onnx.TensorProto.EXTERNAL or math.prod(t.dims) > most:
                return None
            return numpy_helper.to_array(t)
        node = self.producer.get(name)
        if node is None or budget[0] <= 0 or not evaluable(node.op_type, node.domain):
            return None
        budget[0] -= 1
        known = {}
        for i in filter(None, node.input):
            known[i] = self.computed(i, opset, most, budget)
            if known[i] is None:
                return None
        outputs = evaluate(node, known, opset)
        if outputs is None:
            return None
        value = np.asarray(outputs[list(node.output).index(name)])
        return value if value.size <= most else None

    def scalar(self, name: str) -> float | None:
        value = self.constant(name)
        return float(value.reshape(())) if value is not None and value.size == 1 else None

    @property
    def values(self) -> dict:
        """The value infos shape inference gives, by name: inferred once, where a formula
        is found."""
        if self._values is None:
            inferred = infer_shapes(self.model)
            values = [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]
            self._values = {v.name: v for v in values}
        return self._values

    def dims(self, name: str) -> list:
        """`known_dims`, but [] for a value inference does not name."""
        known = self.known_dims(name)
        return known if known is not None or name in self.values else []

    def known_dims(self, name: str) -> list | None:
        """`name`'s dims, None where inference gave no shape (not rank 0, as `dims` has
        it: a Loop's output, say)."""
        if name in self.tensors:
            return list(self.tensors[name].dims)
        return declared_dims(self.values[name]) if name in self.values else None

    def elem(self, name: str) -> int | None:
        if name in self.tensors:
            return self.tensors[name].data_type
        return self.values[name].type.tensor_type.elem_type if name in self.values else None

    def made(self, name: str, op: str, used: list, alone: bool = False) -> onnx.NodeProto | None:
        """The node of type `op` that makes `name` (with `alone`, only where nothing else
        reads it); `used` collects it."""
        node = self.producer.get(name)
        if node is None or node.op_type != op or node.domain not in ("", "ai.onnx"):
            return None
        if alone and self.readers.get(name) != 1:
            return None
        used.append(node)
        return node

    def only_reader(self, name: str, nodes) -> onnx.NodeProto | None:
        """The one node that reads `name`, where one does, once."""
        if self.readers.get(name) != 1:
            return None
        return next((n for n in nodes if name in n.input), None)
