"""A map separable over two blocks of x's axes, a short sum of Kronecker products, read
as products along each block (`common.separable`); and FNet's token mixing, Re(FFT2)
with the residual and LayerNorm's mean, run so against JAX's outputs."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import convert_export, op_counts

from onnx_decomplex.targets.common import fusion
from onnx_decomplex.targets.common.separable import read_separable

CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "models"


def _run(form, x: np.ndarray) -> np.ndarray:
    """sum_k A_k X B_k^T, from the form's two products, on one row of x."""
    i1, i2, o1, o2 = form.blocks
    r = form.terms
    z = x.reshape(i1, i2) @ form.right  # [I1, r O2]
    stacked = z.reshape(i1, r, o2).transpose(1, 0, 2).reshape(r * i1, o2)
    return form.left @ stacked


@pytest.mark.parametrize("terms", [1, 3])
def test_a_sum_of_kronecker_products_is_two_products(terms):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((terms, 6, 8))  # A_k [O1, I1]
    b = rng.standard_normal((terms, 5, 12))  # B_k [O2, I2]
    m = sum(np.kron(a[k], b[k]) for k in range(terms))  # [(O1, O2), (I1, I2)]
    form = read_separable(m, [8, 12], [6, 5])
    assert form.terms == terms and form.blocks == (8, 12, 6, 5)
    x = rng.standard_normal(96)
    np.testing.assert_allclose(_run(form, x).reshape(-1), m @ x, atol=1e-10)
    assert form.cost < m.size


def test_a_map_of_full_kronecker_rank_is_none():
    m = np.random.default_rng(1).standard_normal((64, 64))
    assert read_separable(m, [8, 8], [8, 8]) is None


@pytest.mark.parametrize("target", ["onnx", pytest.param("onnxruntime", marks=pytest.mark.slow)])
def test_fnets_mixing_is_separable(target, tmp_path):
    """x + Re(FFT2(x)) over 16 tokens and 32 features, then less its mean: three terms,
    on both targets; the outputs match JAX's."""
    result = convert_export(CORPUS / "jax2onnx" / "fnet.onnx", tmp_path / "fnet.onnx", target)
    assert result.validation.passed
    notes = [n for n in result.report.lowering_notes if "separable over 16 x 32, 3 terms" in n]
    assert len(notes) == 2, result.report.lowering_notes
    assert not {"DFT", "Einsum"} & set(op_counts(onnx.load(tmp_path / "fnet.onnx")))


def test_a_factored_product_keeps_the_zeros_a_phase_reads(tmp_path, monkeypatch):
    """angle(rfft2d(x)): the DC and Nyquist bins' imaginary parts are +0 whatever x is,
    and a factored M leaves rounding of either sign there, which the phase reads as 0 or
    pi. They are +0 again, through one Where on a constant mask. On 4 x 8 values one
    product by M costs less than the separable form's nodes; with dispatch free, the
    form a larger transform takes is taken here."""
    monkeypatch.setitem(fusion.COST, "node", 0.0)
    src = CORPUS.parent / "tf2onnx" / "rfft2d_angle.onnx"
    result = convert_export(src, tmp_path / "out.onnx")
    assert result.validation.passed
    assert any("separable" in note for note in result.report.lowering_notes)
    assert op_counts(onnx.load(tmp_path / "out.onnx"))["Where"] >= 1
