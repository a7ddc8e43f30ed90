"""Type propagation, and refusals that list every node that cannot be rewritten."""

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from helpers import assert_rewrites, init, make_model, op_types, vi
from onnx import TensorProto, helper

from onnx_decomplex import UnsupportedError, decomplex
from onnx_decomplex.analyze import analyze
from onnx_decomplex.rules import refused


def test_sources_and_propagation_ignore_value_info_labels():
    m = make_model(
        [
            helper.make_node("Cast", ["r"], ["rc"], to=TensorProto.COMPLEX64),
            helper.make_node("Mul", ["rc", "w"], ["p"]),
            helper.make_node("Transpose", ["p"], ["t"]),
            helper.make_node("Cast", ["t"], ["y"], to=TensorProto.FLOAT),
        ],
        [vi("r", np.float32, [2, 2])],
        [vi("y", np.float32, [2, 2])],
        [init("w", np.ones((2, 2), np.complex64))],
    )
    # An exporter's stale label: 'p' is complex, whatever value_info says.
    m.graph.value_info.append(vi("p", np.float32, [2, 2]))
    a = analyze(gs.import_onnx(m))
    assert set(a.complex) == {"rc", "p", "t", "w"}
    assert a.casts == ["rc"] and a.initializers == ["w"]
    assert "y" not in a.complex


def test_every_unsupported_node_is_listed():
    m = make_model(
        [
            helper.make_node("Relu", ["a"], ["r"], name="relu1"),
            helper.make_node("Mul", ["r", "a"], ["m"], name="mul"),
            helper.make_node("ArgMax", ["m"], ["y"], name="argmax"),
        ],
        [vi("a", np.complex64, [3])],
        [vi("y", np.int64, [1])],
    )
    with pytest.raises(UnsupportedError) as info:
        decomplex(m)
    nodes = info.value.nodes
    assert [(n.node, n.op_type, n.tensor) for n in nodes] == [
        ("relu1", "Relu", "a"),
        ("argmax", "ArgMax", "m"),
    ]
    text = str(info.value)
    assert (
        "2 nodes cannot take complex values" in text
        and "'relu1' (Relu" in text
        and "'argmax' (ArgMax" in text
    )
    assert "\n" not in text


def test_model_without_complex_is_returned_unchanged():
    m = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [vi("x", np.float32, [2])],
        [vi("y", np.float32, [2])],
    )
    out, report = decomplex(m)
    assert out is m and not report.has_complex


@pytest.mark.parametrize("op", sorted(refused.NO_MEANING))
def test_every_op_without_meaning_is_refused_with_its_reason(op):
    m = make_model(
        [
            helper.make_node("Mul", ["a", "a"], ["sq"], name="square"),
            helper.make_node(op, ["sq"], ["y"], name="bad"),
        ],
        [vi("a", np.complex64, [3])],
        [vi("y", np.complex64, [3])],
    )
    with pytest.raises(UnsupportedError) as info:
        decomplex(m)
    (u,) = info.value.nodes
    assert (u.node, u.op_type, u.tensor, u.reason) == ("bad", op, "sq", refused.NO_MEANING[op])
    assert u.path == ("a", "square", "sq")
    assert "path a -> square -> sq" in str(info.value)


def test_op_with_no_rule_is_refused_as_such():
    m = make_model(
        [helper.make_node("LpNormalization", ["a"], ["y"], name="norm")],
        [vi("a", np.complex64, [3])],
        [vi("y", np.complex64, [3])],
    )
    with pytest.raises(UnsupportedError, match="'norm' \\(LpNormalization, .*no complex rule"):
        decomplex(m)


def test_a_complex_value_made_by_an_op_with_no_rule_is_refused():
    # No complex input, so nothing propagates to it; its output label is complex.
    m = make_model(
        [
            helper.make_node("MyComplexSource", [], ["z"], name="source", domain="custom"),
            helper.make_node("Neg", ["z"], ["y"]),
        ],
        [],
        [vi("y", np.complex64, [3])],
    )
    m.opset_import.append(helper.make_opsetid("custom", 1))
    m.graph.value_info.append(vi("z", np.complex64, [3]))
    with pytest.raises(
        UnsupportedError, match="'source' \\(MyComplexSource, output 'z' is complex64"
    ):
        decomplex(m)


def test_a_long_path_is_cut_to_its_last_hops():
    nodes = [helper.make_node("Neg", ["a"], ["t0"], name="n0")]
    nodes += [
        helper.make_node("Neg", [f"t{i}"], [f"t{i + 1}"], name=f"n{i + 1}") for i in range(20)
    ]
    nodes.append(helper.make_node("Relu", ["t20"], ["y"], name="bad"))
    m = make_model(nodes, [vi("a", np.complex64, [3])], [vi("y", np.complex64, [3])])
    with pytest.raises(UnsupportedError) as info:
        decomplex(m)
    path = info.value.nodes[0].path
    assert path[0] == "..." and path[-1] == "t20" and len(path) <= 18


