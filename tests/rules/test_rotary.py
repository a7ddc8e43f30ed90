"""A complex value times a position table: one RotaryEmbedding node from opset 23."""

import make_fixtures as FIXTURES
import numpy as np
import pytest
from helpers import PACK, PRODUCT, UNPACK, Ops, assert_ops, crandn, init, make_model, vi
from onnx import helper

from onnx_decomplex import decomplex
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.validate import validate

RNG = np.random.default_rng(0)

ROTARY = Ops(RotaryEmbedding=1, Reshape=2)
"""One node, z moved into its layout and the result back."""
BATCHED = Ops(Shape=1, Gather=1, Expand=2)
"""The cos and sin caches expanded to z's batch, read at run time."""
RUNTIME_TABLE = Ops(Split=1, Squeeze=2, Reshape=2)
"""A runtime table's parts are the caches: unpacked, and reshaped to the node's [S, D/2]."""
PACKED_PRODUCT = Ops(Split=1, Concat=1, Mul=2, Add=1)
"""z w for a constant w: z (wr, wr) + (-zi, zr) (wi, wi)."""


def _checked(model, ops, target_opset=None, target="onnx", **kw):
    """The rewrite, after the three checks."""
    out, _ = decomplex(model, target_opset=target_opset, target=target)
    assert_ops(out, ops)
    result = validate(model, out, **kw)
    assert result.outputs and result.passed, result.outputs
    return out


def _rewrites(model, ops, target_opset=23, **kw):
    """The three checks, with the opset upgrade."""
    _checked(model, ops, target_opset, **kw)


def test_llama_rope_becomes_one_rotary_node():
    # Nothing is multiplied outside the node, and nothing is unpacked or repacked: the
    # view_as_complex Reshape merges with the node's own before it, and the node's after
    # it reads a constant shape, which merges with the view_as_real Reshape but one.
    _rewrites(FIXTURES.rope(False), ROTARY + BATCHED + Ops(Reshape=1))


def test_a_table_behind_reshape_minus_one_is_read_symbolically():
    # Reshape(freqs_cis[seq, 16], [1, -1, 1, 16]) is [1, seq, 1, 16]: shape inference
    # leaves the -1 unknown, the rewrite names it seq, and the table cannot widen z.
    # The table is a graph input: a runtime table behind a Reshape of its own.
    ops = ROTARY + BATCHED + RUNTIME_TABLE + Ops(Reshape=2)
    _rewrites(FIXTURES.rope(True), ops)
    contrib = _contrib_rewrites(FIXTURES.rope(True), ops)
    assert ("RotaryEmbedding", "com.microsoft") in contrib


def test_a_table_of_unprovable_length_keeps_the_packed_product():
    # A table of its own length n: longer than z, it would widen the product, which the
    # node cannot do. The runtime table is split into halves once, z unpacked in halves.
    model = FIXTURES.rope(True)
    model.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "n"
    _rewrites(model, Ops(Reshape=3, Split=2, Concat=1, Mul=4, Sub=1, Add=1))


def test_runtime_table():
    m = make_model(
        [helper.make_node("Mul", ["z", "w"], ["y"])],
        [vi("z", np.complex64, ["b", 6, 3, 4]), vi("w", np.complex64, [6, 1, 4])],
        [vi("y", np.complex64, ["b", 6, 3, 4])],
        opset=23,
    )
    _rewrites(m, ROTARY + BATCHED + RUNTIME_TABLE)


def test_static_shapes_give_constant_caches():
    m = FIXTURES.rope(False)
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2  # batch fixed
    _rewrites(m, ROTARY)


def _table_model(z_shape, table, cdtype=np.complex64, opset=23, y_shape=None):
    return make_model(
        [helper.make_node("Mul", ["z", "w"], ["y"])],
        [vi("z", cdtype, z_shape)],
        [vi("y", cdtype, y_shape or z_shape)],
        [init("w", table.astype(cdtype))],
        opset=opset,
    )


@pytest.mark.parametrize(
    "z_shape, table_shape",
    [
        (["b", 6, 3, 4], [1, 6, 1, 4]),  # [B, S, H, D/2]
        (["b", 3, 6, 4], [6, 4]),  # [B, H, S, D/2]: the node's 4-D layout
        (["b", 6, 4], [6, 4]),  # [B, S, D/2]: one head
        (["b", 6, 3, 4], [6, 1, 1]),  # the same angle for every frequency
        ([2, 6, 3, 4], [2, 6, 1, 4]),  # a table per batch row
    ],
)
def test_table_layouts(z_shape, table_shape):
    # A fixed batch needs no run-time expansion of the caches.
    ops = ROTARY + (BATCHED if isinstance(z_shape[0], str) else Ops())
    _rewrites(_table_model(z_shape, crandn(RNG, table_shape)), ops)


@pytest.mark.parametrize(
    "why, model",
    [
        ("varies along heads", _table_model(["b", 6, 3, 4], crandn(RNG, [6, 3, 4]))),
        ("complex128", _table_model(["b", 6, 3, 4], crandn(RNG, [6, 1, 4]), np.complex128)),
        ("rank 5", _table_model(["b", 2, 6, 3, 4], crandn(RNG, [6, 1, 4]))),
        ("widens z", _table_model(["b", 1, 3, 4], crandn(RNG, [6, 1, 4]), y_shape=["b", 6, 3, 4])),
        # The node's Reshape(0, 0, -1) cannot infer -1 from a zero-size tensor.
        ("zero-size", _table_model([0, 6, 3, 4], crandn(RNG, [6, 1, 4]))),
        ("zero-size 3-D", _table_model([2, 6, 0], crandn(RNG, [6, 1]))),
    ],
)
def test_other_products_are_not_rotary(why, model):
    _rewrites(model, PACKED_PRODUCT)


