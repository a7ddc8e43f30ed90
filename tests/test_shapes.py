import pytest

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.shapes import parse_shapes


@pytest.mark.parametrize(
    "specs, expected",
    [
        ("x:1x8x128", {"x": (1, 8, 128)}),
        ("x:[1,8,128]", {"x": (1, 8, 128)}),
        ("x:1x8,y:4", {"x": (1, 8), "y": (4,)}),
        ("x:[1, 8],y:[4]", {"x": (1, 8), "y": (4,)}),
        (["x:[1,8]", "y:2x3"], {"x": (1, 8), "y": (2, 3)}),
        ("input:0:2x3", {"input:0": (2, 3)}),
        ("s:[]", {"s": ()}),
        ("", {}),
    ],
)
def test_both_syntaxes(specs, expected):
    assert parse_shapes(specs) == expected


@pytest.mark.parametrize(
    "spec, message",
    [
        ("x", "expected name:1x8x128"),
        (":1x2", "expected name:1x8x128"),
        ("x:1xa", "dims must be integers"),
        ("x:[1,2", "missing ']'"),
        ("x:1x-2", "must not be negative"),
    ],
)
def test_bad_specs_say_why(spec, message):
    with pytest.raises(DecomplexError, match=message.replace("[", r"\[")) as info:
        parse_shapes(spec)
    assert spec in str(info.value)
