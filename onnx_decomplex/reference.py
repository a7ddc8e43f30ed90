"""The reference evaluator, with the complex meanings it lacks filled in.

`onnx.reference.ReferenceEvaluator` defines what a complex model means. It runs
most ops on complex arrays through numpy, but refuses three that this tool gives a
meaning to:

- `Abs` of a complex value: its type check wants the output type to be the
  input's, while |z| is real. Here it is numpy's `abs`, a real output.
- `DFT` and `STFT` of a complex signal: they read the signal's trailing axis as
  (re, im) and fail. Here the complex signal is packed first, which is what it
  would mean had the caller packed it, and the packed result is read back as a
  complex value.

Two of its `Loop` readings contradict the ONNX spec, and onnxruntime with it;
here `Loop` follows the spec (`quirks` names the models that meet them):

- an empty `cond` input means true; the stock op reads it as false and runs no
  iteration at all;
- scan outputs are stacked on a new first axis; the stock op concatenates them
  (`vstack`), so a scalar or a rank-2 value per iteration comes out in the wrong shape.

Its `Expand` multiplies by ones, which is no broadcast for a complex value: times
1 + 0i, a zero part takes another sign (-0 - 4i becomes +0 - 4i, whose arctan lies
on the other side of the cut) and an infinite part's partner turns NaN. Here `Expand`
broadcasts, as the spec says (for a real value the two agree).

The evaluator checks a deadline (`time_limit`) before every node and every body
run, so a Loop of 10^12 iterations ends in `ValidationTimeout` instead of running on.

Everything else is the stock evaluator.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun
from onnx.reference.ops import load_op
from onnx.reference.ops.op_loop import Loop as _StockLoop

from . import cmath
from .errors import ValidationTimeout
from .graphs import graph_nodes, is_default_domain


def unpack(packed: np.ndarray) -> np.ndarray:
    """Real array of shape S + [2] -> z of shape S, part for part: an infinite part
    stays alone (re + 1j * im would turn inf * 0 into a NaN in the other part)."""
    packed = np.asarray(packed)
    return cmath.join(packed[..., 0], packed[..., 1], np.result_type(packed.dtype, np.complex64))


class Abs(OpRun):
    op_domain = ""

    def _run(self, x):
        return (np.abs(x),)


class Expand(OpRun):
    def _run(self, data, shape):
        dims = np.broadcast_shapes(data.shape, tuple(int(d) for d in shape))
        return (np.broadcast_to(data, dims).copy(),)


class _PackedSignal(OpRun):
    """Runs the stock op of the model's opset, packing a complex signal first."""

    op_domain = ""

    def __init__(self, onnx_node, run_params, schema=None):
        super().__init__(onnx_node, run_params, schema)
        version = run_params["opsets"][""]
        self._stock = load_op("", type(self).__name__, version)(onnx_node, run_params)

    def run(self, x, *args, **kwargs):
        if not np.iscomplexobj(x):
            return self._stock.run(x, *args, **kwargs)
        (out,) = self._stock.run(cmath.pack(x), *args, **kwargs)
        return (unpack(out),)

    def _run(self, *args, **kwargs):  # never called: run() delegates to the stock op
        raise NotImplementedError


class DFT(_PackedSignal):
    pass


class STFT(_PackedSignal):
    pass


class Loop(_StockLoop):
    """The spec's Loop: no `cond` means true; scan outputs stack on a new first axis."""

    op_domain = ""

    def _run(self, M, cond, *args, context=None, body=None, attributes=None, bindings=None):
        cond = np.array(True) if cond is None else cond
        body = self.body
        names = body.input_names
        inputs = dict.fromkeys(names)
        inputs.update(zip(names[2:], args, strict=False))
        inputs.update(context or {})
        scans = [[] for _ in range(self.K)]
        it = 0
        outputs = None
        while cond and (M is None or it < M):
            inputs[names[0]] = np.array(it, dtype=None if M is None else M.dtype)
            inputs[names[1]] = cond
            outputs = self._run_body(inputs, attributes=attributes, bindings=bindings)
            for k in range(self.K):
                scans[k].append(outputs[-self.K + k])
            cond = outputs[self.output_index[body.output_names[0]]]
            for i, o in zip(names[2:], body.output_names[1:], strict=False):
                inputs[i] = outputs[self.output_index[o]]
            it += 1
        carried = [inputs[i] for i in names[2:]] if outputs is None else outputs[1 : 1 + self.N]
        results = [*carried, *(np.stack(s) for s in scans)]
        return self._check_and_fix_outputs(tuple(results))


_limit = threading.local()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Evaluators run in this thread within the block raise `ValidationTimeout` once
    `seconds` have passed (checked between nodes and body runs); None for no limit."""
    before = getattr(_limit, "deadline", None)
    _limit.deadline = None if seconds is None else time.monotonic() + seconds
    _limit.seconds = seconds
    try:
        yield
    finally:
        _limit.deadline = before


@contextmanager
def quietly(seconds: float | None) -> Iterator[None]:
    """`time_limit(seconds)`, with numpy's warnings off: a Cast to real that drops an
    imaginary part, and a value that overflows to inf, are the meaning, not faults."""
    with warnings.catch_warnings(), np.errstate(all="ignore"), time_limit(seconds):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        yield


def _check_deadline() -> None:
    deadline = getattr(_limit, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise ValidationTimeout(
            f"validation ran past its time limit of {_limit.seconds:g} s in the reference evaluator"
        )


def _checked(run):
    def checked_run(*args, **kwargs):
        _check_deadline()
        return run(*args, **kwargs)

    return checked_run


class _Evaluator(ReferenceEvaluator):
    """The stock evaluator, with a deadline check before each node and each run.
    Subgraphs are evaluated by this class too (the stock op makes its body's
    evaluator of the class that made it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for node in self.rt_nodes_:
            node.run = _checked(node.run)

    def run(self, *args, **kwargs):
        _check_deadline()
        return super().run(*args, **kwargs)


MEANINGS = (Abs, DFT, Expand, STFT, Loop)
"""The ops whose meanings above replace the stock evaluator's."""


def evaluator(model: onnx.ModelProto) -> ReferenceEvaluator:
    """A reference evaluator for `model` with the meanings above."""
    return _Evaluator(model, new_ops=list(MEANINGS))


def quirks(model: onnx.ModelProto) -> list[str]:
    """Where the stock evaluator would read `model` against the spec, and this one
    reads it as the spec does: one line each."""
    found = []
    for node in graph_nodes(model.graph):
        if node.op_type != "Loop" or not is_default_domain(node.domain):
            continue
        name = node.name or (node.output[0] if node.output else "?")
        if len(node.input) < 2 or not node.input[1]:
            found.append(
                f"Loop '{name}' has no cond input: run as the spec and onnxruntime do, "
                "not for zero iterations as onnx.reference would"
            )
        body = next((a.g for a in node.attribute if a.name == "body"), None)
        carried = max(len(node.input) - 2, 0)
        if body is not None and len(body.output) > 1 + carried:
            found.append(
                f"Loop '{name}' has scan outputs: stacked on a new first axis as the spec "
                "says, not concatenated as onnx.reference would"
            )
    return found
