"""normalize: an exporter's mixed graph read as the native-complex model it means.

Each test builds a graph the way jax2onnx writes one (parts read with Gather on the
pair axis, pairs stacked with Concat(Unsqueeze), typed-complex values read as
packed), converts it, and compares with numpy on complex arrays.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from click.testing import CliRunner
from conftest import FIXTURE_MODELS, ROOT, fixture_id
from helpers import init, make_model, vi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx_decomplex.cli.main import main

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.cmath import pack
from onnx_decomplex.graphs import gs_graphs
from onnx_decomplex.normalize import NormalizeError, normalize
from onnx_decomplex.normalize import decide as normalize_module
from onnx_decomplex.tidy import name_nodes

SHAPE = (3, 4)
RANK = len(SHAPE)


class Export:
    """A graph written as jax2onnx writes complex arithmetic.

    A complex value is a name and where its pair lives: "typed" (a complex tensor,
    its parts read on axis rank), "last" (a real [..., 2]) or "first" (a real [2, ...]).
    """

    def __init__(self):
        self.nodes, self.inits, self.inputs, self.n = [], [], [], 0
        self.ranks = {}  # of constants; every other value has rank RANK

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, value) -> str:
        name = self.fresh("const")
        self.inits.append(init(name, value))
        self.ranks[name] = np.ndim(value)
        return name

    def op(self, op: str, *inputs: str, **attrs) -> str:
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=f"{out}_node", **attrs))
        return out

    def split(self, value) -> tuple[str, str]:
        name, where = value
        axis = 0 if where == "first" else self.ranks.get(name, RANK)
        return tuple(
            self.op("Gather", name, self.const(np.array(i, np.int64)), axis=axis) for i in (0, 1)
        )

    def pair(self, re: str, im: str, where: str = "last"):
        axis = 0 if where == "first" else self.ranks.get(re, RANK)
        axes = self.const(np.array([axis], np.int64))
        parts = [self.op("Unsqueeze", p, axes) for p in (re, im)]
        return self.op("Concat", *parts, axis=axis), where

    def mul(self, a, b, where="last"):
        (ar, ai), (br, bi) = self.split(a), self.split(b)
        re = self.op("Sub", self.op("Mul", ar, br), self.op("Mul", ai, bi))
        im = self.op("Add", self.op("Mul", ar, bi), self.op("Mul", ai, br))
        return self.pair(re, im, where)

    def model(self, outputs) -> onnx.ModelProto:
        return make_model(self.nodes, self.inputs, outputs, self.inits)


def _converted(model, feeds, expected):
    """The three checks, with the numbers compared against numpy's."""
    out, report = decomplex(model)
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    result = validate(report.normalized or model, out, feeds, expected=expected)
    assert result.passed, result.outputs
    return out, report


def _z(seed=0, shape=SHAPE):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def test_a_valid_native_model_is_left_alone():
    model = onnx.load(ROOT / "fixtures" / "rope_freqs_initializer.onnx")
    assert normalize(model).model is model


def test_a_real_stack_summed_over_its_new_axis_stays_real():
    """In a graph that reads parts of a complex value, a stack of two real values that
    is then reduced over the new axis is a real stack: the exporter never reduces over
    the axis it packs a pair on."""
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE), vi("x", np.float32, SHAPE)]
    re, _ = e.split(("z", "typed"))
    stacked, _ = e.pair("x", e.op("Neg", "x"))
    total = e.op("ReduceSum", stacked, e.const(np.array([-1], np.int64)), keepdims=0)
    out = e.op("Add", re, total)
    model = e.model([vi(out, np.float32, SHAPE)])
    z = _z()
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    _, report = _converted(model, {"z": z, "x": x}, [z.real])
    assert not any("Concat" in line for line in report.readings)


def test_a_real_graph_that_splits_an_input_is_left_alone():
    """A real [..., 2] input read by part and read whole (Sigmoid) is not made complex:
    only a graph that stacks pairs itself shows that it means complex values."""
    e = Export()
    e.inputs = [vi("p", np.float32, [5, 2])]
    first = e.op("Gather", "p", e.const(np.array(0, np.int64)), axis=1)
    squashed = e.op("Sigmoid", "p")
    model = e.model([vi(first, np.float32, [5]), vi(squashed, np.float32, [5, 2])])
    assert normalize(model).model is model


def test_a_real_graph_that_multiplies_dft_outputs_is_left_alone():
    e = Export()
    e.inputs = [vi("x", np.float32, [2, 8, 1])]
    f = e.op("DFT", "x", axis=1)
    model = e.model([vi(e.op("Mul", f, f), np.float32, [2, 8, 2])])
    assert normalize(model).model is model


