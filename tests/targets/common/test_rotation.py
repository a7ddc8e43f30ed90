"""RoPE found by what it computes, however an exporter wrote it on real values: one
RotaryEmbedding node in its place, and anything else left as it is."""

from pathlib import Path

import make_fixtures as GEN
import numpy as np
import onnx
import pytest
from helpers import Ops, assert_rewrites, convert_export, init, make_model, op_counts, vi
from onnx import TensorProto, helper

from onnx_decomplex import decomplex, validate

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
F32 = np.float32


def _rotary(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for n in model.graph.node if n.op_type == "RotaryEmbedding"]


def _converted(path: Path, tmp_path: Path, target: str) -> onnx.ModelProto:
    """The export converted with its framework's inputs and outputs, which it matches
    (the reference cannot run the export as written)."""
    out = tmp_path / f"{target}.onnx"
    assert convert_export(path, out, target).validation.passed
    return onnx.load(out)


def test_jax2onnx_rope_on_real_parts_is_the_standard_node_at_opset_23(tmp_path):
    """Strided Slices, the product written on parts, an interleaving Reshape: at opset
    23 the standard node, for every target."""
    for target in ("onnx", "onnxruntime"):
        out = _converted(FIXTURES / "jax2onnx" / "rope_llama.onnx", tmp_path, target)
        assert op_counts(out) == Ops(RotaryEmbedding=1)
        assert _rotary(out)[0].domain == ""


def test_tf2onnx_rope_is_the_contrib_node_below_opset_23_for_onnxruntime(tmp_path):
    path = FIXTURES / "tf2onnx" / "rope.onnx"
    out = _converted(path, tmp_path, "onnxruntime")
    assert op_counts(out) == Ops(RotaryEmbedding=1)
    assert _rotary(out)[0].domain == "com.microsoft"
    assert not _rotary(_converted(path, tmp_path, "onnx")), "no such node below opset 23"


def _turned() -> list[onnx.NodeProto]:
    """y = x c + rotate_half(x) s, x [1, S, H, D] split into halves on D."""
    return [
        helper.make_node("Split", ["x", "halves"], ["x1", "x2"], axis=3),
        helper.make_node("Neg", ["x2"], ["minus_x2"]),
        helper.make_node("Concat", ["minus_x2", "x1"], ["turned"], axis=3),
        helper.make_node("Mul", ["x", "c"], ["xc"]),
        helper.make_node("Mul", ["turned", "s"], ["ts"]),
        helper.make_node("Add", ["xc", "ts"], ["y"]),
    ]


