"""The rewrite loop: data movement on constants is done at rewrite time."""

import numpy as np
from helpers import assert_rewrites, crandn, init, make_model, op_types, vi
from onnx import helper

RNG = np.random.default_rng(0)


def test_data_movement_on_a_constant_is_folded(cdtype):
    m = make_model(
        [
            helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
            helper.make_node("Reshape", ["wt", "shape"], ["wr"]),
            helper.make_node("Add", ["a", "wr"], ["y"]),
        ],
        [vi("a", cdtype, [4, 3])],
        [vi("y", cdtype, [4, 3])],
        [init("w", crandn(RNG, [3, 4], cdtype)), init("shape", np.array([4, 3]))],
    )
    out = assert_rewrites(m)
    assert op_types(out) == ["Add"]


def test_a_constant_too_large_to_fold_is_moved_at_run_time(cdtype, monkeypatch):
    from onnx_decomplex import rewrite

    monkeypatch.setattr(rewrite, "MAX_FOLDED_ELEMENTS", 4)
    m = make_model(
        [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
         helper.make_node("Add", ["a", "wt"], ["y"])],
        [vi("a", cdtype, [4, 3])],
        [vi("y", cdtype, [4, 3])],
        [init("w", crandn(RNG, [3, 4], cdtype))],
    )  # fmt: skip
    out = assert_rewrites(m)
    assert "Transpose" in op_types(out)