def test_half_precision_is_never_a_complex_pair():
    """ONNX has no complex half: float16 parts pair into nothing."""
    e = Export()
    e.inputs = [vi("x", np.float16, [1, 8, 2])]
    f = e.op("DFT", "x", axis=1)
    first = e.op("Gather", f, e.const(np.array(0, np.int64)), axis=2)
    model = e.model([vi(first, np.float16, [1, 8])])
    assert normalize(model).model is model


def test_parts_of_a_typed_complex_value_are_read_on_its_pair_axis():
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE)]
    re, im = e.split(("z", "typed"))
    model = e.model([vi(re, np.float32, SHAPE), vi(im, np.float32, SHAPE)])
    z = _z()
    _, report = _converted(model, {"z": z}, [z.real, z.imag])
    assert len(report.readings) == 2 and "Re 'z'" in report.readings[0]


def test_a_complex_value_paired_with_zero_is_the_value():
    """jnp.imag of a product: Concat(Unsqueeze(w), Unsqueeze(0 w)) on a w already complex."""
    e = Export()
    e.inputs = [vi("a", np.complex64, SHAPE), vi("b", np.complex64, SHAPE)]
    w = e.op("Mul", "a", "b")
    zero = e.op("Mul", w, e.const(np.array(0, np.float32)))
    packed, _ = e.pair(w, zero)
    _, im = e.split((packed, "typed"))
    model = e.model([vi(im, np.float32, SHAPE)])
    a, b = _z(1), _z(2)
    _, report = _converted(model, {"a": a, "b": b}, [(a * b).imag])
    assert any("+ i 0" in line for line in report.readings)


def test_integer_pairs_are_index_vectors_not_complex_values():
    """dynamic_slice's start indices: Concat(Unsqueeze(i), Unsqueeze(j)) of int64 scalars."""
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE)]
    re, _ = e.split(("z", "typed"))
    starts, _ = e.pair(e.const(np.array(1, np.int64)), e.const(np.array(2, np.int64)), "first")
    out = e.op("Slice", re, starts, e.const(np.array(SHAPE, np.int64)))
    model = e.model([vi(out, np.float32, [2, 2])])
    z = _z()
    _, report = _converted(model, {"z": z}, [z.real[1:, 2:]])
    assert not any("Concat" in line for line in report.readings)


def test_a_pair_on_axis_0_is_read_when_its_parts_are_parts_of_complex_values():
    """0.5 * z: the scalar's parts, times z's, stacked on axis 0 to [2, 3, 4]."""
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE)]
    half = e.const(np.array(0.5 + 0.25j, np.complex64))
    product = e.mul((half, "typed"), ("z", "typed"), "first")
    out = e.op("Exp", product[0])
    model = e.model([vi(out, np.float32, [*SHAPE, 2])])
    z = _z()
    _, report = _converted(model, {"z": z}, [np.exp((0.5 + 0.25j) * z)])
    assert report.axis0 == [model.graph.node[-2].name]
    assert report.packed_io == [f"output '{out}'"]


def test_a_real_stack_on_axis_0_stays_real():
    """In the same mixed graph, a stack of values that are no parts of complex ones."""
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE), vi("x", np.float32, SHAPE)]
    re, _ = e.split(("z", "typed"))
    stacked, _ = e.pair("x", e.op("Neg", "x"), "first")
    total = e.op("ReduceSum", stacked, e.const(np.array([0], np.int64)), keepdims=0)
    out = e.op("Add", re, total)
    model = e.model([vi(out, np.float32, SHAPE)])
    z = _z()
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    _converted(model, {"z": z, "x": x}, [z.real])


def test_dft_output_is_read_by_each_consumer_in_its_own_form():
    """A Transpose with the complex rank reads it natively; a Gather on the pair axis packed."""
    e = Export()
    e.inputs = [vi("x", np.float32, [*SHAPE, 2])]
    f = e.op("DFT", "x", axis=1)
    flipped = e.op("Transpose", f, perm=[1, 0])
    re, _ = e.split((f, "last"))
    model = e.model([vi(flipped, np.float32, [4, 3, 2]), vi(re, np.float32, SHAPE)])
    z = _z()
    spectrum = np.fft.fft(z, axis=1)
    _converted(model, {"x": pack(z)}, [spectrum.T, spectrum.real])


