"""Run a TensorRT engine with complex arrays in and out, as `Session` runs a model.

    from onnx_decomplex.trt.runner import EngineSession
    session = EngineSession("model.plan", "out.onnx")
    (y,) = session.run(None, {"x": z})   # z complex, any layout; y complex

An engine keeps no ONNX metadata, so the I/O contract comes from the rewritten
model it was built from (or is given as a `Contract`). TensorRT and cuda-bindings
are imported on the first `EngineSession`, never before.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx

from ..contract import Contract, read_contract
from ..runtime import pack_inputs, unpack_outputs
from .engine import preflight, run_engine


class EngineSession:
    """A TensorRT engine (`.plan`) run on complex arrays.

    Args:
        plan: The serialized engine.
        model: The rewritten model the engine was built from (a path, whose weights
            are not read, or a loaded model), or its `Contract`; None for an engine
            of a model with no packed input or output.

    Raises:
        EngineError: TensorRT, cuda-bindings or a GPU is missing.
    """

    def __init__(
        self, plan: str | Path, model: str | Path | onnx.ModelProto | Contract | None = None
    ):
        self.plan = Path(plan)
        self.contract = model if isinstance(model, Contract) or model is None else read_contract(model)  # fmt: skip
        self.toolkit = preflight()

    def run(self, output_names: Sequence[str] | None, input_feed) -> list[np.ndarray]:
        """Runs the engine once: complex arrays in for packed inputs, complex arrays
        out for packed outputs; every output when `output_names` is None."""
        outputs = run_engine(self.plan, pack_inputs(self.contract, input_feed), self.toolkit)
        names = list(output_names or outputs)
        return unpack_outputs(self.contract, names, [outputs[n] for n in names])