def test_below_opset_23_no_rotary_node():
    _rewrites(FIXTURES.rope(False), PACKED_PRODUCT + Ops(Reshape=2), target_opset=None)


def test_target_opset_only_upgrades():
    with pytest.raises(DecomplexError, match="only upgrades"):
        decomplex(FIXTURES.rope(False), target_opset=13)


def test_target_opset_on_a_model_without_complex_values_still_upgrades():
    m = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [vi("x", np.float32, [2])],
        [vi("y", np.float32, [2])],
    )
    out, report = decomplex(m, target_opset=23)
    assert_ops(out, {"Relu": 1})
    assert not report.has_complex
    assert out.opset_import[0].version == 23 and out.ir_version >= 11


# The onnxruntime target: com.microsoft.RotaryEmbedding at any opset


def _contrib_rewrites(model, ops):
    """The three checks with the onnxruntime target; returns (op, domain) pairs."""
    out = _checked(model, ops, target="onnxruntime")
    assert ("com.microsoft", 1) in [(o.domain, o.version) for o in out.opset_import] or not any(
        n.domain == "com.microsoft" for n in out.graph.node
    )
    return [(n.op_type, n.domain) for n in out.graph.node]


def test_onnxruntime_target_uses_its_own_node_below_opset_23():
    # Its caches are [S, D/2], read from position 0: no batch to expand to, and z's dims
    # past the batch are static: its shape is given back by a constant, with a 0 for it.
    ops = _contrib_rewrites(FIXTURES.rope(False), ROTARY)
    assert ops.count(("RotaryEmbedding", "com.microsoft")) == 1


@pytest.mark.parametrize(
    "z_shape, table_shape",
    [
        (["b", 6, 3, 4], [1, 6, 1, 4]),  # [B, S, H, D/2]
        (["b", 3, 6, 4], [6, 4]),  # [B, H, S, D/2]: the node's 4-D layout
        (["b", 6, 4], [6, 4]),  # [B, S, D/2]: one head
        ([2, 6, 3, 4], [6, 1, 1]),  # the same angle for every frequency
    ],
)
def test_onnxruntime_target_table_layouts(z_shape, table_shape):
    model = _table_model(z_shape, crandn(RNG, table_shape), opset=18)
    ops = _contrib_rewrites(model, ROTARY)
    assert ("RotaryEmbedding", "com.microsoft") in ops


def test_onnxruntime_target_runtime_table():
    m = make_model(
        [helper.make_node("Mul", ["z", "w"], ["y"])],
        [vi("z", np.complex64, ["b", 6, 3, 4]), vi("w", np.complex64, [6, 1, 4])],
        [vi("y", np.complex64, ["b", 6, 3, 4])],
        opset=18,
    )
    ops = ROTARY + BATCHED + RUNTIME_TABLE
    assert ("RotaryEmbedding", "com.microsoft") in _contrib_rewrites(m, ops)


def test_onnxruntime_target_keeps_a_table_per_batch_row_as_products():
    # Its caches are indexed by position alone.
    model = _table_model([2, 6, 3, 4], crandn(RNG, [2, 6, 1, 4]), opset=18)
    assert ("RotaryEmbedding", "com.microsoft") not in _contrib_rewrites(model, PACKED_PRODUCT)


def test_onnx_target_emits_standard_ops_only():
    out, _ = decomplex(FIXTURES.rope(False))
    assert_ops(out, PACKED_PRODUCT + Ops(Reshape=2))
    assert {n.domain for n in out.graph.node} <= {""}
    assert [o.domain for o in out.opset_import] == [""]


def test_from_opset_23_the_standard_node_for_onnxruntime_too():
    # onnxruntime runs its standard RotaryEmbedding faster than its own (bench/).
    out, _ = decomplex(FIXTURES.rope(False), target="onnxruntime", target_opset=23)
    assert_ops(out, ROTARY + BATCHED + Ops(Reshape=1))
    assert [n.domain for n in out.graph.node if n.op_type == "RotaryEmbedding"] == [""]


@pytest.mark.parametrize(
    "z_shape, table, cdtype, target, why",
    [
        ([2, 6, 3, 4], crandn(RNG, [2, 6, 1, 4]), np.complex64, "onnxruntime",
         "com.microsoft.RotaryEmbedding: the table varies with the batch"),
        ([2, 6, 3, 4], crandn(RNG, [6, 1, 4]), np.complex128, "onnxruntime",
         "com.microsoft.RotaryEmbedding: the node has no double type"),
    ],
)  # fmt: skip
def test_a_table_the_node_cannot_take_is_explained(z_shape, table, cdtype, target, why):
    """`-v` says why a position table keeps the product."""
    out, report = decomplex(_table_model(z_shape, table, cdtype, opset=18), target=target)
    assert_ops(out, PACKED_PRODUCT)
    assert any(f"not one {why}" in line for line in report.explanations), report.explanations


def test_products_that_hold_no_table_explain_no_rotary_node():
    model = make_model([helper.make_node("Mul", ["z", "v"], ["y"])],
                       [vi("z", np.complex64, [2, 6, 3, 4]), vi("v", np.complex64, [2, 6, 3, 4])],
                       [vi("y", np.complex64, [2, 6, 3, 4])])  # fmt: skip
    for target in ("onnx", "onnxruntime"):
        out, report = decomplex(model, target=target)
        assert_ops(out, 2 * UNPACK + PRODUCT + PACK)
        assert not any("RotaryEmbedding" in line for line in report.explanations)
    out, report = decomplex(_table_model([2, 6, 3, 4], crandn(RNG, [6, 1, 4]), opset=18))
    assert_ops(out, PACKED_PRODUCT)
    assert not any("RotaryEmbedding" in line for line in report.explanations)  # onnx target
