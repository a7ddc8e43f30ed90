"""Every complex math rule at special values, against the reference evaluator.

The values are signed zeros, real and imaginary values beyond the branch points
(each with a zero part of either sign, which picks the side of a branch cut),
magnitudes whose squares overflow or underflow (1e20 and 1e-30 in float32,
1e200 and 1e-200 in float64), and ordinary values. Results are compared with a
tolerance relative to each expected modulus and no absolute slack, so that a
lost tiny part fails; infinities and NaNs must match part by part.
"""

import numpy as np
import onnx
import pytest
from helpers import single

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.rules.unary import FUNCTIONS

RTOL = {np.complex64: 1e-4, np.complex128: 1e-9}


def _c(re: float, im: float) -> complex:
    return complex(re, im)


def special_values(cdtype) -> np.ndarray:
    """The values every rule is checked at, for one precision."""
    zeros = [_c(0.0, 0.0), _c(-0.0, 0.0), _c(0.0, -0.0), _c(-0.0, -0.0)]
    axes = []
    for v in (1.5, 2.0, 7.0):
        for zero in (0.0, -0.0):
            axes += [_c(v, zero), _c(-v, zero), _c(zero, v), _c(zero, -v)]
    ordinary = [0.5 - 0.5j, -1.5 + 0.7j, 0.3 + 2j, -0.2 - 0.9j, 1 + 0j, -1 + 0j, 1j, -1j]
    ordinary += [0.7 + 1e-3j, 3 - 4j]
    magnitudes = [1e20, 1e-30]
    if cdtype == np.complex128:
        magnitudes += [1e200, 1e-200]
    scaled = []
    for m in magnitudes:
        for re, im in ((1, 1), (-1, 1), (1, -1), (-1, -1), (1, 0), (0, 1), (-1, 0), (0, -1)):
            scaled.append(_c(m * re, m * im))
        scaled += [_c(m, 0.5 * m), _c(3 * m, -m)]
    return np.array(zeros + axes + ordinary + scaled, dtype=cdtype)


def check(model: onnx.ModelProto, feeds: dict, cdtype) -> onnx.ModelProto:
    """The three checks every rule test makes, with the tolerance of `cdtype`."""
    out, report = decomplex(model)
    assert report.has_complex
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    with np.errstate(all="ignore"):
        result = validate(model, out, feeds, atol=0.0, rtol=RTOL[cdtype])
    assert result.outputs, "nothing was compared"
    assert result.passed, result.outputs
    return out


@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_function(op, cdtype):
    values = special_values(cdtype)
    check(single(op, cdtype, shape=[len(values)]), {"a": values}, cdtype)
