"""What a rewrite found and changed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import onnx


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
        seconds: Time taken by `decomplex`.
        explanations: One line per rewritten node, saying what its rule did.
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
    seconds: float = 0.0
    explanations: list[str] = field(default_factory=list)

    @property
    def has_complex(self) -> bool:
        """False when the model held no complex value and was passed through."""
        return bool(self.rewritten or self.inputs or self.outputs or self.initializers)

    def found(self) -> dict[str, int]:
        """Complex values found, by kind."""
        return {
            "inputs": len(self.inputs),
            "outputs": len(self.outputs),
            "initializers": len(self.initializers),
            "Constant nodes": len(self.constants),
            "Casts to complex": len(self.casts),
        }
