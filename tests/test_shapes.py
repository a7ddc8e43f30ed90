import numpy as np
import onnx
import pytest
from helpers import assert_rewrites, make_model, vi
from onnx import TensorProto, helper

from onnx_decomplex.errors import OptionError
from onnx_decomplex.shapes import infer_shapes, parse_shapes


@pytest.mark.parametrize(
    "specs, expected",
    [
        ("x:1x8x128", {"x": (1, 8, 128)}),
        ("x:1,8,128", {"x": (1, 8, 128)}),
        ("x:[1,8,128]", {"x": (1, 8, 128)}),
        ("x:7", {"x": (7,)}),
        ("x:1x8,y:4", {"x": (1, 8), "y": (4,)}),
        ("x:[1, 8],y:[4]", {"x": (1, 8), "y": (4,)}),
        # onnxsim's commas: a comma followed by `name:` starts the next spec
        ("x:1,8,128,y:4", {"x": (1, 8, 128), "y": (4,)}),
        ("x:1,8,y:2x3,z:[5, 6]", {"x": (1, 8), "y": (2, 3), "z": (5, 6)}),
        ("x:1, 8 ,y:4", {"x": (1, 8), "y": (4,)}),
        (["x:[1,8]", "y:2x3", "w:3,4"], {"x": (1, 8), "y": (2, 3), "w": (3, 4)}),
        ("input:0:2x3", {"input:0": (2, 3)}),
        ("input:0:2,3,input:1:4", {"input:0": (2, 3), "input:1": (4,)}),
        ("s:[]", {"s": ()}),
        ("", {}),
    ],
)
def test_every_spelling(specs, expected):
    assert parse_shapes(specs) == expected


@pytest.mark.parametrize(
    "spec, message",
    [
        ("x", "expected 'name:1x8x128', 'name:1,8,128' or 'name:[1,8,128]'"),
        ("z=4x8x6", "expected 'name:1x8x128'"),
        (":1x2", "expected 'name:1x8x128'"),
        ("x:1xa", "dims must be integers"),
        ("z:4xax6", "dims must be integers"),
        ("x:1x8,128", "dims must be integers"),  # two spellings in one shape
        ("x:1,,2", "dims must be integers"),
        ("x:1x8x", "dims must be integers"),
        ("x:[1,2", "missing ']'"),
        ("x:1x-2", "must not be negative"),
        ("z:-1x8x6", "must not be negative"),
        ("x:1,2,x:3", "'x' is given twice"),
    ],
)
def test_bad_specs_say_why(spec, message):
    with pytest.raises(OptionError, match=message.replace("[", r"\[")) as info:
        parse_shapes(spec)
    assert "bad shape spec '" in str(info.value)


def test_a_name_given_in_two_values_is_refused():
    with pytest.raises(OptionError, match="bad shape spec 'x:3': 'x' is given twice"):
        parse_shapes(["x:1x2", "x:3"])


def _eyelike_of(nodes, inputs, opset=18) -> onnx.ModelProto:
    model = make_model(nodes, inputs, [vi("y", np.float32, None)], opset=opset)
    model.opset_import.append(helper.make_opsetid("x.y", 1))
    return model


@pytest.mark.parametrize(
    "make",
    [
        # an op onnx does not know: its output has no type
        lambda: _eyelike_of(
            [helper.make_node("Foo", ["x"], ["t"], domain="x.y"),
             helper.make_node("EyeLike", ["t"], ["y"], dtype=TensorProto.FLOAT)],
            [vi("x", np.float32, [3, 3])],
        ),
        # an input declared without a type
        lambda: _eyelike_of(
            [helper.make_node("EyeLike", ["t"], ["y"], dtype=TensorProto.FLOAT)],
            [onnx.ValueInfoProto(name="t")],
        ),
    ],
)  # fmt: skip
def test_inference_of_an_eyelike_of_no_known_type_does_not_stop_the_process(make):
    """onnx's own inference stops the process on these (onnx#2647)."""
    model = make()
    inferred = infer_shapes(model)
    assert [n.op_type for n in inferred.graph.node] == [n.op_type for n in model.graph.node]
    assert [list(n.input) for n in inferred.graph.node] == [list(n.input) for n in model.graph.node]
    assert not any("eyelike_input" in v.name for v in inferred.graph.value_info)


def test_an_eyelike_of_a_dft_of_a_complex_signal_is_rewritten(cdtype):
    """The DFT's output type is not inferred from a complex signal."""
    model = make_model(
        [helper.make_node("DFT", ["x"], ["f"], axis=1),
         helper.make_node("EyeLike", ["f"], ["y"], dtype=helper.np_dtype_to_tensor_dtype(np.dtype(cdtype)), k=1)],
        [vi("x", cdtype, [3, 3])],
        [vi("y", cdtype, [3, 3])],
        opset=18,
    )  # fmt: skip
    assert_rewrites(model)


def test_an_opset_upgrade_of_an_eyelike_of_a_dft_of_a_complex_signal_is_rewritten():
    """onnx's version converter infers shapes on the way, and stops the process there."""
    model = make_model(
        [helper.make_node("DFT", ["x"], ["f"], axis=1),
         helper.make_node("EyeLike", ["f"], ["y"], dtype=TensorProto.COMPLEX64, k=0)],
        [vi("x", np.complex64, [3, 3])],
        [vi("y", np.complex64, [3, 3])],
        opset=17,
    )  # fmt: skip
    assert_rewrites(model, target_opset=18)
