"""What validation reports: each output's comparison (`OutputResult`, with its
`EdgeSplit`), the whole call's (`ValidationResult`), and its outputs as
`--save-outputs` writes them (`replay_outputs`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dtypes import is_complex_np
from ..reference import unpack
from .npz import EXPECTED
from .settings import DEFAULT_ATOL, DEFAULT_RTOL


@dataclass
class OutputResult:
    """The comparison of one graph output.

    Attributes:
        name: The output name.
        passed: Every element within atol + rtol * |expected| (NaN matching NaN).
        max_abs: The largest |expected - actual|, complex modulus for complex outputs.
        max_rel: The largest |expected - actual| / |expected|.
        note: Why it failed, when the shapes or dtypes differ.
        max_tol: The largest |expected - actual| / (atol + rtol |expected|): the
            error as a share of the tolerance, whatever the values' scale (1 is the
            tolerance's edge).
        edges: Where the inputs held edge values, the elements of this output that
            depend on them (see `EdgeSplit`); None for no edge values.
        floor_tol: Where it passed only once its precision's noise floor widened its
            tolerance (see `noise`), its worst error as a share of the widened one;
            None otherwise.
        floor_of: The precision whose noise floor that was ("float32", "float64").
    """

    name: str
    passed: bool
    max_abs: float
    max_rel: float
    note: str = ""
    max_tol: float = 0.0
    edges: EdgeSplit | None = None
    floor_tol: float | None = None
    floor_of: str | None = None


@dataclass
class EdgeSplit:
    """One output's elements split by whether their value depends on the inputs' edge
    values (it changes when they are replaced by ordinary ones).

    Attributes:
        elements: How many depend on them.
        max_tol: Their worst error as a share of the tolerance.
        not_finite: How many of them float32 (the model's own precision) holds as an
            infinity or a NaN.
        ordinary_max_rel: The largest relative error on the other elements (0 where
            there are none).
        ordinary_max_tol: Their worst error as a share of the tolerance.
        ordinary: How many other, finite elements there are: 0 where every element
            depends on an edge value, and the two errors above describe none.
    """

    elements: int
    max_tol: float
    not_finite: int
    ordinary_max_rel: float
    ordinary_max_tol: float
    ordinary: int | None = None


@dataclass
class Departure:
    """The first value of the original graph whose counterpart in the rewrite departs
    from the reference, where an output failed (`trace.first_departure`).

    Attributes:
        node: The original node that computes it.
        op: Its op type.
        value: The value.
        max_tol: Its worst error as a share of the tolerance.
        rule: What the rewrite did for that node (its rule's explanation), where known.
        tensors: The rewrite's tensors that hold it.
        shape: (the rewrite's shape, the reference's) where they differ.
    """

    node: str
    op: str
    value: str
    max_tol: float
    rule: str | None = None
    tensors: tuple[str, ...] = ()
    shape: tuple[tuple, tuple] | None = None

    def describe(self) -> str:
        how = f"; rewritten as {self.rule}" if self.rule else ""
        made = f"{self.node} ({self.op})" if self.node else f"a {self.op} node"
        if self.shape is not None:
            got, want = self.shape
            return (f"first departs at {self.value}, made by {made}: shape {tuple(got)}, "
                    f"expected {tuple(want)}{how}")  # fmt: skip
        return (f"first departs at {self.value}, made by {made}: "
                f"{self.max_tol:.2g} of the tolerance{how}")  # fmt: skip


@dataclass
class ValidationResult:
    """Per-output comparisons, what the rewrite was compared with ("onnx.reference"
    or "saved outputs") and what ran it, how long each side took, and the expected
    outputs themselves (for a second runtime to be compared with).

    `notes` says where the reference was read against onnx.reference's own quirks
    (see `reference.quirks`); `edges` gives, per float or complex input, the flat positions
    that hold `EDGE_VALUES`; `actual` holds the rewrite's outputs as the runtime gave
    them (complex ones packed); `departure`, where an output failed, the first value of
    the original whose counterpart departs (`trace`)."""

    outputs: list[OutputResult] = field(default_factory=list)
    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    reference: str = "onnx.reference"
    runtime: str = "onnxruntime"
    reference_seconds: float = 0.0
    runtime_seconds: float = 0.0
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    expected: list[np.ndarray] | None = field(default=None, repr=False)
    notes: list[str] = field(default_factory=list)
    edges: dict[str, list[int]] = field(default_factory=dict)
    actual: list[np.ndarray] | None = field(default=None, repr=False)
    departure: Departure | None = None

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)


def replay_outputs(v: ValidationResult) -> dict[str, np.ndarray]:
    """The outputs of one comparison, as `--save-outputs` writes them: the rewrite's by
    output name, in the original's types (a complex output as a complex array, not
    packed), and what it was compared with as `expected:NAME`, the key `load_saved`
    reads as saved outputs."""
    arrays = {}
    for o, e, a in zip(v.outputs, v.expected or [], v.actual or [], strict=True):
        complex_ = is_complex_np(e.dtype) and a.dtype.kind == "f" and a.shape == (*e.shape, 2)
        arrays[o.name] = unpack(a) if complex_ else a
        arrays[f"{EXPECTED}:{o.name}"] = e
    return arrays
