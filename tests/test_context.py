"""Value forms: a conversion is emitted at most once per value, and constants fold."""

import ast
from pathlib import Path

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from helpers import assert_rewrites, init, make_model, op_types, vi
from onnx import helper, numpy_helper

from onnx_decomplex.analyze import analyze
from onnx_decomplex.context import Context
from onnx_decomplex.rules.protocol import RuleContext

RULES = Path(__file__).resolve().parent.parent / "onnx_decomplex" / "rules"


def test_packed_input_split_once_for_many_pair_consumers():
    # a is packed (a graph input); three Muls each want its pair: one split only.
    m = make_model(
        [
            helper.make_node("Mul", ["a", "b"], ["p1"]),
            helper.make_node("Mul", ["a", "p1"], ["p2"]),
            helper.make_node("Mul", ["a", "p2"], ["y"]),
        ],
        [vi("a", np.complex64, [4]), vi("b", np.complex64, [4])],
        [vi("y", np.complex64, [4])],
    )
    out = assert_rewrites(m)
    assert op_types(out).count("Split") == 2  # a and b, once each
    assert op_types(out).count("Concat") == 1  # only y is packed, at the output


def test_elementwise_chain_has_no_conversion_ping_pong():
    nodes = [helper.make_node("Mul", ["a", "b"], ["x0"])]
    for i in range(1, 6):
        nodes.append(helper.make_node("Mul", [f"x{i - 1}", "b"], [f"x{i}"]))
    nodes.append(helper.make_node("Sub", ["x5", "a"], ["y"]))
    m = make_model(
        nodes,
        [vi("a", np.complex64, [4]), vi("b", np.complex64, [4])],
        [vi("y", np.complex64, [4])],
    )
    out = assert_rewrites(m)
    ops = op_types(out)
    assert ops.count("Concat") == 1 and ops.count("Split") == 2


def test_output_name_taken_by_renaming_not_identity():
    m = make_model(
        [helper.make_node("Transpose", ["a"], ["y"], perm=[1, 0])],
        [vi("a", np.complex64, [2, 3])],
        [vi("y", np.complex64, [3, 2])],
    )
    out = assert_rewrites(m)
    assert op_types(out) == ["Transpose"]
    assert out.graph.node[0].output[0] == "y"


def _gathered(indices=(0, 1), last=2, axis=-1, precision=np.complex64):
    """z = Cast(Gather(p, i0)) + Cast(Gather(p, i1)) i, then z times z."""
    real = np.float32 if precision == np.complex64 else np.float64
    cplx = helper.np_dtype_to_tensor_dtype(np.dtype(precision))
    nodes = [
        helper.make_node("Gather", ["p", "i0"], ["re"], axis=axis),
        helper.make_node("Gather", ["p", "i1"], ["im"], axis=axis),
        helper.make_node("Cast", ["re"], ["rc"], to=cplx),
        helper.make_node("Cast", ["im"], ["ic"], to=cplx),
        helper.make_node("Mul", ["ic", "j"], ["ij"]),
        helper.make_node("Add", ["rc", "ij"], ["z"]),
        helper.make_node("Mul", ["z", "w"], ["y"]),
    ]
    inits = [init("i0", np.array(indices[0])), init("i1", np.array(indices[1])),
             init("j", np.array(1j, precision)),
             init("w", (np.arange(5) + 1j).astype(precision))]  # fmt: skip
    return make_model(nodes, [vi("p", real, [3, 5, last])], [vi("y", precision, [3, 5])], inits)


def test_real_pairs_viewed_as_complex_are_already_packed():
    out = assert_rewrites(_gathered())
    # The product reads p itself: no Gather, Cast or zero part is left.
    assert op_types(out) == ["Add", "Concat", "Mul", "Mul", "Split"]


def test_pairs_that_are_not_the_packed_layout_are_not_taken_for_it():
    for model in (_gathered(last=3), _gathered(indices=(1, 0)), _gathered(indices=(0, 2), last=3)):
        out = assert_rewrites(model)
        assert "Split" not in op_types(out)


