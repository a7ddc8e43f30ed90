"""A graph's inputs and outputs against what they declare.

A graph input or output declared real `S + [2]` for a complex value of shape S is
its packed declaration; the normalized model declares it complex S. Such an input
is read as complex when a Gather splits it on its last axis (`split_inputs`), when it
meets a complex operand (`Walk.wants_complex`), or when no other reading is free of
contradictions (`packed_inputs`). An output computed complex and declared real,
packed or by its logical shape alone, is declared complex; any other output whose
type or shape is not the one computed is a contradiction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import onnx_graphsurgeon as gs

from ..dtypes import is_complex_np
from .facts import Shape, dims_equal

if TYPE_CHECKING:
    from .protocol import ReadingContext


def check_outputs(walk: ReadingContext) -> None:
    """Each output of `walk`'s graph against its declaration: the complex ones declared
    complex, typed and given in their native form."""
    for i, t in enumerate(walk.graph.outputs):
        if t.name not in walk.kind:
            _real_output(walk, t)
            continue
        dtype, declared = walk.declared_outputs[t.name]
        if dtype is not None and not is_complex_np(dtype):
            read, declared = _packed_output(walk, t, declared)
            if not read:
                continue
        shape = walk.shape.get(t.name)
        if not dims_equal(shape, declared):
            walk.conflict(_producer(t), f"computed shape {shape}, declared {declared}", t.name)
        _native_output(walk, i, t, declared)


def _producer(t: gs.Tensor) -> gs.Node | None:
    return t.inputs[0] if t.inputs else None


def _real_output(walk: ReadingContext, t: gs.Tensor) -> None:
    """A real output, or one whose type the walk cannot know: as declared, or a
    contradiction."""
    if t.name not in walk.elem:
        return  # made by an op whose outputs this walk cannot know
    dtype, declared = walk.declared_outputs[t.name]
    shape = walk.shape.get(t.name)
    if dtype is not None and is_complex_np(dtype):
        walk.conflict(_producer(t), "declared complex, computed real", t.name)
    elif not dims_equal(shape, declared):
        walk.conflict(_producer(t), f"computed shape {shape}, declared {declared}", t.name)


def _packed_output(walk: ReadingContext, t: gs.Tensor, declared: Shape) -> tuple[bool, Shape]:
    """(True, the logical shape it declares) for a complex output declared real, packed
    or by its logical shape alone; (False, None), with a contradiction, otherwise."""
    shape = walk.shape.get(t.name)
    rank = None if shape is None else len(shape)
    if not walk.mixed:
        walk.conflict(_producer(t), f"complex of shape {shape}, declared real {declared}", t.name)
        return False, None
    packed = declared is not None and declared[-1:] == [2]
    if packed and rank in (None, len(declared) - 1):
        walk.packed_io.append(f"output '{t.name}'")
        return True, declared[:-1]
    if declared is None or rank is None or rank == len(declared):
        # Declared by its logical shape alone: written packed, S + [2].
        walk.packed_io.append(f"output '{t.name}' (declared {declared}, complex)")
        return True, declared
    walk.conflict(_producer(t), f"complex of shape {shape}, declared real {declared}", t.name)
    return False, None


def _native_output(walk: ReadingContext, i: int, t: gs.Tensor, declared: Shape) -> None:
    """Output `i`, complex value `t`, typed complex under its own name."""
    kind = walk.kind[t.name]
    value = walk.native_of(t)
    if value is not t:
        t.name = walk.unique(f"{t.name}_packed")
        _rename(walk, t, walk.output_names[i])
        out = gs.Variable(walk.output_names[i], dtype=kind, shape=declared)
        node = gs.Node("Identity", name=walk.unique(f"{out.name}_identity"))
        node.inputs, node.outputs = [value], [out]
        walk.graph.nodes.append(node)
        walk.graph.outputs[i] = out
    elif isinstance(t, gs.Variable):
        walk.keep_label(t)
        t.dtype, t.shape = kind, declared


def _rename(walk: ReadingContext, t: gs.Tensor, was: str) -> None:
    """Keeps what the walk knows of `t` under its new name."""
    for known in (walk.kind, walk.elem, walk.shape, walk.native, walk.packed, walk.parts):
        if was in known:
            known[t.name] = known[was]


def packed_inputs(walk: ReadingContext) -> set[str]:
    """Real inputs declared with a trailing 2: each may be a complex value, packed."""
    return {
        t.name
        for t in walk.graph.inputs
        if t.name not in walk.kind
        and walk.is_float(t)
        and (walk.shape.get(t.name) or [])[-1:] == [2]
    }


def split_inputs(walk: ReadingContext) -> set[str]:
    """Inputs declared real `S + [2]` that a Gather splits on the last axis: how the
    exporter reads the parts of a complex value it packed."""
    found = set()
    for name in packed_inputs(walk):
        t = walk.graph.tensors()[name]
        rank = walk.rank(t)
        for node in t.outputs:
            if node.op != "Gather" or node.inputs[0] is not t:
                continue
            index = walk.constant(node.inputs[1])
            axis = int(node.attrs.get("axis", 0))
            if (
                index is not None
                and index.ndim == 0
                and int(index) in (0, 1)
                and axis in (-1, rank - 1)
            ):
                found.add(name)
    return found
