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

Everything else is the stock evaluator.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun
from onnx.reference.ops import load_op

from . import cmath


class Abs(OpRun):
    op_domain = ""

    def _run(self, x):
        return (np.abs(x),)


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
        return (cmath.unpack(out),)

    def _run(self, *args, **kwargs):  # never called: run() delegates to the stock op
        raise NotImplementedError


class DFT(_PackedSignal):
    pass


class STFT(_PackedSignal):
    pass


def evaluator(model: onnx.ModelProto) -> ReferenceEvaluator:
    """A reference evaluator for `model` with the complex meanings above."""
    return ReferenceEvaluator(model, new_ops=[Abs, DFT, STFT])
