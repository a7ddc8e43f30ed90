"""What a rewrite found and changed."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import onnx

from .contract import Contract, IORow


def initializer_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the main graph's initializers, from their shapes (external data too)."""
    total = 0
    for t in model.graph.initializer:
        if t.data_type == onnx.TensorProto.STRING:
            total += sum(len(s) for s in t.string_data)
            continue
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
        total += math.prod(t.dims) * itemsize
    return total


def op_histogram(model: onnx.ModelProto) -> Counter:
    """Node count per op type in the main graph."""
    return Counter(n.op_type for n in model.graph.node)


@dataclass
class Report:
    """The outcome of `decomplex`.

    Attributes:
        inputs: Complex graph inputs, now packed.
        outputs: Complex graph outputs, now packed.
        initializers: Complex initializers.
        constants: Outputs of complex `Constant` nodes.
        casts: Outputs of casts from real to complex.
        rewritten: How many nodes touched a complex value and were rewritten.
        emitted: How many real nodes the rules emitted, before cleanup.
        ops_before: Node count per op type before the rewrite.
        ops_after: Node count per op type after the rewrite.
        initializer_bytes_before: Initializer bytes before the rewrite.
        initializer_bytes_after: Initializer bytes after the rewrite.
        seconds: Time taken by `decomplex`.
        explanations: One line per rewritten node, saying what its rule did.
        target: The runtime the output is for ("onnx", "onnxruntime", "tensorrt").
        lowered: Nodes lowered for the target, by op type.
        lowering_notes: One line per lowered node, or node kept as it was.
        matrix_bytes: Bytes of the DFT matrices the lowering added.
        narrowed: Places float64 was narrowed to float32, for TensorRT.
        clamped: float64 values clamped to +-FLT_MAX by the narrowing.
        normalized: The native-complex model an exporter's mixed graph means, when
            the model had to be read that way (see `normalize`); None otherwise.
        readings: One line per node read other than as written.
        packed_io: Graph inputs and outputs the exporter declared packed.
        axis0: Nodes read as a complex pair stacked on axis 0.
        warnings: Where the model likely computes something other than its
            exporter's framework did, though it converts as written.
        contract: The packed inputs and outputs, as recorded in the output model's
            metadata (see `contract`).
        io: Every graph input and output, its type before and after.
        pass_seconds: Seconds each pass took, by name, in the order they ran.
    """

    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    initializers: list[str] = field(default_factory=list)
    constants: list[str] = field(default_factory=list)
    casts: list[str] = field(default_factory=list)
    rewritten: int = 0
    emitted: int = 0
    ops_before: Counter = field(default_factory=Counter)
    ops_after: Counter = field(default_factory=Counter)
    initializer_bytes_before: int = 0
    initializer_bytes_after: int = 0
    seconds: float = 0.0
    explanations: list[str] = field(default_factory=list)
    target: str = "onnx"
    lowered: Counter = field(default_factory=Counter)
    lowering_notes: list[str] = field(default_factory=list)
    matrix_bytes: int = 0
    narrowed: list[str] = field(default_factory=list)
    clamped: int = 0
    normalized: onnx.ModelProto | None = field(default=None, repr=False)
    readings: list[str] = field(default_factory=list)
    packed_io: list[str] = field(default_factory=list)
    axis0: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    contract: Contract = field(default_factory=Contract)
    io: list[IORow] = field(default_factory=list)
    pass_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def has_complex(self) -> bool:
        """False when the model held no complex value and was passed through. A model
        read as another (see `normalize`) held some, even where that reading has none
        left (a TensorFlow RFFT read as a DFT, which gives a packed pair)."""
        return bool(
            self.rewritten or self.inputs or self.outputs or self.initializers or self.normalized
        )

    @property
    def changed(self) -> bool:
        """True when the output differs from the input model."""
        return self.has_complex or bool(self.lowered or self.narrowed)

    def found(self) -> dict[str, int]:
        """Complex values found, by kind."""
        return {
            "inputs": len(self.inputs),
            "outputs": len(self.outputs),
            "initializers": len(self.initializers),
            "Constant nodes": len(self.constants),
            "Casts to complex": len(self.casts),
        }