def _rotate_half(
    seq=6, heads=2, dim=8, vary_with_head=False, length=0, row=False, heads_first=False
) -> onnx.ModelProto:
    """GPT-NeoX's rotate_half on [1, S, H, D]: y = x c + rotate_half(x) s, with c and s
    the real and imaginary parts of a complex table (Cast, and Cast of -i times it).
    With a `length`, the table is `length` rows gathered at the graph input `positions`
    [S] ([1, S] with `row`), as Llama gathers freqs_cis at a decoding step's positions.
    With `heads_first`, x is [1, S, H D], split into heads and moved heads first
    ([1, H, S, D], torch's q.view(...).transpose(1, 2)) before it is rotated."""
    rng = np.random.default_rng(0)
    shape = [length or seq, heads if vary_with_head else 1, dim]
    if heads_first:
        shape = [seq, dim]
    table = np.exp(1j * rng.uniform(0, 6, shape)).astype(np.complex64)
    gather = [helper.make_node("Gather", ["freqs", "positions"], ["table"])] if length else []
    nodes = [
        *gather,
        helper.make_node("Cast", ["table"], ["c"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["table", "minus_i"], ["rot"]),
        helper.make_node("Cast", ["rot"], ["s"], to=TensorProto.FLOAT),
        *_turned(),
    ]
    inits = [init("freqs" if length else "table", np.concatenate([table[..., : dim // 2]] * 2, -1)),
             init("minus_i", np.array(-1j, np.complex64)),
             init("halves", np.array([dim // 2, dim // 2], np.int64))]  # fmt: skip
    x, y = vi("x", F32, [1, seq, heads, dim]), vi("y", F32, [1, seq, heads, dim])
    if heads_first:
        nodes[:0] = [helper.make_node("Reshape", ["joined", "split"], ["x4"]),
                     helper.make_node("Transpose", ["x4"], ["x"], perm=[0, 2, 1, 3])]  # fmt: skip
        inits.append(init("split", np.array([1, seq, heads, dim], np.int64)))
        x, y = vi("joined", F32, [1, seq, heads * dim]), vi("y", F32, [1, heads, seq, dim])
    positions = [vi("positions", np.int64, [1, seq] if row else [seq])] if length else []
    return make_model(nodes, [x, *positions], [y], inits)


def test_rotate_half_is_the_node_on_halves():
    out = assert_rewrites(_rotate_half(), target="onnxruntime")
    (node,) = _rotary(out)
    assert {a.name: helper.get_attribute_value(a) for a in node.attribute} == {
        "interleaved": 0,
        "num_heads": 2,
    }


@pytest.mark.parametrize(("target", "opset"), [("onnxruntime", 18), ("onnx", 23)])
def test_heads_moved_first_are_rotated_as_the_value_they_were_split_from(target, opset):
    """[1, S, H D] split into heads and moved heads first, then rotated: the node reads
    [1, S, H D] itself, and the heads are split and moved after it, where attention over
    the heads finds them (`common.attention`)."""
    out = assert_rewrites(_rotate_half(heads_first=True), target=target, target_opset=opset)
    (node,) = _rotary(out)
    assert node.input[0] == "joined"
    assert {a.name: helper.get_attribute_value(a) for a in node.attribute}["num_heads"] == 2
    assert op_counts(out) == Ops(RotaryEmbedding=1, Reshape=1, Transpose=1)


@pytest.mark.parametrize("row", [False, True], ids=["[S]", "[1, S]"])
@pytest.mark.parametrize(("target", "opset"), [("onnxruntime", 18), ("onnx", 23)])
def test_a_table_gathered_at_run_time_positions_is_the_node_with_position_ids(target, opset, row):
    """freqs [10, 1, 8] gathered at the positions given: the node reads the whole table
    as its caches, and the positions as position_ids (-1 reads the last row, as the
    Gather does), expanded over the batch as they are given."""
    model = _rotate_half(length=10, row=row)
    x = np.random.default_rng(1).standard_normal((1, 6, 2, 8)).astype(F32)
    for positions in ([0, 1, 2, 3, 4, 5], [9, 0, 7, -1, 3, 3]):
        at = np.array(positions, np.int64)
        feeds = {"x": x, "positions": at.reshape(1, -1) if row else at}
        out = assert_rewrites(model, feeds=feeds, target=target, target_opset=opset)
        assert op_counts(out) == Ops(RotaryEmbedding=1, Cast=1, Mod=1, Reshape=2, Expand=1)
        (node,) = _rotary(out)
        caches = {t.name: list(t.dims) for t in out.graph.initializer}
        assert [caches.get(name) for name in node.input] == (
            [None, None, [10, 4], [10, 4]] if opset < 23 else [None, [10, 4], [10, 4], None]
        )


def test_llamas_freqs_cis_gathered_at_positions_is_the_node(tmp_path):
    """jax2onnx's Llama decoder, freqs_cis[positions] with positions an int32 input: q's
    and k's rotations, in both blocks, are four nodes, on both targets (opset 23)."""
    path = FIXTURES / "models" / "jax2onnx" / "llama_decoder.onnx"
    for target in ("onnx", "onnxruntime"):
        out = _converted(path, tmp_path, target)
        assert len(_rotary(out)) == 4 and "Gather" not in op_counts(out)


@pytest.mark.parametrize(
    "name",
    ["llama_rope_heads_first", pytest.param("llama_decoder_heads_first", marks=pytest.mark.slow)],
)
def test_freqs_cis_given_at_run_time_is_the_nodes_caches(name, tmp_path):
    """freqs_cis a complex64 graph input [S, D/2], q and k [B, H, S, D] rotated on their
    parts, k then transposed for q k^T: each rotation one RotaryEmbedding, its caches the
    input's parts (the chain's own values of them), on both targets (opset 23), each
    a Reshape of the part's Split, not of the Squeeze that viewed it."""
    path = FIXTURES / "models" / "jax2onnx" / f"{name}.onnx"
    for target in ("onnx", "onnxruntime"):
        out = _converted(path, tmp_path, target)
        rotations = 2 if name == "llama_rope_heads_first" else 4
        assert len(_rotary(out)) == rotations
        assert "Squeeze" not in op_counts(out)
        if name == "llama_rope_heads_first":
            assert "Mul" not in op_counts(out)


def test_a_table_that_varies_with_the_head_is_no_rotary_node():
    out = assert_rewrites(_rotate_half(vary_with_head=True), target="onnxruntime")
    assert not _rotary(out)


def test_a_product_that_is_no_rotation_stays():
    """x times a table, no pair turned: affine in x, but no rotation."""
    table = np.linspace(1, 2, 8).astype(np.complex64)
    model = make_model(
        [helper.make_node("Cast", ["table"], ["t"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "t"], ["y"])],
        [vi("x", F32, [1, 3, 8])],
        [vi("y", F32, [1, 3, 8])],
        [init("table", table)],
    )  # fmt: skip
    out = assert_rewrites(model, target="onnxruntime")
    assert not _rotary(out) and op_counts(out)["Mul"] == 1


@pytest.mark.parametrize("opset", [18, 23])
def test_flat_io_rope_is_the_node_alone(opset):
    """x [B, S, H*D] split into heads and pairs and merged back: the node reads and
    writes the flat layout itself, with no Reshape around it."""
    model = GEN.rope_flat(seq_len=8, heads=2, head_dim=8)
    out = assert_rewrites(model, target="onnxruntime", target_opset=opset)
    assert op_counts(out) == Ops(RotaryEmbedding=1)


@pytest.mark.parametrize(("target", "opset"), [("onnxruntime", 20), ("onnx", 23)])
def test_a_real_model_with_a_transform_is_rotated_in_a_copy(target, opset):
    """A model with no complex type takes the forms where it holds a DFT (complex
    values in ONNX's packed layout); its rotation is one node in the output, and the
    model given to decomplex is left as it was."""
    rng = np.random.default_rng(0)
    seq, heads, dim = 6, 2, 8
    angles = rng.uniform(0, 6, [seq, 1, dim // 2])
    c, s = (np.concatenate([f(angles)] * 2, -1).astype(F32) for f in (np.cos, np.sin))
    nodes = [
        *_turned(),
        helper.make_node("DFT", ["signal", "", "axis"], ["spectrum"]),
    ]
    inits = [init("c", c), init("s", s), init("halves", np.array([dim // 2] * 2, np.int64)),
             init("axis", np.array(1, np.int64))]  # fmt: skip
    x, y = vi("x", F32, [1, seq, heads, dim]), vi("y", F32, [1, seq, heads, dim])
    signal, spectrum = vi("signal", F32, [1, 16, 1]), vi("spectrum", F32, [1, 16, 2])
    model = make_model(nodes, [x, signal], [y, spectrum], inits, opset=opset)
    before = model.SerializeToString()
    out, report = decomplex(model, target=target)
    assert model.SerializeToString() == before
    assert not report.has_complex and report.lowered["rotation"] == 1
    assert len(_rotary(out)) == 1 and "DFT" not in op_counts(out)
    assert validate(model, out).passed
