"""Single-node mutants of a converted model: each a change a buggy rule could make.

    add_sub          Add <-> Sub
    sub_swapped      Sub(a, b) -> Sub(b, a)
    neg_dropped      Neg(x) -> Identity(x)
    sign_flipped     a float constant (an initializer or a Constant) times -1
    part_swapped     Gather(x, 0|1, axis=-1) -> the other index (re <-> im)
    concat_swapped   Concat(a, b) -> Concat(b, a)
    axes_swapped     Transpose(perm) with two of its axes swapped

`mutants(model)` lists every one that applies, seeded and in a fixed order, as
(description, mutated model); whether it changes any output is for the caller to run.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np
import onnx
from onnx import numpy_helper

from onnx_decomplex.constants import node_value


def _constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    found = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        value = node_value(node)
        if value is not None:
            found[node.output[0]] = value
    return found


def _sites(model: onnx.ModelProto) -> Iterator[tuple[str, int, object]]:
    """(kind, node index, detail) for each place a mutation applies."""
    constants = _constants(model)
    for i, node in enumerate(model.graph.node):
        op = node.op_type
        if op in ("Add", "Sub"):
            yield "add_sub", i, None
        if op == "Sub":
            yield "sub_swapped", i, None
        if op == "Neg":
            yield "neg_dropped", i, None
        if op == "Gather" and len(node.input) == 2:
            index = constants.get(node.input[1])
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            if index is not None and index.ndim == 0 and int(index) in (0, 1) and axis == -1:
                yield "part_swapped", i, None
        if op == "Concat" and len(node.input) == 2 and node.input[0] != node.input[1]:
            yield "concat_swapped", i, None
        if op == "Transpose":
            perm = next((list(a.ints) for a in node.attribute if a.name == "perm"), None)
            if perm is not None and len(perm) >= 2:
                yield "axes_swapped", i, None
        if op == "Constant":
            value = node_value(node)
            if value is not None and value.dtype.kind == "f" and np.any(value):
                yield "sign_flipped", i, None
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE)
    for j, t in enumerate(model.graph.initializer):
        if t.data_type in floats and not t.external_data and np.any(numpy_helper.to_array(t)):
            yield "sign_flipped", -1 - j, None


def _apply(model: onnx.ModelProto, kind: str, i: int, rng: np.random.Generator) -> str:
    """Mutates `model` in place; returns what changed."""
    if i < 0:  # an initializer
        t = model.graph.initializer[-1 - i]
        t.CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(t), t.name))
        return f"{kind} {t.name}"
    node = model.graph.node[i]
    if kind == "add_sub":
        node.op_type = "Sub" if node.op_type == "Add" else "Add"
    elif kind in ("sub_swapped", "concat_swapped"):
        node.input[0], node.input[1] = node.input[1], node.input[0]
    elif kind == "neg_dropped":
        node.op_type = "Identity"
    elif kind == "part_swapped":
        index = _constants(model)[node.input[1]]
        name = f"{node.name}_other_part"
        model.graph.initializer.append(numpy_helper.from_array(1 - index, name))
        node.input[1] = name
    elif kind == "axes_swapped":
        attr = next(a for a in node.attribute if a.name == "perm")
        a, b = rng.choice(len(attr.ints), 2, replace=False)
        attr.ints[a], attr.ints[b] = attr.ints[b], attr.ints[a]
    elif kind == "sign_flipped":
        attr = next(a for a in node.attribute if a.name == "value")
        attr.t.CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(attr.t), attr.t.name))
    return f"{kind} {node.name or node.op_type}"


def mutants(model: onnx.ModelProto, seed: int = 0) -> Iterator[tuple[str, onnx.ModelProto]]:
    """Every single-node mutant of `model`, in a fixed order."""
    rng = np.random.default_rng(seed)
    for kind, i, _ in list(_sites(model)):
        mutant = copy.deepcopy(model)
        yield _apply(mutant, kind, i, rng), mutant
