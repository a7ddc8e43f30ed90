"""The rewrite loop: data movement on constants is done at rewrite time."""

import numpy as np
import onnx
import pytest
from conftest import FIXTURE_MODELS, ROOT, fixture_id
from helpers import assert_rewrites, crandn, init, make_model, op_types, run_ort, vi
from onnx import helper, numpy_helper

from onnx_decomplex import decomplex, tidy
from onnx_decomplex.cmath import pack, unpack
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.graphs import topologically_sorted
from onnx_decomplex.passes import tidy as tidy_pass

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


def test_an_output_folded_to_a_constant_keeps_its_name(cdtype):
    """A complex output computed from constants alone is folded at rewrite time, into a
    packed constant under the output's name."""
    m = make_model(
        [helper.make_node("ReduceSum", ["w"], ["s"], keepdims=0),
         helper.make_node("Cast", ["s"], ["y"], to=14),
         helper.make_node("Mul", ["a", "a"], ["z"])],
        [vi("a", cdtype, [2])],
        [vi("y", np.complex64, []), vi("z", cdtype, [2])],
        [init("w", crandn(RNG, [3], cdtype))],
    )  # fmt: skip
    out = assert_rewrites(m)
    assert [o.name for o in out.graph.output] == ["y", "z"]


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


def test_an_initializer_that_is_also_an_input_stays_an_input_with_its_default():
    """A default the caller may override: no rule folds it as a constant."""
    w = np.array([5, 5j], np.complex64)
    model = make_model([helper.make_node("Mul", ["x", "w"], ["y"])],
                       [vi("x", np.complex64, [2]), vi("w", np.complex64, [2])],
                       [vi("y", np.complex64, [2])], [numpy_helper.from_array(w, "w")])  # fmt: skip
    x, other = np.array([1j, 2], np.complex64), np.array([1, 1j], np.complex64)
    out = assert_rewrites(model, feeds={"x": x, "w": other})
    assert [v.name for v in out.graph.input] == ["x", "w"]
    (y,) = run_ort(out, {"x": pack(x)})  # w left out: its default
    np.testing.assert_allclose(unpack(y), x * w, rtol=1e-6)


CONVERTED = [p for p in sorted(ROOT.glob("fixtures/*.onnx")) if p.name != "complex_relu.onnx"]
"""The fixtures that convert (a complex Relu is refused)."""


@pytest.mark.parametrize("path", CONVERTED, ids=lambda p: p.name)
def test_what_a_rule_emits_takes_its_nodes_place(path, monkeypatch):
    """The rewrite of a sorted graph comes out sorted as it stands: tidy sorts nothing."""
    found = []
    gs_sorted = tidy.gs_sorted

    def noted(graph):
        found.append(gs_sorted(graph))
        return found[-1]

    monkeypatch.setattr(tidy, "gs_sorted", noted)
    out, _ = decomplex(onnx.load(str(path)))
    assert found in ([], [True])  # no graph to tidy where nothing was complex
    assert topologically_sorted(out.graph)


@pytest.mark.parametrize("path", FIXTURE_MODELS, ids=fixture_id)
def test_the_export_writes_no_labels_to_drop(path, monkeypatch):
    """The labels of the values nodes make come off before the export, which would
    write them as value_info that is then dropped: the model comes out the same."""
    model = onnx.load(str(path))
    written = []
    keep = tidy_pass.keep_model_fields

    def noted(src, dst):
        written.append(len(dst.graph.value_info))
        keep(src, dst)

    monkeypatch.setattr(tidy_pass, "keep_model_fields", noted)
    try:
        out, _ = decomplex(model)
    except DecomplexError:
        pytest.skip("refused")
    assert not any(written)  # none where nothing was complex
    monkeypatch.setattr(tidy_pass, "drop_labels", lambda graph: None)
    labeled, _ = decomplex(model)
    assert out.SerializeToString() == labeled.SerializeToString()