def test_an_input_declared_packed_meets_a_complex_operand():
    """z + x for a real x: Add(float[3, 4, 2], Cast(x, to=complex))."""
    e = Export()
    e.inputs = [vi("z", np.float32, [*SHAPE, 2]), vi("x", np.float32, SHAPE)]
    out = e.op("Add", "z", e.op("Cast", "x", to=onnx.TensorProto.COMPLEX64))
    model = e.model([vi(out, np.float32, [*SHAPE, 2])])
    z = _z()
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    _, report = _converted(model, {"z": z, "x": x}, [z + x])
    assert report.packed_io == ["input 'z'", f"output '{out}'"]


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


# ---- random graphs, written the way the exporter writes them ----------------------------

STEPS = ("mul", "add", "conj", "exp", "scale", "neg")


def _program(steps, typed_inputs):
    """A graph of `steps` over two inputs, and the numpy function it computes.

    Each value is (name, where its pair lives, its numpy function, the packed inputs
    it comes from by ops that act alike on both readings). A native-only op (Exp) is
    applied only where the graph shows the value is complex: typed, a pair, or from an
    input whose parts the graph reads somewhere; else, as for `sqrt_plus`, no graph
    could tell.
    """
    e = Export()
    values, split = [], set()
    for i, typed in enumerate(typed_inputs):
        name = f"in_{i}"
        shape = [*SHAPE] if typed else [*SHAPE, 2]
        e.inputs.append(vi(name, np.complex64 if typed else np.float32, shape))
        values.append((name, "typed" if typed else "last", lambda f, i=i: f[i],
                       set() if typed else {name}))  # fmt: skip

    def parts(v):
        if v[0] in {"in_0", "in_1"}:
            split.add(v[0])
        return e.split(v[:2])

    for k, step in enumerate(steps):
        a, b = values[-1], values[k % len(values)]
        fa, fb = a[2], b[2]
        if step == "mul":
            (ar, ai), (br, bi) = parts(a), parts(b)
            re = e.op("Sub", e.op("Mul", ar, br), e.op("Mul", ai, bi))
            im = e.op("Add", e.op("Mul", ar, bi), e.op("Mul", ai, br))
            values.append((*e.pair(re, im), lambda f, fa=fa, fb=fb: fa(f) * fb(f), set()))
        elif step == "add":
            if {a[1], b[1]} == {"last", "first"}:
                continue  # [3, 4, 2] + [2, 3, 4]: not a graph the exporter writes
            where = a[1] if a[1] == b[1] else "typed"
            values.append((e.op("Add", a[0], b[0]), where, lambda f, fa=fa, fb=fb: fa(f) + fb(f),
                           a[3] | b[3]))  # fmt: skip
        elif step == "conj":
            re, im = parts(a)
            values.append((*e.pair(re, e.op("Neg", im)), lambda f, fa=fa: np.conj(fa(f)), set()))
        elif step == "exp":
            if a[3] - split:
                continue
            quarter = e.op("Mul", a[0], e.const(np.array(0.25, np.float32)))
            values.append(
                (e.op("Exp", quarter), "typed", lambda f, fa=fa: np.exp(fa(f) / 4), set())
            )
        elif step == "scale":
            c = e.const(np.array(0.5 - 1j, np.complex64))
            (cr, ci), (ar, ai) = e.split((c, "typed")), parts(a)
            re = e.op("Sub", e.op("Mul", cr, ar), e.op("Mul", ci, ai))
            im = e.op("Add", e.op("Mul", cr, ai), e.op("Mul", ci, ar))
            values.append((*e.pair(re, im, "first"), lambda f, fa=fa: (0.5 - 1j) * fa(f), set()))
        else:
            values.append((e.op("Neg", a[0]), a[1], lambda f, fa=fa: -fa(f), a[3]))
    name, where, fn, _ = values[-1]
    if name in {"in_0", "in_1"}:
        return None
    return e.model([vi(name, np.float32, [*SHAPE, 2])]), fn


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=6),
    typed=st.tuples(st.booleans(), st.booleans()),
    seed=st.integers(0, 2**16),
)
def test_random_exporter_graphs_convert_and_match_numpy(steps, typed, seed):
    built = _program(steps, typed)
    if built is None:
        return
    model, fn = built
    inputs = [_z(seed) * 0.5, _z(seed + 1) * 0.5]
    feeds = {f"in_{i}": inputs[i] for i in range(2)}
    out, _ = decomplex(model)
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    result = validate(model, out, feeds, expected=[fn(inputs)])
    assert result.passed, (steps, typed, result.outputs)


