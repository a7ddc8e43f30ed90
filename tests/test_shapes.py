import pytest

from onnx_decomplex.errors import OptionError
from onnx_decomplex.shapes import parse_shapes


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
