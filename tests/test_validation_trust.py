"""Validation of whole runs that can be trusted: every model given alone passes it, with
random inputs and edge values, and a wrong rewrite of one still fails it."""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx
import pytest
from conftest import not_peers, weighed
from mutants import mutants

from onnx_decomplex.pipeline import convert_file, verify_file

ROOT_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
REFUSED_ALONE = {"complex_relu.onnx", "jax2onnx/cumprod.onnx"}
"""Fixtures refused before validation: a Relu of a complex value, and an op no opset has."""


def _alone(path: Path, folder: Path):
    src = folder / path.name
    shutil.copy(path, src)  # no NAME.npz beside it: random inputs and edge values
    return convert_file(src, folder / "out.onnx")


@pytest.mark.parametrize(
    "path",
    weighed([p for p in not_peers(sorted(ROOT_FIXTURES.glob("**/*.onnx")))
             if str(p.relative_to(ROOT_FIXTURES)) not in REFUSED_ALONE],
            lambda p: str(p.relative_to(ROOT_FIXTURES))),
)  # fmt: skip
def test_every_fixture_given_alone_passes_default_validation(path, tmp_path):
    result = _alone(path, tmp_path)
    assert result.ok, [o for v in result.validations for o in v.outputs if not o.passed]


def test_a_transform_of_large_edge_values_is_judged_at_float32s_reach(tmp_path):
    """A 2-D FFT of a signal holding 1e20: the float32 transform is off by about 1e12 at
    bins where exact arithmetic cancels the 1e20, which float32 cannot promise better
    (onnxruntime's own DFT, by 6e13): those bins depend on the edge values, and are
    judged by float32's reach there."""
    result = _alone(ROOT_FIXTURES / "tf2onnx" / "fft2d.onnx", tmp_path)
    assert result.ok
    (o,) = result.validation.outputs
    assert o.max_abs > 1e11 and o.passed
    assert o.edges.elements > 0


def test_an_error_at_a_small_edge_value_is_not_excused(tmp_path):
    """Angle at 0 takes the sign of its zero parts: a flipped unit there is off by pi at an
    element that depends on the edge value 0 only, not on the 1e20 ones."""
    path = ROOT_FIXTURES / "models" / "tf2onnx" / "angle_zeros.onnx"
    out = tmp_path / "angle.onnx"
    assert convert_file(path, out).ok
    (mutant,) = [m for what, m in mutants(onnx.load(out)) if what.endswith("_unit_1")]
    onnx.save(mutant, out)
    (o,) = verify_file(path, out).validation.outputs
    assert not o.passed and o.edges.elements > 0
