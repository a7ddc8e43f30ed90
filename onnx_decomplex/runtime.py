"""Run a rewritten model with complex arrays in and out.

    from onnx_decomplex import Session
    session = Session("out.onnx")
    (y,) = session.run(None, {"x": z})   # z complex, any layout; y complex

`Session` reads the model's I/O contract (its `onnx_decomplex.io` metadata, see
`contract`), packs the complex arrays it is given for the inputs it names, and
unpacks the outputs it names, casting where a complex128 value was narrowed to
float32 for TensorRT. Everything else passes to onnxruntime as it is: for a model
with no contract, `Session` is `onnxruntime.InferenceSession`. With
`runtime="openvino"`, the model runs in OpenVINO's CPU plugin (in f32) instead:

    session = Session("out.onnx", runtime="openvino")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx

from .cmath import pack, unpack
from .contract import KEY, Contract, Packed, read_contract
from .dtypes import is_complex_np
from .errors import DecomplexError
from .targets import narrowed_for
from .validate import OPENVINO_CONFIG, RUNTIME_HINT, RUNTIMES, import_openvino
from .validate.runners import openvino_inputs, openvino_outputs, openvino_source


def pack_inputs(contract: Contract | None, feeds: Mapping[str, object]) -> dict:
    """The feeds for the packed model: complex arrays for packed inputs packed (and
    cast to the stored float type); every other feed as it is, but a float64 array in
    a model made for TensorRT, whose float64 inputs were all narrowed to float32. A real
    array given for a packed input is taken as already packed."""
    by_name = {p.name: p for p in contract.inputs} if contract else {}
    narrowed = contract is not None and narrowed_for(contract.target)
    out = {}
    for name, value in feeds.items():
        entry = by_name.get(name)
        if entry is None and narrowed and np.asarray(value).dtype == np.float64:
            out[name] = np.asarray(value, dtype=np.float32)
        elif entry is None:
            out[name] = value
        elif is_complex_np(np.asarray(value).dtype):
            out[name] = pack(value, entry.storage_dtype)
        else:
            out[name] = np.asarray(value, dtype=entry.storage_dtype)
    return out


def unpack_outputs(
    contract: Contract | None, names: Sequence[str], outputs: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """The outputs, packed ones unpacked to the complex type they had."""
    by_name: dict[str, Packed] = {p.name: p for p in contract.outputs} if contract else {}
    return [
        unpack(v, by_name[n].complex_dtype) if n in by_name else v
        for n, v in zip(names, outputs, strict=True)
    ]


class Session:
    """`onnxruntime.InferenceSession` for a rewritten model, with complex arrays in
    and out for the inputs and outputs its contract names.

    Args:
        model: A path, the serialized bytes, or an `onnx.ModelProto` (one kept in
            external data needs its path).
        providers: onnxruntime execution providers, in priority order, as
            onnxruntime takes them (`["CUDAExecutionProvider", "CPUExecutionProvider"]`).
        runtime: "onnxruntime", or "openvino" (its CPU plugin, in f32).
        **ort_options: Passed to `onnxruntime.InferenceSession` (`sess_options`,
            `provider_options`, ...).

    Attributes:
        contract: The model's I/O contract; None for a model that records none.
        session: The onnxruntime session itself, which runs packed arrays; with
            OpenVINO, its compiled model.
    """

    def __init__(
        self,
        model: str | Path | bytes | onnx.ModelProto,
        providers: Sequence[str] | None = None,
        runtime: str = "onnxruntime",
        **ort_options,
    ):
        if runtime not in RUNTIMES:
            raise DecomplexError(f"runtime must be one of {', '.join(RUNTIMES)}")
        self.runtime = runtime
        if runtime == "openvino":
            if providers or ort_options:
                raise DecomplexError("providers and onnxruntime's options are for onnxruntime")
            self._open_openvino(model)
            return
        try:
            import onnxruntime as ort
        except ImportError:
            raise DecomplexError(
                f"Session runs the model in onnxruntime, which is not installed: {RUNTIME_HINT}"
            ) from None
        if isinstance(model, onnx.ModelProto):
            model = model.SerializeToString()
        elif isinstance(model, Path):
            model = str(model)
        self.session = ort.InferenceSession(model, providers=providers, **ort_options)
        recorded = self.session.get_modelmeta().custom_metadata_map.get(KEY)
        self.contract = Contract.from_json(recorded) if recorded else None

    def _open_openvino(self, model) -> None:
        """The model compiled by OpenVINO's CPU plugin; a path lets it find external data."""
        ov = import_openvino()
        recorded, source = openvino_source(model)
        self.contract = read_contract(recorded)
        core = ov.Core()
        self.session = core.compile_model(core.read_model(source), "CPU", OPENVINO_CONFIG)
        self._names = [o.name for o in recorded.graph.output]

    def run(self, output_names, input_feed, run_options=None) -> list[np.ndarray]:
        """Runs the model as `InferenceSession.run` does: complex arrays in for packed
        inputs, complex arrays out for packed outputs."""
        feeds = pack_inputs(self.contract, input_feed)
        if self.runtime == "openvino":
            names = output_names or self._names
            results = self.session(openvino_inputs(self.session, feeds))
            return unpack_outputs(
                self.contract, names, openvino_outputs(self.session, names, results)
            )
        names = output_names or [o.name for o in self.session.get_outputs()]
        outputs = self.session.run(names, feeds, run_options)
        return unpack_outputs(self.contract, names, outputs)

    def __getattr__(self, name: str):
        # get_inputs, get_outputs, get_providers, ...: the packed model's, as they are.
        if name == "session":  # not made: __init__ failed
            raise AttributeError(name)
        return getattr(self.session, name)