def _scan_with_a_packed_body():
    """A Scan whose body declares packed the complex state the node gives it."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["s"], ["s_out"]),
            helper.make_node("Identity", ["x"], ["y"]),
        ],
        "body",
        [vi("s", np.float32, [4, 2]), vi("x", np.float32, [5])],
        [vi("s_out", np.float32, [4, 2]), vi("y", np.float32, [5])],
    )
    scan = helper.make_node("Scan", ["z", "xs"], ["z_out", "ys"], body=body, num_scan_inputs=1)
    inputs = [vi("z", np.complex64, [4]), vi("xs", np.float32, [3, 5])]
    return make_model(
        [scan], inputs, [vi("z_out", np.float32, [4, 2]), vi("ys", np.float32, [3, 5])]
    )


def test_a_scan_body_that_mixes_the_forms_is_refused_naming_the_node():
    with pytest.raises(NormalizeError, match="Scan body, which declares them packed") as info:
        normalize(_scan_with_a_packed_body())
    assert info.value.op_type == "Scan"


def test_a_loop_body_keeps_the_types_of_the_inputs_it_captures():
    """A Loop body that declares its complex state packed, and multiplies it by an input
    of the enclosing graph: that input keeps its declaration."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Mul", ["s", "c"], ["s_out"])],
        "body",
        [vi("i", np.int64, []), vi("cond", np.bool_, []), vi("s", np.float32, [4, 2])],
        [vi("cond_out", np.bool_, []), vi("s_out", np.complex64, [4])],
    )  # fmt: skip
    loop = helper.make_node("Loop", ["n", "", "z"], ["z_out"], body=body)
    model = make_model(
        [loop],
        [vi("z", np.complex64, [4]), vi("c", np.float32, [4])],
        [vi("z_out", np.float32, [4, 2])],
        [init("n", np.array(3, np.int64))],
    )
    z, c = _z(shape=(4,)), np.random.default_rng(4).standard_normal(4).astype(np.float32)
    normalized = normalize(model).model
    declared = {v.name: v.type.tensor_type.elem_type for v in normalized.graph.input}
    assert declared == {"z": onnx.TensorProto.COMPLEX64, "c": onnx.TensorProto.FLOAT}
    _converted(model, {"z": z, "c": c}, [z * c**3])


def _like_layers(count: int) -> onnx.ModelProto:
    """A real pair split into a complex value (so that every reading walks the graph),
    then `count` like products: z <- z * w."""
    j = helper.make_tensor("j", onnx.TensorProto.COMPLEX64, [], [1j])
    nodes = [
        helper.make_node("Gather", ["p", "zero"], ["re"], axis=-1),
        helper.make_node("Gather", ["p", "one"], ["im"], axis=-1),
        helper.make_node("Cast", ["re"], ["re_c"], to=onnx.TensorProto.COMPLEX64),
        helper.make_node("Cast", ["im"], ["im_c"], to=onnx.TensorProto.COMPLEX64),
        helper.make_node("Constant", [], ["j"], value=j),
        helper.make_node("Mul", ["im_c", "j"], ["im_j"]),
        helper.make_node("Add", ["re_c", "im_j"], ["z0"]),
    ]
    nodes += [helper.make_node("Mul", [f"z{i}", "w"], [f"z{i + 1}"]) for i in range(count)]
    inits = [init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64)),
             init("w", np.array([1 + 2j, 3 - 1j, 0.5j], np.complex64))]  # fmt: skip
    return make_model(nodes, [vi("p", np.float32, [4, 3, 2])],
                      [vi(f"z{count}", np.complex64, [4, 3])], inits)  # fmt: skip


def test_like_nodes_are_inferred_once(monkeypatch):
    calls = []
    real = onnx.shape_inference.infer_node_outputs

    def counting(*args, **kwargs):
        calls.append(args[1].op_type)
        return real(*args, **kwargs)

    monkeypatch.setattr(onnx.shape_inference, "infer_node_outputs", counting)
    model = _like_layers(20)
    assert normalize(model).model is model  # read as written: nothing to change
    # 21 Muls in each of two readings: 42 inferences without the shapes they share.
    assert 0 < calls.count("Mul") < 8
    out, _ = decomplex(model)
    assert validate(model, out).passed


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
    assert normalize_module.unknown_values(normalize(model).model) == []


