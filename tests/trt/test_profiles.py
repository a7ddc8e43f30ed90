"""Profile shapes and pool limits from command-line specs."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.trt.profiles import build_profile, parse_pool_limits, parse_size


def model():
    """x: complex [batch, seq, 64]; t: real [seq, 32]; k: static."""
    node = helper.make_node("Identity", ["x"], ["y"])
    return make_model(
        [node],
        [
            vi("x", np.complex64, ["batch", "seq", 64]),
            vi("t", np.float32, ["seq", 32]),
            vi("k", np.float32, [4]),
        ],  # fmt: skip
        [vi("y", np.complex64, None)],
    )


def test_logical_shapes_get_the_trailing_2_and_dims_propagate():
    specs = {"min": "x:1x1x64", "opt": "x:[2,128,64]", "max": ["x:4x512x64"]}
    p = build_profile(model(), specs)
    assert p.shapes["x"] == ((1, 1, 64, 2), (2, 128, 64, 2), (4, 512, 64, 2))
    # t shares 'seq' with x, so it needs no spec of its own; k is static: no entry.
    assert p.shapes["t"] == ((1, 32), (128, 32), (512, 32))
    assert "k" not in p.shapes
    assert p.logical("opt") == {"x": (2, 128, 64), "t": (128, 32)}


def test_packed_shapes_are_accepted():
    p = build_profile(model(), {"opt": "x:2x8x64x2"})
    assert p.shapes["x"] == ((2, 8, 64, 2),) * 3


def test_one_kind_fixes_the_shape():
    p = build_profile(model(), {"max": "x:3x16x64"})
    assert p.shapes["x"] == ((3, 16, 64, 2),) * 3


def test_missing_shapes_say_which_flags():
    with pytest.raises(DecomplexError) as e:
        build_profile(model(), {})
    text = str(e.value)
    assert "--trt-min-shapes, --trt-opt-shapes and --trt-max-shapes" in text
    assert "x:<batch>x<seq>x64" in text and "t:<seq>x32" in text


@pytest.mark.parametrize(
    "specs, message",
    [
        ({"opt": "nope:1"}, "'nope', which is not an input; inputs: x, t, k"),
        ({"opt": "x:1x2"}, "gives 2 dims for 'x', which has 4 (logical rank 3)"),
        ({"opt": "x:1x2x65"}, "gives 65 for dim 2 of 'x', which is fixed at 64"),
        ({"min": "x:1x1x64", "max": "x:2x2x64"}, "add --trt-opt-shapes"),
        ({"min": "x:4x1x64", "opt": "x:2x2x64", "max": "x:8x8x64"}, "min <= opt <= max"),
        ({"opt": "x:1xax64"}, "dims must be integers"),
    ],
)
def test_bad_specs(specs, message):
    with pytest.raises(DecomplexError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_profile(model(), specs)


def test_static_model_needs_nothing():
    m = make_model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [vi("x", np.float32, [2, 3])],
        [vi("y", np.float32, None)],
    )
    assert build_profile(m, {}).shapes == {}


@pytest.mark.parametrize(
    "text, value",
    [
        ("2G", 2 << 30),
        ("512M", 512 << 20),
        ("1.5G", 3 << 29),
        ("64k", 64 << 10),
        ("4096B", 4096),
        ("2GiB", 2 << 30),
    ],  # fmt: skip
)
def test_sizes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["2048", "2X", "", "G"])
def test_sizes_need_a_unit(text):
    with pytest.raises(DecomplexError, match="a number and a unit"):
        parse_size(text)


def test_pool_limits_both_spellings():
    limits = parse_pool_limits(["workspace:2G", "tacticSharedMem:48K,dla_local_dram:1M"])
    assert limits == {
        "WORKSPACE": 2 << 30,
        "TACTIC_SHARED_MEMORY": 48 << 10,
        "DLA_LOCAL_DRAM": 1 << 20,
    }
    with pytest.raises(DecomplexError, match="POOL:SIZE"):
        parse_pool_limits("scratch:1G")


def test_validation_shapes_must_fit_the_profile():
    p = build_profile(model(), {"min": "x:1x1x64", "opt": "x:2x8x64", "max": "x:4x16x64"})
    p.check_within({"x": (3, 16, 64), "t": (16, 32), "k": (4,)})
    with pytest.raises(DecomplexError, match=r"shape \(3, 17, 64\), outside the engine's profile"):
        p.check_within({"x": (3, 17, 64)})
