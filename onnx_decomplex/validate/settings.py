"""What one `validate` call is asked to do: `Settings`, one frozen object whose fields
are the call's keyword arguments."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import OptionError
from .inputs import EDGES_BY_DEFAULT
from .runners import DEFAULT_TIMEOUT, RUNTIMES, Deadline

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-4

Runner = Callable[[dict[str, np.ndarray]], list[np.ndarray]]
"""Runs the rewrite on packed inputs; its outputs in the original's output order."""


@dataclass(frozen=True)
class Settings:
    """How one `validate` call makes its inputs, runs both sides and judges them.

    Attributes:
        atol: Absolute tolerance.
        rtol: Relative tolerance, against |expected|.
        input_shapes: Shapes for inputs with symbolic dims, by input name (random
            inputs only).
        seed: Seed for random inputs.
        edges: Random float and complex inputs also hold edge values (`edge_values`,
            see `with_edges`); None for `EDGES_BY_DEFAULT`. Given inputs are used as
            they are.
        providers: onnxruntime execution providers, full names in priority order
            (see `resolve_providers`); CPU when None. One that does not load is an
            error, never a quiet fallback to the CPU.
        timeout: Seconds the whole call may take (reference evaluator and
            onnxruntime, not `runner`); None for no limit. A `Deadline` shares one
            limit among several calls.
        expected: The original's outputs, saved by the framework that made it; the
            reference evaluator runs when None.
        reference: Where `expected` came from, for the report, when not from the
            framework that made the model.
        runner: Runs the rewrite on packed inputs instead of a runtime (a TensorRT
            engine, say), returning its outputs in the original's output order.
        runtime: The runtime that runs the rewrite (`RUNTIMES`): "onnxruntime", or
            "openvino" (its CPU plugin, in f32); with `runner`, what it is, for the report.
        trace: Where an output fails, find the first value of the original whose
            counterpart departs (`trace.first_departure`, in onnxruntime).
        rewrite: What the rewrite recorded (`trace.Rewrite`), or a callable that makes
            it again, for `trace`; None to match values by name.
    """

    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    input_shapes: dict[str, tuple[int, ...]] | None = None
    seed: int = 0
    edges: bool | None = None
    providers: list[str] | None = None
    timeout: float | Deadline | None = DEFAULT_TIMEOUT
    expected: list[np.ndarray] | None = field(default=None, repr=False, compare=False)
    reference: str | None = None
    runner: Runner | None = None
    runtime: str = "onnxruntime"
    trace: bool = True
    rewrite: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.runner is None and self.runtime not in RUNTIMES:
            raise OptionError(f"runtime must be one of {', '.join(RUNTIMES)}")
        if self.runner is None and self.runtime != "onnxruntime" and self.providers:
            raise OptionError(
                "--providers names onnxruntime's execution providers; the rewrite runs in "
                f"{self.runtime} here"
            )

    @property
    def own_reference(self) -> bool:
        """Whether the reference evaluator runs the original (no saved outputs)."""
        return self.expected is None

    @property
    def random_edges(self) -> bool:
        """Whether random inputs hold edge values."""
        return EDGES_BY_DEFAULT if self.edges is None else self.edges

    @property
    def reference_name(self) -> str:
        """What the rewrite is compared with, for the report."""
        return self.reference or ("onnx.reference" if self.own_reference else "saved outputs")

    @property
    def runtime_name(self) -> str:
        """What runs the rewrite, for the report: onnxruntime's providers named."""
        if self.runner is None and self.providers:
            return f"{self.runtime} ({', '.join(self.providers)})"
        if self.runner is None and self.runtime == "openvino":
            return "OpenVINO (CPU, f32)"
        return self.runtime

    def deadline(self) -> Deadline:
        """The call's time limit: the `Deadline` given, or a new one from now."""
        return self.timeout if isinstance(self.timeout, Deadline) else Deadline(self.timeout)