def _complex_source(op: str, opset: int) -> onnx.ModelProto:
    """`op` on a complex value made by a complex ConstantOfShape, as jax2onnx writes
    `jnp.zeros(..., complex64)`: a source whose schema lists no complex type."""
    zero = helper.make_tensor("v", onnx.TensorProto.COMPLEX64, [1], [0j])
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["z"], value=zero)]
    inits = [init("s", np.array([2, 3], np.int64))]
    if op == "Expand":
        nodes.append(helper.make_node("Expand", ["z", "e"], ["y"]))
        inits.append(init("e", np.array([4, 2, 3], np.int64)))
    elif op == "Tile":
        nodes.append(helper.make_node("Tile", ["z", "r"], ["y"]))
        inits.append(init("r", np.array([2, 1], np.int64)))
    elif op == "Pad":
        nodes.append(helper.make_node("Pad", ["z", "p"], ["y"]))
        inits.append(init("p", np.array([1, 0, 0, 2], np.int64)))
    elif op == "Where":
        nodes.append(helper.make_node("Where", ["c", "z", "x"], ["y"]))
        inits.append(init("c", np.array([[True, False, True]])))
    elif op == "ScatterND":
        nodes.append(helper.make_node("ScatterND", ["z", "i", "x"], ["y"]))
        inits.append(init("i", np.array([[1]], np.int64)))
    x = vi("x", np.complex64, [1, 3] if op == "ScatterND" else [2, 3])
    return make_model(nodes, [x], [vi("y", np.complex64, None)], inits, opset=opset)


@pytest.mark.parametrize("op", ["Expand", "Tile", "Pad", "Where", "ScatterND"])
def test_ops_on_a_complex_source_are_typed(op, opset):
    model = _complex_source(op, opset)
    walk = normalize_module.Walk(normalize_module.imported(model),
                                  {"": opset}, False, {}, in_order=True)  # fmt: skip
    assert walk.kind["y"] == np.complex64 and walk.rank(walk.graph.outputs[0]) is not None
    assert normalize_module.unknown_values(model) == []


# ---- the reading as written only reads; the mixed one is spared where it cannot matter --


def _labels(graph: gs.Graph) -> list:
    return [(t.name, t.dtype, t.shape, t.type) for g in gs_graphs(graph)
            for t in g.tensors().values() if isinstance(t, gs.Variable)]  # fmt: skip


@pytest.mark.parametrize("path", FIXTURE_MODELS, ids=fixture_id)
def test_the_reading_as_written_leaves_its_graph_as_it_found_it(path):
    model = onnx.load(str(path))
    graph = normalize_module.imported(model)
    before, nodes = _labels(graph), [(n.op, [t.name for t in n.inputs]) for n in graph.nodes]
    with contextlib.suppress(NormalizeError):  # refused or not, it only read
        normalize(model, graph)
    assert _labels(graph) == before
    assert [(n.op, [t.name for t in n.inputs]) for n in graph.nodes] == nodes


def _read_both_ways(model, monkeypatch):
    """normalize(model) as it runs, and with the mixed reading never spared."""
    may_read_packed = normalize_module._may_read_packed
    calls = []

    def noted(graph):
        calls.append(may_read_packed(graph))
        return calls[-1]

    monkeypatch.setattr(normalize_module, "_may_read_packed", noted)
    fast = normalize(model)
    monkeypatch.setattr(normalize_module, "_may_read_packed", lambda g: True)
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
    model = _like_layers(3)  # splits a pair, multiplies only typed values
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
    built = _program(steps, typed)
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


def test_the_reading_as_written_promotes_a_real_operand_without_casting_it(monkeypatch):
    """Add(z complex128, r float32): the reading infers the Add on complex128 operands,
    as the op promotes them, and adds no Cast to the graph it only reads."""
    nodes = [helper.make_node("Gather", ["p", "zero"], ["p0"], axis=-1),
             helper.make_node("Add", ["z", "r"], ["y"])]  # fmt: skip
    model = make_model(nodes, [vi("z", np.complex128, [3]), vi("r", np.float32, [3]),
                               vi("p", np.float32, [3, 2])],
                       [vi("y", np.complex128, [3]), vi("p0", np.float32, [3])],
                       [init("zero", np.array(0, np.int64))])  # fmt: skip
    graph = gs.import_onnx(model)
    name_nodes(graph)
    found = {}
    walk = normalize_module.Walk

    def noted(*args, **kwargs):
        found["walk"] = walk(*args, **kwargs)
        return found["walk"]

    monkeypatch.setattr(normalize_module, "Walk", noted)
    assert normalize(model, graph).model is model
    assert found["walk"].conflicts == []
    assert found["walk"].shape["y"] == [3] and found["walk"].kind["y"] == np.complex128
    assert [n.op for n in graph.nodes] == ["Gather", "Add"]
