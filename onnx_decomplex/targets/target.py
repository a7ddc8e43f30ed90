"""A target: the runtime the output is for, what the rewrite may emit for it, and the
forms its `lower` pass puts in, in order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from .common.lowering import Lowered, lower


@dataclass
class Lowering:
    """One model on its way through a target's forms, and what they changed.

    Attributes:
        model: The model as it now stands; a form replaces it, or edits it in place
            and says so in `notes`.
        opset: Its default-domain opset.
        rewritten: Whether the rewrite made it (the model held complex values).
        transforms: Whether it holds a DFT or an STFT: complex values in ONNX's own
            packed layout, which the forms take as they take a model the rewrite made.
        keep_double: Leave float64 as it is where the target would narrow it.
        external_dir: Where weights still on disk live.
        ops: Nodes lowered, by op type.
        notes: One line per change.
        matrix_bytes: Bytes of the DFT matrices put in.
        narrowed: Where float64 was narrowed to float32.
        clamped: Values clamped to float32's range while narrowing.
    """

    model: onnx.ModelProto
    opset: int
    rewritten: bool
    transforms: bool = False
    keep_double: bool = False
    external_dir: Path | None = None
    ops: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    matrix_bytes: int = 0
    narrowed: list[str] = field(default_factory=list)
    clamped: int = 0

    def edit(self, change: Callable[[onnx.ModelProto], list[str]], kind: str) -> None:
        """Runs `change`, which edits a model in place and returns a note per edit, on a
        copy of the model where it is the input as given (one the rewrite left as it
        was: the input is never modified), else on the model itself; its edits are
        counted in `ops` as `kind`."""
        model = self.model
        if not self.rewritten:
            model = onnx.ModelProto()
            model.CopyFrom(self.model)
        notes = change(model)
        if notes:
            self.model = model
            self.notes += notes
            self.ops[kind] += len(notes)

    def took(self, model: onnx.ModelProto, lowered: Lowered) -> None:
        """Takes the model a lowering made, and adds what it changed."""
        self.model = model
        self.ops.update(lowered.ops)
        self.notes += lowered.notes
        self.matrix_bytes += lowered.matrix_bytes


def lowers(ops: frozenset[str], **keywords) -> Callable[[Lowering], None]:
    """A form's `apply` that replaces the nodes of `ops` by their lowerings
    (`common.lowering.lower`, with its `keywords`)."""

    def apply(step: Lowering) -> None:
        step.took(*lower(step.model, step.opset, ops, **keywords))

    return apply


@dataclass(frozen=True)
class TargetForm:
    """One step of a target's `lower` pass.

    Attributes:
        name: A short name, for docs and tests.
        purpose: What it is for: what it replaces, by what, and why.
        apply: Puts the form in the `Lowering`'s model.
        every_model: Whether it applies to every model the rewrite left as it was
            (what a runtime cannot run at all); otherwise only to one it made or one
            that holds a transform (`Lowering.transforms`).
    """

    name: str
    purpose: str
    apply: Callable[[Lowering], None]
    every_model: bool = False


@dataclass(frozen=True)
class Target:
    """The runtime the output is for.

    Attributes:
        name: The `--target` value.
        summary: What it emits, for `--help`.
        runtime: The runtime that validates its output by default: "onnxruntime" or
            "openvino".
        runs_on: The runtime's name for messages ("TensorRT"); None for any runtime.
        forms: The `lower` pass's forms, in the order they run.
        contrib: The rewrite's rules may emit onnxruntime's own ops and forms:
            com.microsoft.RotaryEmbedding below opset 23, a constant complex MatMul by
            regime (`rules.linalg`).
        reciprocal_divides: The runtime divides a / b as a (1 / b), whose 1 / b overflows
            at a subnormal b: the rewrite's formulas divide by none (`cmath._Divisor`).
        where_drops_negative_zero: The output runs in onnxruntime, whose CPU Where gives
            +0 where it picks a -0 of its second input: a model's own complex Where keeps
            its zeros' signs by a Min (`Ops.where_signed`).
        narrows: float64 is narrowed to float32 (TensorRT has none), unless
            `keep_double`; a model made for it takes float32 where float64 was.
        lints: The result is checked against TensorRT's parser table.
    """

    name: str
    summary: str
    runtime: str
    forms: tuple[TargetForm, ...]
    runs_on: str | None = None
    contrib: bool = False
    reciprocal_divides: bool = False
    where_drops_negative_zero: bool = False
    narrows: bool = False
    lints: bool = False

    def lower(self, lowering: Lowering) -> Lowering:
        """Runs every form that applies, in order."""
        for form in self.forms:
            if form.every_model or lowering.rewritten or lowering.transforms:
                form.apply(lowering)
        return lowering
