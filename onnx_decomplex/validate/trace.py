"""Where a failed output starts to fail: the first value of the original graph, in its
order, whose counterpart in the rewrite departs from the reference.

The rewrite records, as it writes, the tensors that hold each complex value (`Held`):
its packed tensor S + [2], or its (re, im) pair; a real value keeps its name. Both models
run once more on the failed comparison's inputs, every such value an output: the original
in the reference evaluator (its intermediate values), the rewrite in onnxruntime. The
values are compared in the original's node order at the comparison's tolerance, and the
first beyond it is the `Departure`: the node that made it, its op, and what its rule did.

A value the target's forms fused away (its tensors are gone from the rewrite) is skipped;
one of another shape is the departure only where no value departs in number. Without `Held` (a conversion made elsewhere), the values
whose names both models hold are compared: the real ones, and complex ones held packed
under their own name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx

from .. import cmath
from ..dtypes import is_complex_np
from ..reference import evaluator, quietly, unpack
from .judge import errors
from .results import Departure
from .runners import run_onnxruntime

Held = dict[str, tuple[str, ...]]
"""Complex value name -> ("packed", tensor) or ("pair", re, im), in the rewrite."""


@dataclass
class Rewrite:
    """What a rewrite recorded, for tracing: the tensors that hold each complex value
    (`Forms.held`), and what each rule did (`Context.explain`)."""

    held: Held
    explanations: list[str]


def _counterparts(original: onnx.ModelProto, rewritten: onnx.ModelProto, held: Held | None):
    """(original node, value, the rewrite's tensors and how they hold it), in node order,
    for every value of the original's main graph the rewrite still holds."""
    present = {out for node in rewritten.graph.node for out in node.output}
    present |= {i.name for i in rewritten.graph.input}
    for node in original.graph.node:
        for value in node.output:
            if not value:
                continue
            how = (held or {}).get(value)
            if how is not None and all(name in present for name in how[1:]):
                yield node, value, how
            elif value in present:
                yield node, value, ("same", value)


def _actual(how: tuple[str, ...], values: dict[str, np.ndarray]) -> np.ndarray:
    kind, *names = how
    if kind == "pair":
        re, im = (values[n] for n in names)
        return cmath.join(re, im, np.result_type(re, np.complex64))
    return values[names[0]]


def _exposed(rewritten: onnx.ModelProto, names: list[str]) -> onnx.ModelProto:
    """A copy of `rewritten` with `names` among its outputs."""
    model = onnx.ModelProto()
    model.CopyFrom(rewritten)
    outputs = {o.name for o in model.graph.output}
    for name in dict.fromkeys(names):
        if name not in outputs:
            model.graph.output.append(onnx.helper.make_value_info(name, onnx.TypeProto()))
    return model


def first_departure(
    original: onnx.ModelProto,
    rewritten: onnx.ModelProto,
    inputs: dict[str, np.ndarray],
    atol: float,
    rtol: float,
    rewrite: Rewrite | Callable[[], Rewrite | None] | None = None,
    timeout: float | None = None,
) -> Departure | None:
    """The first value of `original`, in node order, whose counterpart in `rewritten`
    departs from the reference on `inputs` beyond `atol + rtol |expected|`; None where
    none does, or where either side cannot run again (this only explains a failure).
    `rewrite` is what the rewrite recorded, or makes it again when called; None to
    match values by name."""
    try:
        rewrite = rewrite() if callable(rewrite) else rewrite
    except Exception:  # the rewrite cannot be made again here: values match by name
        rewrite = None
    held, explanations = (rewrite.held, rewrite.explanations) if rewrite else (None, None)
    pairs = list(_counterparts(original, rewritten, held))
    names = [name for _, _, how in pairs for name in how[1:]]
    if not pairs:
        return None
    packed = {k: cmath.pack(v) if is_complex_np(v.dtype) else v for k, v in inputs.items()}
    try:
        with quietly(timeout):
            expected = evaluator(original).run(None, inputs, intermediate=True)
        model = _exposed(rewritten, names)
        got = run_onnxruntime(model, packed, None, timeout)
    except Exception:  # an explanation only: the verdict stands without it
        return None
    order = [o.name for o in model.graph.output]
    values = dict(zip(order, got, strict=True))
    rules = _rules(explanations or [])
    misshapen = None  # the first value of another shape, where no value departs
    for node, value, how in pairs:
        e = expected.get(value)
        if not isinstance(e, np.ndarray) or e.dtype.kind not in "fc":
            continue  # a sequence, an integer or a boolean value
        if not all(isinstance(values.get(name), np.ndarray) for name in how[1:]):
            continue
        a = _actual(how, values)
        if how[0] != "pair" and is_complex_np(np.asarray(e).dtype) and a.shape[-1:] == (2,):
            a = unpack(a)
        if a.shape != np.shape(e):
            if misshapen is None:
                misshapen = Departure(node.name, node.op_type, value, np.inf,
                                      rules.get(node.name), how[1:], shape=(a.shape, np.shape(e)))  # fmt: skip
            continue
        _, _, share = errors(np.asarray(e), a, atol, rtol)
        worst = float(np.max(share, initial=0.0))
        if worst > 1:
            return Departure(node.name, node.op_type, value, worst, rules.get(node.name), how[1:])
    return misshapen


def _rules(explanations: list[str]) -> dict[str, str]:
    """The rule's explanation per node name, from `Context.explain`'s "name (Op): how"."""
    found = {}
    for line in explanations:
        head, _, how = line.partition("): ")
        name = head.rpartition(" (")[0]
        if name and how:
            found.setdefault(name, how)
    return found
