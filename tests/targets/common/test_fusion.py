"""Affine chains run as one product on the onnxruntime target, found by what they compute:
every spelling of a spectral filter, its kept modes as a low-rank product, an unrolled
recurrence, and what is not affine, or would cost more as a product, left as it is."""

import make_fixtures as GEN
import numpy as np
import onnx
import pytest
from helpers import Ops, assert_rewrites, crandn, init, make_model, op_counts, vi
from onnx import TensorProto, helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.targets.common import chains, fusion, probe

F32 = np.float32
PROBE_RANGE = probe.probe_range


def _graph(nodes, inputs, outputs, inits=()) -> onnx.GraphProto:
    return make_model(nodes, inputs, outputs, inits).graph


def test_carriers_follow_what_each_op_is_affine_in():
    g = _graph(
        [helper.make_node("Mul", ["x", "c"], ["scaled"]),
         helper.make_node("Add", ["scaled", "c"], ["shifted"]),
         helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Reshape", ["shifted", "s"], ["same"]),
         helper.make_node("Mul", ["same", "x"], ["square"]),
         helper.make_node("Abs", ["x"], ["size"])],
        [vi("x", F32, [4])],
        [vi("square", F32, [4]), vi("size", F32, [4])],
        [init("c", np.ones(4, F32))],
    )  # fmt: skip
    carry = chains.carriers(g)
    assert carry["scaled"] == carry["shifted"] == carry["same"] == {"x"}
    assert carry["s"] == carry["c"] == frozenset()
    # A product of two carried values, and a nonlinear op, start chains of their own.
    assert carry["square"] == {"square"} and carry["size"] == {"size"}


@pytest.mark.parametrize("domain", ["", "com.microsoft"])
def test_a_rotation_is_affine_in_what_it_rotates(domain):
    # A rule's RotaryEmbedding (a DCT's twiddles, as one) stays inside a chain where its
    # caches and positions are constants; a cache given at run time carries itself.
    inputs = ["x", "cos", "sin", "pos"] if domain == "" else ["x", "pos", "cos", "sin"]
    g = _graph(
        [helper.make_node("RotaryEmbedding", inputs, ["r"], domain=domain)],
        [vi("x", F32, [1, 4, 8]), vi("cos", F32, [4, 4])],
        [vi("r", F32, [1, 4, 8])],
        [init("sin", np.ones((4, 4), F32)), init("pos", np.zeros((1, 4), np.int64))],
    )  # fmt: skip
    assert chains.carriers(g, given=frozenset({"cos"}))["r"] == {"x"}
    assert chains.carriers(g)["r"] == {"r"}


