"""What the readings may ask of their walk: the whole interface between them.

The walk's own steps (`nodes`, `bodies`, `inference`, `declared`) and the exporters'
readings take any object with these members; `normalize` hands them a `Walk`. What
the walk knows of a value is keyed by the value's name: its complex type (`kind`) or
real one (`elem`), its logical shape, and the forms of a complex value made so far.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import onnx_graphsurgeon as gs

    from .facts import Shape


class ReadingContext(Protocol):
    """One reading of a whole graph, as its steps and the readings see it."""

    # ---- the graph, and how it is read -------------------------------------------------
    graph: gs.Graph
    opset: dict[str, int]
    mixed: bool  # the exporters' readings apply; else the graph is read as written
    inferred: dict  # shapes inferred, shared by every reading
    output_names: list[str]
    declared_outputs: dict[str, tuple[np.dtype | None, Shape]]

    # ---- what it knows of values -------------------------------------------------------
    kind: dict[str, np.dtype]  # complex values
    elem: dict[str, np.dtype]  # real values
    shape: dict[str, Shape]  # logical shapes
    native: dict[str, gs.Tensor]
    packed: dict[str, gs.Tensor]
    parts: dict[str, tuple[gs.Tensor, gs.Tensor]]
    as_packed: dict[str, str]  # complex values the graph holds packed: "last" or "first"
    built: set[str]  # of those, pairs the graph stacked itself
    from_parts: set[str]  # real values computed from parts of complex ones
    folded: dict[str, np.ndarray]  # small integer values computed
    cast_real: dict[str, tuple[gs.Node, bool]]  # real parts a Cast kept, moved since
    magnitude: dict[str, int]  # Gathers of tf2onnx's magnitude, read already

    # ---- what it found -----------------------------------------------------------------
    conflicts: list
    readings: list[str]
    packed_io: list[str]
    axis0: list[str]
    warnings: list[str]
    evidence: list[str]
    weak: list[str]
    wants_complex: set[str]
    unread: list[gs.Node]
    failures: dict[str, str]
    bodies: list
    splits: bool

    # ---- facts -------------------------------------------------------------------------
    def rank(self, t: gs.Tensor) -> int | None: ...
    def is_float(self, t: gs.Tensor) -> bool: ...
    def constant(self, t: gs.Tensor) -> np.ndarray | None: ...
    def typed(self, t: gs.Tensor, rank: bool = True) -> bool: ...
    def conflict(self, node: gs.Node | None, message: str, tensor: str | None = None) -> None: ...

    # ---- what a value is ---------------------------------------------------------------
    def record(self, t: gs.Tensor, dtype: np.dtype, shape: Shape) -> None: ...
    def set_native(self, out: gs.Tensor, dtype: np.dtype, shape: Shape) -> None: ...
    def keep_label(self, t: gs.Tensor) -> None: ...

    # ---- nodes -------------------------------------------------------------------------
    def infer(self, node: gs.Node, promoted: dict[str, np.dtype] | None = None) -> None: ...
    def plain(self, node: gs.Node) -> None: ...
    def become(self, node: gs.Node, op: str, inputs: list[gs.Tensor]) -> None: ...
    def child(self, graph: gs.Graph, mixed: bool, given: dict[str, np.dtype]) -> ReadingContext: ...

    # ---- emission and the forms of a complex value -------------------------------------
    def unique(self, base: str) -> str: ...
    def emit(self, op: str, inputs: list, attrs: dict | None = None, **kwargs) -> gs.Tensor: ...
    def scalar(self, value, dtype: np.dtype, name: str) -> gs.Constant: ...
    def native_of(self, t: gs.Tensor, dtype: np.dtype | None = None) -> gs.Tensor: ...
    def combine(self, re, im, dtype, shape, name, exact: bool = False) -> gs.Tensor: ...
    def parts_of(self, t: gs.Tensor) -> tuple[gs.Tensor, gs.Tensor]: ...
    def part(self, t: gs.Tensor, index: int) -> gs.Tensor: ...
    def packed_of(self, t: gs.Tensor) -> gs.Tensor: ...