def _split(order=(0, 1)):
    """z = Cast(Squeeze(h0)) + Cast(Squeeze(h1)) i, (h0, h1) = Split(p) on p's last axis
    (the halves taken in `order`), then z times w."""
    nodes = [
        helper.make_node("Split", ["p"], ["h0", "h1"], axis=-1, num_outputs=2),
        helper.make_node("Squeeze", [f"h{order[0]}", "axes"], ["re"]),
        helper.make_node("Squeeze", [f"h{order[1]}", "axes"], ["im"]),
        helper.make_node("Cast", ["re"], ["rc"], to=onnx.TensorProto.COMPLEX64),
        helper.make_node("Cast", ["im"], ["ic"], to=onnx.TensorProto.COMPLEX64),
        helper.make_node("Mul", ["ic", "j"], ["ij"]),
        helper.make_node("Add", ["rc", "ij"], ["z"]),
        helper.make_node("Mul", ["z", "w"], ["y"]),
    ]
    inits = [init("axes", np.array([-1], np.int64)), init("j", np.array(1j, np.complex64)),
             init("w", (np.arange(5) + 1j).astype(np.complex64))]  # fmt: skip
    return make_model(nodes, [vi("p", np.float32, [3, 5, 2])], [vi("y", np.complex64, [3, 5])],
                      inits)  # fmt: skip


def test_the_squeezed_halves_of_a_split_are_already_packed():
    # tf2onnx's spectrum, read into parts: the product reads p itself, not its halves.
    out = assert_rewrites(_split())
    assert op_types(out) == ["Add", "Concat", "Mul", "Mul", "Split"]


def test_halves_in_the_other_order_are_not_taken_for_the_packed_layout():
    # (im, re) is not p: the numbers match the reference, through the halves.
    out = assert_rewrites(_split(order=(1, 0)))
    assert "Squeeze" in op_types(out)


def _unsqueeze_by(constant: onnx.NodeProto) -> onnx.ModelProto:
    """Unsqueeze(a, axes) with axes from `constant`, whose output is named 'c'."""
    nodes = [constant, helper.make_node("Unsqueeze", ["a", "axes"], ["y"])]
    if constant.output[0] != "axes":
        nodes.insert(1, helper.make_node("Identity", [constant.output[0]], ["axes"]))
    return make_model(nodes, [vi("a", np.complex64, [2, 3])], [vi("y", np.complex64, [1, 2, 3])])


@pytest.mark.parametrize(
    "constant",
    [
        helper.make_node("Constant", [], ["axes"], value_ints=[0]),
        helper.make_node("Constant", [], ["axes"], value=numpy_helper.from_array(np.array([0]))),
        helper.make_node("Constant", [], ["c"], value_ints=[0]),  # read through an Identity
    ],
    ids=["value_ints", "value", "identity"],
)
def test_axes_from_a_constant_node_are_read_at_rewrite_time(constant):
    out = assert_rewrites(_unsqueeze_by(constant))
    # One Unsqueeze of the packed tensor, its axes a constant: no Where/Less/Sub on them.
    assert op_types(out) == ["Unsqueeze"]


def _protocol_members(cls) -> set[str]:
    names = set()
    for klass in cls.__mro__:
        if klass is object or klass.__name__ in ("Protocol", "Generic"):
            continue
        names |= {n for n in vars(klass) if not n.startswith("_")}
        names |= set(getattr(klass, "__annotations__", {}))
    return names


def test_the_context_has_every_member_rules_may_ask_for():
    m = make_model([helper.make_node("Neg", ["a"], ["y"])], [vi("a", np.complex64, [2])],
                   [vi("y", np.complex64, [2])])  # fmt: skip
    graph = gs.import_onnx(m)
    ctx = Context(graph, analyze(graph), 18)
    missing = {n for n in _protocol_members(RuleContext) if not hasattr(ctx, n)}
    assert not missing


def test_rules_ask_only_what_the_protocol_states():
    allowed = _protocol_members(RuleContext)
    asked = {}
    for path in [*sorted(RULES.glob("*.py")), RULES.parent / "cmath.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("ctx", "ops")
            ):
                asked.setdefault(node.attr, path.name)
    assert len(asked) > 40
    assert {name: where for name, where in asked.items() if name not in allowed} == {}
