"""The runtimes the output is for, one module each: `onnx` (the default, standard ops
for any runtime), `onnxruntime`, `openvino` and `tensorrt`. Each is a `Target` that
lists, in order, the forms its `lower` pass puts in and what each is for; forms that
several targets share are in `shared`, and the machinery they are made of in `common`.

A new target is one module here with one `Target`, and one line in `TARGETS`.
"""

from __future__ import annotations

from .onnx import ONNX
from .onnxruntime import ONNXRUNTIME
from .openvino import OPENVINO
from .target import Lowering, Target, TargetForm
from .tensorrt import TENSORRT

TARGETS: dict[str, Target] = {t.name: t for t in (ONNX, ONNXRUNTIME, OPENVINO, TENSORRT)}
"""Every target, by its `--target` name."""


def narrowed_for(name: str | None) -> bool:
    """Whether a model recorded as made for target `name` had float64 narrowed."""
    target = TARGETS.get(name or "")
    return target is not None and target.narrows


__all__ = ["TARGETS", "TargetForm", "Lowering", "Target", "narrowed_for"]