@pytest.mark.parametrize("shape", [[4, 6, 16], [3, 32]])
def test_rfft_and_irfft_as_exporters_spell_them_are_one_product(shape):
    """Slice to half the bins, weights per channel, the Hermitian mirror conjugated as
    2 Re z - z, the inverse DFT's real part: one MatMul, between Transposes where a
    batch's rows share each channel's matrix."""
    w = crandn(np.random.default_rng(0), [*shape[1:-1], shape[-1] // 2 + 1])
    model = GEN.half_spectrum_filter(shape, w)
    ops = Ops(Transpose=2, MatMul=1) if len(shape) == 3 else Ops(MatMul=1)
    assert_rewrites(model, ops=ops, target="onnxruntime")


def test_kept_modes_are_a_low_rank_product():
    """Only the lowest 4 of 33 bins weighted: M has rank 2 * 4 - 1 (the DC bin's
    imaginary part is dropped), so x goes through [64, 7] and [7, 64] products."""
    w = crandn(np.random.default_rng(1), [8, 4])
    out = assert_rewrites(GEN.half_spectrum_filter([2, 8, 64], w), target="onnxruntime")
    factors = sorted(tuple(t.dims) for t in out.graph.initializer if len(t.dims) == 3)
    assert factors == [(8, 7, 64), (8, 64, 7)]
    assert op_counts(out)["MatMul"] == 2


def test_a_shared_filter_is_one_matrix_for_every_row():
    w = crandn(np.random.default_rng(2), [9])  # the same weights for every channel
    out = assert_rewrites(GEN.half_spectrum_filter([2, 3, 16], w), target="onnxruntime")
    assert op_counts(out) == Ops(MatMul=1)
    assert [list(t.dims) for t in out.graph.initializer] == [[16, 16]]


def test_an_affine_chain_keeps_its_offset():
    """Re(IDFT(DFT(x) w)) + c: y = x M^T + c, the constant added after the product."""
    shape = [2, 16]
    w = crandn(np.random.default_rng(3), [9])
    model = GEN.half_spectrum_filter(shape, w)
    model.graph.output[0].name = "filtered"
    model.graph.node[-1].output[0] = "filtered"
    model.graph.node.append(helper.make_node("Add", ["filtered", "c"], ["y"]))
    model.graph.initializer.append(init("c", np.linspace(-1, 1, 16).astype(F32)))
    model.graph.output[0].CopyFrom(vi("y", F32, shape))
    assert_rewrites(model, ops=Ops(MatMul=1, Add=1), target="onnxruntime")


def test_what_is_not_affine_ends_the_chain():
    """DFT(x)^2: a product of two values the chain carries is not affine, so the chains
    end at the DFT's parts, which the square reads; the square stays."""
    model = make_model(
        [helper.make_node("Cast", ["x"], ["xc"], to=TensorProto.COMPLEX64),
         helper.make_node("DFT", ["xc"], ["f"], axis=1),
         helper.make_node("Mul", ["f", "f"], ["y"])],
        [vi("x", F32, [2, 16])],
        [vi("y", np.complex64, [2, 16])],
        opset=17,
    )  # fmt: skip
    out, report = decomplex(model, target="onnxruntime")
    fused = [note for note in report.lowering_notes if "affine in" in note]
    assert fused and not any(note.startswith("y") for note in fused), fused
    assert op_counts(out)["Mul"] >= 2
    assert_rewrites(model, target="onnxruntime")


def test_weights_given_at_run_time_end_the_chain_before_them():
    """The weights are an input: only the rfft before their product is affine in x
    alone, a lone transform, which keeps its own accurate form, as the irfft does."""
    shape = [2, 16]
    model = GEN.half_spectrum_filter(shape, crandn(np.random.default_rng(4), [9]))
    w = next(t for t in model.graph.initializer if t.name == "w")
    model.graph.initializer.remove(w)
    model.graph.input.append(vi("w", np.complex64, [9]))
    out, report = decomplex(model, target="onnxruntime")
    assert not [note for note in report.lowering_notes if "affine in" in note]
    assert report.lowered == {"DFT": 2}
    assert_rewrites(model, target="onnxruntime")


def test_a_long_transform_with_every_bin_weighted_keeps_its_dfts():
    """N = 1024, one weight per bin and channel: a [1024, 1024] product per channel costs
    far more than two transforms, which take their accurate four-step forms."""
    w = crandn(np.random.default_rng(5), [2, 513])
    out, report = decomplex(GEN.half_spectrum_filter([1, 2, 1024], w), target="onnxruntime")
    assert not any("affine in" in note for note in report.lowering_notes)
    assert report.lowered == {"DFT": 2} and "DFT" not in op_counts(out)
    assert sum("(four-step)" in note for note in report.lowering_notes) == 2


def test_the_default_target_runs_a_chain_as_standard_products_too():
    w = crandn(np.random.default_rng(6), [9])
    out, report = decomplex(GEN.half_spectrum_filter([2, 16], w))
    assert op_counts(out) == Ops(MatMul=1) and report.lowered == {"affine chain": 1}


@pytest.mark.parametrize("target", ["openvino", "tensorrt"])
def test_other_targets_keep_their_dfts_in_their_own_forms(target):
    w = crandn(np.random.default_rng(6), [9])
    _, report = decomplex(GEN.half_spectrum_filter([2, 16], w), target=target)
    assert report.lowered == {"DFT": 2}
    assert not [note for note in report.lowering_notes if "affine in" in note]


def test_probe_reads_a_map_per_channel_and_checks_it():
    m = np.random.default_rng(7).standard_normal((3, 5, 4))  # [channels, N', N]

    def per_channel(x):
        return np.einsum("bcn,ckn->bck", x, m).astype(F32)

    f = probe.probe(per_channel, [2, 3, 4], F32, flexible=[0])
    assert f is not None and np.allclose(f.m[0], m, atol=1e-5)
    assert f.b.shape == (1, 1, 5) and not np.any(f.b)

    def by_row(x):  # each batch row its own map: no M shared along the first axis
        return per_channel(x) * np.arange(1, x.shape[0] + 1)[:, None, None]

    assert probe.probe(by_row, [2, 3, 4], F32, flexible=[0]) is None


def test_probe_reads_a_map_beside_a_far_larger_offset():
    """y = x M^T + b in float32 with b near 1e19 on one channel: a unit signal's
    y - b is lost to b's rounding there, so the probes are scaled past b, and read M
    as they read it beside a small b."""
    m = np.random.default_rng(8).standard_normal((2, 3, 3))  # [channels, N', N]
    b = np.array([[-6e18, 4e19, 1e19], [0.1, -0.2, 0.3]])

    def run(x):
        return (np.einsum("bcn,ckn->bck", x, m) + b).astype(F32)

    f = probe.probe(run, [2, 2, 3], F32, flexible=[0])
    assert f is not None and np.allclose(f.m[0], m, rtol=1e-5, atol=1e-6)
    assert np.allclose(f.b[0], b, rtol=1e-7)


def test_a_product_of_constants_beside_a_large_offset_keeps_its_runtime_term():
    """Gemm(A, B, C) by constant A and B with A B near 1e19: C's term, 0.5 C, was read as
    0 in A B's columns of that size, and a C near 1e19 then came out 1e19 off."""
    a, b = (crandn(np.random.default_rng(k), s) for k, s in ((1, [3, 1]), (2, [1, 2])))
    a, b = a.astype(np.complex64), (b * np.array([8e19, 1])).astype(np.complex64)
    gemm = helper.make_node("Gemm", ["a", "b", "c"], ["y"], beta=0.5)
    model = make_model([gemm], [vi("c", np.complex64, [3, 2])], [vi("y", np.complex64, [3, 2])],
                       [init("a", a), init("b", b)])  # fmt: skip
    c = crandn(np.random.default_rng(3), [3, 2]) * np.array([2e19, 1])
    assert_rewrites(model, ops=Ops(Reshape=2, MatMul=1, Add=1), feeds={"c": c.astype(np.complex64)})


def test_a_map_too_large_to_read_whole_is_read_in_its_range(monkeypatch):
    """Past `MAX_PROBE_BYTES`, M is read in a basis of its range, found from random
    signals: the same two products, without M ever held whole."""
    monkeypatch.setattr(probe, "MAX_PROBE_BYTES", 1024)
    read = []
    monkeypatch.setattr(probe, "probe_range", lambda *a: read.append(1) or PROBE_RANGE(*a))
    w = crandn(np.random.default_rng(8), [8, 4])
    out = assert_rewrites(GEN.half_spectrum_filter([2, 8, 64], w), target="onnxruntime")
    assert read and op_counts(out)["MatMul"] == 2
    factors = sorted(tuple(t.dims) for t in out.graph.initializer if len(t.dims) == 3)
    assert factors == [(8, 7, 64), (8, 64, 7)]


def test_a_map_of_full_rank_too_large_to_read_whole_is_left():
    def full_rank(x):
        return np.cumsum(x, axis=-1)

    f = probe.probe_range(full_rank, [2, 3, 128], F32, np.zeros((2, 3, 128)), 1.0)
    assert f is None


def test_an_unrolled_recurrence_is_one_product():
    """Its nodes cost onnxruntime their dispatch: the map of all of u (time, channels and
    (re, im) parts) is read whole, [36, 36], and run as one MatMul."""
    out = assert_rewrites(
        GEN.linear_recurrence(6), ops=Ops(Reshape=2, MatMul=1), target="onnxruntime"
    )
    assert [list(t.dims) for t in out.graph.initializer if len(t.dims) == 2] == [[36, 36]]
    # u has no leading axis: it is one row [1, 36] (onnxruntime runs a vector's MatMul
    # slower), not a vector
    inferred = onnx.shape_inference.infer_shapes(out, data_prop=True)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in inferred.graph.value_info}  # fmt: skip
    matmul = next(node for node in out.graph.node if node.op_type == "MatMul")
    assert shapes[matmul.input[0]] == [1, 36]


def test_an_unrolled_recurrence_whose_state_is_read_stays():
    """The state is an output too: the chain's nodes would stay beside a product."""
    out = assert_rewrites(GEN.linear_recurrence(6, state_out=True), target="onnxruntime")
    assert op_counts(out)["Gather"] == 6


def test_a_long_elementwise_chain_is_not_read_whole(monkeypatch):
    """40 products and sums by constants on 2048 complex values: a dense M of all 4096
    real values would cost far more than the chain, so it is never read (only the 2x2
    map of each (re, im) pair is, in one run), and the chain stays."""
    read = []
    original = probe.probe
    monkeypatch.setattr(
        fusion, "probe", lambda run, shape, *a: read.append(shape) or original(run, shape, *a)
    )
    rng, nodes, inits, x = np.random.default_rng(9), [], [], "x"
    for i in range(20):
        inits += [init(f"m{i}", crandn(rng, [2048])), init(f"a{i}", crandn(rng, [2048]))]
        nodes += [helper.make_node("Mul", [x, f"m{i}"], [f"p{i}"]),
                  helper.make_node("Add", [f"p{i}", f"a{i}"], [f"s{i}"])]  # fmt: skip
        x = f"s{i}"
    nodes[-1].output[0] = "y"
    model = make_model(
        nodes, [vi("x", np.complex64, [2048])], [vi("y", np.complex64, [2048])], inits
    )
    out, report = decomplex(model, target="onnxruntime")
    assert read == [[2048, 2]]
    assert not any("affine in" in note for note in report.lowering_notes)
    assert op_counts(out)["Mul"] >= 20


def test_a_chain_whose_reading_would_take_minutes_is_left(monkeypatch):
    """Twenty products by 512 x 512 weights on one row: reading M a column a run would
    read the 20 MB of weights 512 times (`MAX_PROBE_READS`), so it is not read, and the
    chain stays; where the budget allows, the same chain is read."""
    read = []
    monkeypatch.setattr(fusion, "probe", lambda *args: read.append(args[1]))
    rng, nodes, inits, x = np.random.default_rng(0), [], [], "x"
    for i in range(20):
        inits.append(init(f"w{i}", (rng.standard_normal((512, 512)) / 23).astype(F32)))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"y{i}"]))
        x = f"y{i}"
    model = make_model(nodes, [vi("x", F32, [1, 512])], [vi(x, F32, [1, 512])], inits)
    out, _ = decomplex(model, target="onnxruntime")
    assert read == [] and op_counts(out)["MatMul"] == 20
    monkeypatch.setattr(probe, "MAX_PROBE_READS", 1 << 40)
    decomplex(model, target="onnxruntime")
    assert read == [[1, 512], [512]]  # its last axis, then both