def _function_model(with_complex: bool):
    """A model-local function `twice(x) = x + x`, called on a complex or a real value."""
    twice = helper.make_function(
        "local", "twice", ["x"], ["y"], [helper.make_node("Add", ["x", "x"], ["y"])],
        [helper.make_opsetid("", 18)],
    )  # fmt: skip
    dtype = np.complex64 if with_complex else np.float32
    m = make_model(
        [
            helper.make_node("twice", ["a"], ["t"], domain="local", name="call"),
            helper.make_node("Mul", ["t", "a"], ["y"]),
        ],
        [vi("a", dtype, [3])],
        [vi("y", dtype, [3])],
    )
    m.opset_import.append(helper.make_opsetid("local", 1))
    m.functions.append(twice)
    return m


def test_local_functions_taking_complex_values_are_inlined():
    m = _function_model(with_complex=True)
    out = assert_rewrites(m)
    assert not out.functions and "twice" not in op_types(out)


def test_local_functions_on_real_values_are_kept():
    m = _function_model(with_complex=False)
    out, report = decomplex(m)
    assert out is m and not report.has_complex


def test_an_op_typed_like_its_inputs_is_real_after_a_complex_abs():
    """Shape inference labels Abs(z) complex (its schema ties the output's type to the
    input's); Relu of that is still real, and rewritten as it is."""
    nodes = [
        helper.make_node("Abs", ["z"], ["m"]),
        helper.make_node("Relu", ["m"], ["r"]),
        helper.make_node("Cast", ["r"], ["rc"], to=TensorProto.COMPLEX64),
        helper.make_node("Mul", ["z", "rc"], ["y"]),
    ]
    model = make_model(nodes, [vi("z", np.complex64, [2, 3])], [vi("y", np.complex64, [2, 3])])
    assert_rewrites(model)


# Refusals that depend on an attribute, the opset or a shape are found by analysis too,
# with every other unsupported node, before anything is rewritten.


def _cast_to_string(name: str = "to_string") -> onnx.NodeProto:
    return helper.make_node("Cast", ["a"], [f"{name}_out"], to=TensorProto.STRING, name=name)


def _refusals(m: onnx.ModelProto) -> list[tuple[str, str, str, str]]:
    return [(u.node, u.op_type, u.tensor, u.reason) for u in analyze(gs.import_onnx(m)).unsupported]


def test_a_cast_to_string_is_refused_by_analysis():
    m = make_model(
        [_cast_to_string()], [vi("a", np.complex64, [3])], [vi("to_string_out", np.str_, [3])]
    )
    assert _refusals(m) == [
        ("to_string", "Cast", "a", "a complex value cannot be cast to a string")
    ]


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_an_old_softmax_over_an_inner_axis_is_refused_by_analysis(op):
    node = helper.make_node(op, ["a"], ["y"], axis=1, name="soft")
    m = make_model([node], [vi("a", np.complex64, [2, 3, 4])], [vi("y", np.complex64, [2, 3, 4])],
                   opset=11)  # fmt: skip
    why = f"{op} before opset 13 on a complex value is supported over the last axis only"
    assert _refusals(m) == [("soft", op, "a", why)]
    # Over the last axis it is rewritten.
    m.graph.node[0].attribute[0].i = 2
    assert _refusals(m) == []


def _conv(weight_is_constant: bool) -> onnx.ModelProto:
    """Conv(x, w, bias) with x of unknown rank."""
    node = helper.make_node("Conv", ["x", "w", "bias"], ["y"], name="conv")
    w = (np.arange(8).reshape(2, 1, 2, 2) + 1j).astype(np.complex64)
    inputs = [helper.make_tensor_value_info("x", TensorProto.COMPLEX64, None)]
    inits = [init("bias", np.ones(2, np.complex64))]
    if weight_is_constant:
        inits.append(init("w", w))
    else:
        inputs.append(vi("w", np.complex64, [2, 1, 2, 2]))
    return make_model([node], inputs, [vi("y", np.complex64, None)], inits)


def test_a_conv_bias_on_an_input_of_unknown_rank_is_refused_by_analysis():
    why = "a complex Conv bias needs the input's rank to be known"
    assert _refusals(_conv(weight_is_constant=False)) == [("conv", "Conv", "x", why)]
    # A constant weight takes the bias into one Conv, whatever the rank.
    assert _refusals(_conv(weight_is_constant=True)) == []


def test_refusals_found_by_analysis_are_all_listed_before_any_rewrite():
    m = make_model(
        [
            helper.make_node("Softmax", ["a"], ["s"], axis=0, name="soft"),
            _cast_to_string(),
            helper.make_node("Neg", ["a"], ["y"], name="neg"),
        ],
        [vi("a", np.complex64, [2, 3])],
        [vi("s", np.complex64, [2, 3]), vi("to_string_out", np.str_, [2, 3]),
         vi("y", np.complex64, [2, 3])],
        opset=11,
    )  # fmt: skip
    assert [(node, op) for node, op, *_ in _refusals(m)] == [
        ("soft", "Softmax"),
        ("to_string", "Cast"),
    ]
    with pytest.raises(UnsupportedError) as info:
        decomplex(m)
    assert [n.node for n in info.value.nodes] == ["soft", "to_string"]
    assert "2 nodes cannot take complex values" in str(info.value)
