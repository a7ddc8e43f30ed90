"""The interface between the walk and the readings: the walk has every member the
protocol states, and the readings and the walk's steps ask for no other."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex.normalize import Walk, imported
from onnx_decomplex.normalize.protocol import ReadingContext

PACKAGE = Path(__file__).resolve().parents[2] / "onnx_decomplex" / "normalize"
STEPS = ["nodes", "bodies", "inference", "declared", "jax2onnx", "tf2onnx", "tensorflow_ops"]


def _members(cls) -> set[str]:
    return {n for n in vars(cls) if not n.startswith("_")} | set(cls.__annotations__)


def test_the_walk_has_every_member_the_protocol_states():
    model = make_model([helper.make_node("Neg", ["z"], ["y"])], [vi("z", np.complex64, [2])],
                       [vi("y", np.complex64, [2])])  # fmt: skip
    walk = Walk(imported(model), {"": 18}, True, {}, in_order=True)
    assert {n for n in _members(ReadingContext) if not hasattr(walk, n)} == set()


def test_the_steps_and_readings_ask_only_what_the_protocol_states():
    allowed = _members(ReadingContext)
    asked = {}
    for module in STEPS:
        path = PACKAGE / f"{module}.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("walk", "inner", "then", "other")
            ):
                asked.setdefault(node.attr, module)
    assert len(asked) > 40
    assert {name: where for name, where in asked.items() if name not in allowed} == {}
