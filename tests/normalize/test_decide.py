"""Which reading holds: a graph that reads consistently as written is left alone, a
contradiction the exporters' readings resolve is read their way, and one they leave is
refused naming its node. Every fixture model, each corpus's included."""

from __future__ import annotations

import contextlib
import re

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from click.testing import CliRunner
from conftest import FIXTURE_MODELS, ROOT, fixture_id
from exported import SHAPE, STEPS, Export, like_layers, program
from helpers import vi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx_decomplex.cli.main import main

from onnx_decomplex import decomplex, validate
from onnx_decomplex.graphs import gs_graphs
from onnx_decomplex.normalize import NormalizeError, decide, imported, normalize, unknown_values


def test_a_valid_native_model_is_left_alone():
    model = onnx.load(ROOT / "fixtures" / "rope_freqs_initializer.onnx")
    assert normalize(model).model is model


def test_a_plainly_real_model_is_not_walked(monkeypatch):
    walks = []
    monkeypatch.setattr(decide, "Walk", lambda *a, **k: walks.append(a))
    model = onnx.load(ROOT / "fixtures" / "no_complex.onnx")
    assert normalize(model).model is model and walks == []


def _contradiction():
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE), vi("w", np.float32, [5])]
    re, _ = e.split(("z", "typed"))
    out = e.op("Add", re, "w")
    return e.model([vi(out, np.float32, SHAPE)]), out


def test_a_graph_with_no_consistent_reading_is_refused_naming_the_node():
    model, out = _contradiction()
    with pytest.raises(NormalizeError, match="no consistent reading") as info:
        normalize(model)
    assert info.value.node == f"{out}_node" and info.value.op_type == "Add"


def test_the_cli_refuses_it_in_one_line_and_writes_nothing(tmp_path):
    model, out = _contradiction()
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    before = src.read_bytes()
    result = CliRunner().invoke(main, [str(src), str(tmp_path / "o.onnx")])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert str(src) in line and f"{out}_node" in line and "(Add)" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
    assert src.read_bytes() == before


# ---- every value typed ------------------------------------------------------------------

REFUSED = {"jax2onnx/cumprod.onnx": "node_CumProd_0"}
"""Fixtures normalize refuses because it cannot type a value: the node it names."""


@pytest.mark.parametrize("path", FIXTURE_MODELS, ids=fixture_id)
def test_normalize_leaves_no_value_untyped(path):
    """Every value of the model normalize writes, every corpus's, has a known type and
    rank; where it cannot tell one, it refuses and names the node."""
    model = onnx.load(str(path))
    named = REFUSED.get(fixture_id(path))
    if named is not None:
        with pytest.raises(NormalizeError, match=f"node '{named}'.*cannot tell the type"):
            normalize(model)
        return
    assert unknown_values(normalize(model).model) == []


# ---- the reading as written only reads; the mixed one is spared where it cannot matter --


def _labels(graph: gs.Graph) -> list:
    return [(t.name, t.dtype, t.shape, t.type) for g in gs_graphs(graph)
            for t in g.tensors().values() if isinstance(t, gs.Variable)]  # fmt: skip


@pytest.mark.parametrize("path", FIXTURE_MODELS, ids=fixture_id)
def test_the_reading_as_written_leaves_its_graph_as_it_found_it(path):
    model = onnx.load(str(path))
    graph = imported(model)
    before, nodes = _labels(graph), [(n.op, [t.name for t in n.inputs]) for n in graph.nodes]
    with contextlib.suppress(NormalizeError):  # refused or not, it only read
        normalize(model, graph)
    assert _labels(graph) == before
    assert [(n.op, [t.name for t in n.inputs]) for n in graph.nodes] == nodes


def _read_both_ways(model, monkeypatch):
    """normalize(model) as it runs, and with the mixed reading never spared."""
    may_read_packed = decide._may_read_packed
    calls = []

    def noted(graph):
        calls.append(may_read_packed(graph))
        return calls[-1]

    monkeypatch.setattr(decide, "_may_read_packed", noted)
    fast = normalize(model)
    monkeypatch.setattr(decide, "_may_read_packed", lambda g: True)
    slow = normalize(model)
    return fast, slow, calls


def _same(fast, slow):
    assert fast.readings == slow.readings and fast.packed_io == slow.packed_io
    assert fast.model.SerializeToString() == slow.model.SerializeToString()


@pytest.mark.parametrize("path", FIXTURE_MODELS, ids=fixture_id)
def test_sparing_the_mixed_reading_changes_no_outcome(path, monkeypatch):
    model = onnx.load(str(path))
    try:
        fast, slow, _ = _read_both_ways(model, monkeypatch)
    except NormalizeError as e:
        monkeypatch.undo()
        with pytest.raises(NormalizeError, match=re.escape(str(e))):
            normalize(model)
        return
    _same(fast, slow)


def test_a_pair_nothing_computes_on_spares_the_mixed_reading(monkeypatch):
    model = like_layers(3)  # splits a pair, multiplies only typed values
    fast, slow, calls = _read_both_ways(model, monkeypatch)
    assert calls == [False]
    _same(fast, slow)


def test_a_pair_an_op_reads_whole_is_read(monkeypatch):
    """Exp of a stacked pair (a packed input's conjugate) is evidence: the mixed
    reading runs, and applies."""
    e = Export()
    e.inputs.append(vi("p", np.float32, [*SHAPE, 2]))
    real, imag = e.split(("p", "last"))
    pair, _ = e.pair(real, e.op("Neg", imag))
    out = e.op("Exp", pair)
    model = e.model([vi(out, np.float32, [*SHAPE, 2])])
    fast, slow, calls = _read_both_ways(model, monkeypatch)
    assert calls == [True] and fast.changed
    _same(fast, slow)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=6),
    typed=st.tuples(st.booleans(), st.booleans()),
)
def test_random_exporter_graphs_read_alike_spared_or_not(steps, typed):
    built = program(steps, typed)
    if built is None:
        return
    with pytest.MonkeyPatch.context() as monkeypatch:
        _same(*_read_both_ways(built[0], monkeypatch)[:2])


def _reversed(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = list(out.graph.node)[::-1]
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    return out


@pytest.mark.parametrize("path", FIXTURE_MODELS[::7], ids=fixture_id)
def test_nodes_out_of_order_read_as_in_order(path):
    model = onnx.load(str(path))
    try:
        sorted_ = normalize(model)
    except NormalizeError as e:
        with pytest.raises(NormalizeError, match=re.escape(str(e).split(":")[0])):
            normalize(_reversed(model))
        return
    shuffled = normalize(_reversed(model))
    assert sorted(shuffled.readings) == sorted(sorted_.readings)
    assert sorted(shuffled.packed_io) == sorted(sorted_.packed_io)
    if sorted_.changed:  # what it means, converted from either order
        out, _ = decomplex(_reversed(model))
        assert validate(sorted_.model, out, edges=False).passed