def test_an_affine_chain_of_an_empty_value_is_left_as_it_is():
    """A Where of an empty mask makes an empty value of a product: its chain has nothing
    to compute (its map has no entries to read a convolution or a product from)."""
    nodes = [helper.make_node("GatherND", ["v", "at"], ["c"]),
             helper.make_node("Gemm", ["x", "w"], ["g"], transA=1, transB=1),
             helper.make_node("Where", ["mask", "c", "g"], ["y"])]  # fmt: skip
    cdtype = np.complex64
    m = make_model(
        nodes, [vi("x", cdtype, [2, 1])], [vi("y", cdtype, [1, 0])],
        [init("v", np.array([1j, 2], cdtype)), init("at", np.zeros((0, 1), np.int64)),
         init("w", np.array([[1 + 2j, 3 - 1j]], cdtype)), init("mask", np.zeros((1, 0), bool))],
    )  # fmt: skip
    out, _ = decomplex(m)
    assert validate(m, out).passed


def _read_out(extra=()):
    """A block matrix x [16, 16]'s parts sliced out, packed as [8, 8, 2], flattened, times
    constants [128, 32], and the real part of the [16, 2] result taken: ten nodes."""
    rng = np.random.default_rng(12)
    ends = {"r0": [0, 0], "r1": [8, 8], "i0": [8, 0], "i1": [16, 8]}
    nodes = [
        helper.make_node("Slice", ["x", "r0", "r1"], ["re"]),
        helper.make_node("Slice", ["x", "i0", "i1"], ["im"]),
        helper.make_node("Unsqueeze", ["re", "last"], ["re1"]),
        helper.make_node("Unsqueeze", ["im", "last"], ["im1"]),
        helper.make_node("Concat", ["re1", "im1"], ["packed"], axis=-1),
        helper.make_node("Reshape", ["packed", "flat"], ["row"]),
        helper.make_node("MatMul", ["row", "w"], ["form"]),
        helper.make_node("Reshape", ["form", "pairs"], ["pair"]),
        helper.make_node("Split", ["pair"], ["real", "imag"], axis=-1, num_outputs=2),
        helper.make_node("Squeeze", ["real", "last"], ["y"]),
        *extra,
    ]
    inits = [init(k, np.array(v, np.int64)) for k, v in ends.items()]
    inits += [init("last", np.array([-1], np.int64)), init("flat", np.array([1, 128], np.int64)),
              init("pairs", np.array([16, 2], np.int64)),
              init("w", rng.standard_normal((128, 32)).astype(F32))]  # fmt: skip
    outputs = [vi("y", F32, [16]), *(vi(n.output[0], F32, None) for n in extra)]
    return make_model(nodes, [vi("x", F32, [16, 16])], outputs, inits, opset=18)


