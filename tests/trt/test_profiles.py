"""Profile shapes and pool limits from command-line specs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import make_model, vi
from onnx import helper
from onnx_decomplex.cli.main import main

from onnx_decomplex.errors import OptionError
from onnx_decomplex.trt.profiles import build_profile, parse_pool_limits, parse_size

HAS_TENSORRT = importlib.util.find_spec("tensorrt") is not None


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
    with pytest.raises(OptionError) as e:
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
        (
            {"min": "x:4x1x64", "opt": "x:2x2x64", "max": "x:8x8x64"},
            "dim 0 of 'x' min 4, opt 2, max 8: each dim needs min <= opt <= max",
        ),  # fmt: skip
        ({"opt": "x:1xax64"}, "dims must be integers"),
    ],
)
def test_bad_specs(specs, message):
    with pytest.raises(OptionError) as info:
        build_profile(model(), specs)
    assert message in str(info.value)


def test_shapes_parsed_already_are_taken():
    p = build_profile(
        model(), {"min": {"x": (1, 8, 64)}, "opt": {"x": (2, 8, 64)}, "max": "x:4,8,64"}
    )
    assert p.shapes["x"] == ((1, 8, 64, 2), (2, 8, 64, 2), (4, 8, 64, 2))


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
    with pytest.raises(OptionError, match="a number and a unit"):
        parse_size(text)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("workspace:2", "bad pool limit 'workspace:2': the size must be a number and a unit"),
        ("workspace=2G", "bad pool limit 'workspace=2G': expected POOL:SIZE"),
        (
            "workspace:1G,workspace:2G",
            "bad pool limit 'workspace:2G': the workspace pool is given twice",
        ),
    ],  # fmt: skip
)
def test_bad_pool_limits_quote_the_entry(spec, message):
    with pytest.raises(OptionError) as info:
        parse_pool_limits(spec)
    assert message in str(info.value)


def test_pool_limits_both_spellings():
    limits = parse_pool_limits(["workspace:2G", "tacticSharedMem:48K,dla_local_dram:1M"])
    assert limits == {
        "WORKSPACE": 2 << 30,
        "TACTIC_SHARED_MEMORY": 48 << 10,
        "DLA_LOCAL_DRAM": 1 << 20,
    }
    with pytest.raises(OptionError, match="POOL:SIZE"):
        parse_pool_limits("scratch:1G")


def test_validation_shapes_must_fit_the_profile():
    p = build_profile(model(), {"min": "x:1x1x64", "opt": "x:2x8x64", "max": "x:4x16x64"})
    p.check_within({"x": (3, 16, 64), "t": (16, 32), "k": (4,)})
    with pytest.raises(OptionError, match=r"shape \(3, 17, 64\), outside the engine's profile"):
        p.check_within({"x": (3, 17, 64)})


# --- Through the command line: every profile option is checked before TensorRT loads ------


def _engine_run(tmp_path, *args):
    """The CLI on fnet_block (x: float [batch, 8, 16]) with --build-engine."""
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "fnet_block.onnx"
    plan = tmp_path / "x.plan"
    argv = [str(fixture), str(tmp_path / "o.onnx"), "--build-engine", str(plan), *args]
    return CliRunner().invoke(main, argv)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--trt-opt-shapes", "x=2x8x16"],
            "Invalid value for '--trt-opt-shapes': bad shape spec 'x=2x8x16'",
        ),
        (
            ["--trt-min-shapes", "x:[1,8,16"],
            "Invalid value for '--trt-min-shapes': bad shape spec 'x:[1,8,16': missing ']'",
        ),
        (["--trt-max-shapes", "x:4x8x16,x:8x8x16"], "'x' is given twice"),
        (
            ["--trt-opt-shapes", "x:2,8,16", "--pool-limit", "workspace:2"],
            "Invalid value for '--pool-limit': bad pool limit 'workspace:2'",
        ),
        (
            ["--trt-opt-shapes", "x:2,8,16", "--builder-optimization-level", "6"],
            "Invalid value for '--builder-optimization-level'",
        ),
    ],  # fmt: skip
)
def test_malformed_profile_options_are_usage_errors(tmp_path, args, message):
    result = _engine_run(tmp_path, *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "TensorRT" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--trt-opt-shapes", "y:2x8x16"],
            "--trt-opt-shapes names 'y', which is not an input; inputs: x",
        ),
        (
            ["--trt-opt-shapes", "x:2x8x17"],
            "--trt-opt-shapes gives 17 for dim 2 of 'x', which is fixed at 16",
        ),
        (
            [
                "--trt-min-shapes",
                "x:4,8,16",
                "--trt-opt-shapes",
                "x:2,8,16",
                "--trt-max-shapes",
                "x:8,8,16",
            ],
            "the profile gives dim 0 of 'x' min 4, opt 2, max 8: each dim needs min <= opt <= max",
        ),
        (["--trt-min-shapes", "x:1x8x16", "--trt-max-shapes", "x:4x8x16"], "add --trt-opt-shapes"),
        (["--trt-opt-shapes", "x:0x8x16"], "--trt-opt-shapes gives 0 for dim 0 ('batch') of 'x'"),
        ([], "dynamic inputs need shapes for the engine"),
    ],  # fmt: skip
)
def test_profiles_that_do_not_fit_the_model_exit_2_before_tensorrt(tmp_path, args, message):
    """Where TensorRT is missing too: the profile is checked first, against the model."""
    result = _engine_run(tmp_path, *args)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "fnet_block.onnx" in line and message in line, line
    assert "TensorRT" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.skipif(HAS_TENSORRT, reason="TensorRT is installed here")
def test_opt_shapes_are_the_validation_shapes(tmp_path):
    """With no --input-shapes, validation takes the opt shapes (batch 3), not the
    default dim 2, which is outside this profile: the profile passes its checks, and the
    run stops at the missing TensorRT, exit 1."""
    result = _engine_run(tmp_path, "--trt-min-shapes", "x:3x8x16", "--trt-opt-shapes", "x:3x8x16",
                         "--trt-max-shapes", "x:4x8x16")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "TensorRT is not available" in result.stderr and "profile" not in result.stderr
