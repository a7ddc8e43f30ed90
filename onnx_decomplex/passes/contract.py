"""Pass `contract`: graph inputs' defaults put back in the form their inputs now have,
the I/O contract recorded in the output's metadata (see `onnx_decomplex.contract`),
and the report's totals."""

from __future__ import annotations

import time

import onnx
from onnx import numpy_helper
from onnx.external_data_helper import uses_external_data

from .. import cmath, contract
from ..dtypes import is_complex_np
from ..errors import DecomplexError
from ..options import Options
from ..report import initializer_bytes, op_histogram
from .state import State


def run(state: State, options: Options) -> State:
    out, report = _defaults_back(state.model, state.defaults), state.report
    report.contract = contract.contract_of(state.native, out, options.target.target)
    # What the model was made for is recorded wherever the tool made it: a rerun reads it
    # back (a runtime to validate in, float64 narrowed), though nothing is packed.
    if report.contract or state.rewritten or report.lowered or report.narrowed:
        contract.record(out, report.contract)
    report.io = contract.io_rows(state.native, out)
    report.ops_after = op_histogram(out)
    report.initializer_bytes_after = initializer_bytes(out)
    report.seconds = time.perf_counter() - state.start
    state.model = out
    return state


def _defaults_back(model: onnx.ModelProto, defaults: list[onnx.TensorProto]) -> onnx.ModelProto:
    """Puts the defaults of graph inputs back, in the form and type their inputs now
    have (a complex default packed)."""
    if not defaults:
        return model
    if any(uses_external_data(t) for t in defaults):
        raise DecomplexError("a graph input's default value lives in external data: not supported")
    elem = {v.name: v.type.tensor_type.elem_type for v in model.graph.input}
    for t in defaults:
        value = numpy_helper.to_array(t)
        if is_complex_np(value.dtype):
            value = cmath.pack(value)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(elem.get(t.name) or t.data_type)
        model.graph.initializer.append(numpy_helper.from_array(value.astype(dtype), t.name))
    return model