def test_values_moved_into_a_product_by_constants_are_that_product():
    """A read-out: the ten nodes' dispatch costs more than their one product, which the
    constants moved make one MatMul by [256, 16] (the imaginary parts, never read, are not
    computed). Exact: M is the constants' entries, moved."""
    model = _read_out()
    out, report = decomplex(model, target="onnxruntime")
    assert op_counts(out) == {"Reshape": 1, "MatMul": 1}
    assert report.lowered["read-out"] == 1
    assert [list(t.dims) for t in out.graph.initializer if len(t.dims) == 2] == [[256, 16]]
    onnx.checker.check_model(out, full_check=True)
    x = np.random.default_rng(1).standard_normal((16, 16)).astype(F32)
    assert validate(model, out, {"x": x}).passed


@pytest.mark.parametrize(
    "extra",
    [
        [helper.make_node("Neg", ["packed"], ["seen"])],  # a value of the chain read outside it
        [
            helper.make_node("Add", ["y", "y"], ["twice"]),  # arithmetic: not a read-out
            helper.make_node("Mul", ["twice", "y"], ["cube"]),
        ],
    ],
    ids=["shared", "computed after"],
)
def test_what_is_no_read_out_stays(extra):
    """A value of the chain read outside it keeps the chain; arithmetic after it ends it."""
    model = _read_out(extra)
    out, report = decomplex(model, target="onnxruntime")
    if extra[0].op_type == "Neg":
        assert "read-out" not in report.lowered and op_counts(out)["Slice"] == 2
    else:  # the read-out still is one, and what follows it stays as it is
        assert report.lowered["read-out"] == 1 and op_counts(out)["Mul"] == 1
    assert validate(model, out, {"x": np.eye(16, dtype=F32)}).passed


def test_a_read_out_chain_holds_one_product_and_moves_alone():
    g = _read_out().graph
    (chain,) = [c for c in chains.chains(g, chains.is_affine) if c.y == "y"]
    assert fusion._read_out(chain)
    assert not fusion._read_out(
        chains.Chain(chain.x, chain.y, [*chain.nodes, helper.make_node("Add", ["y", "y"], ["z"])])
    )


@pytest.mark.parametrize(("n", "products"), [(16, 1), (512, 2)])
def test_a_low_rank_map_is_two_products_where_the_second_dispatch_pays(n, products):
    """A second product costs its dispatch: a rank-4 M of [16, 16] stays one MatMul,
    one of [512, 512] is two."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((n, 4)) @ rng.standard_normal((4, n))
    form = fusion.cheapest_form(probe.Affine(m=m, b=np.zeros(n)), [], budget=1e12)
    assert len(form.factors) == products
