"""Whole research-model blocks (fixtures/models, made by each folder's make_models.py):
LRU, S4D, FNO-1D and 2-D, GFNet, Llama decoders, FNet and beamformers from jax2onnx;
MFCC and STFT-mask front ends, a Keras FNO and RoPE attention from tf2onnx; FNO-1D, STFT
spectrograms and Llama attention from torch.onnx. Each converts, runs in onnxruntime,
and matches its framework's own outputs (saved beside it) at rtol 1e-4, atol 1e-5.
(That normalize leaves none of their values untyped is tests/normalize/test_decide.py's.)"""

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from onnx_decomplex.check import find_complex
from onnx_decomplex.cmath import pack
from onnx_decomplex.pipeline import Files, convert_file

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
CORPUS = ROOT / "models"
MODELS = sorted(CORPUS.glob("*/*.onnx"))
IDS = [str(p.relative_to(CORPUS).with_suffix("")) for p in MODELS]

EXPORTERS = {"jax2onnx", "tf2onnx", "torch"}

UNCHANGED = {"tf2onnx/log_mel_80", "torch/llama_attention"}
"""Exports with no complex value left, not even a DFT's: the exporter lowered every
complex value itself. (torch's FNOs and STFT front ends hold no complex type either, but
their DFTs and STFTs compute complex values, which the default target takes on.)"""


def _files(path: Path) -> Files:
    stem = path.with_suffix("")
    return Files(inputs=Path(f"{stem}.npz"), expected=Path(f"{stem}.expected.npz"))


def test_the_corpus_holds_every_architecture():
    assert {p.parent.name for p in MODELS} == EXPORTERS
    for must in ("jax2onnx/lru", "jax2onnx/s4d", "jax2onnx/fno1d", "jax2onnx/fno1d_nnx",
                 "jax2onnx/fno2d", "jax2onnx/gfnet_block", "jax2onnx/llama_decoder",
                 "jax2onnx/fnet", "jax2onnx/beamformer_das", "jax2onnx/beamformer_mvdr",
                 "tf2onnx/mfcc_frontend",
                 "tf2onnx/stft_mask_enhance", "tf2onnx/fno", "tf2onnx/rope_attention",
                 "torch/fno1d_cfloat", "torch/whisper_log_mel", "torch/llama_attention"):  # fmt: skip
        assert must in IDS
    for path in MODELS:
        assert path.stat().st_size < 2 << 20, path
        assert all(f.exists() for f in (_files(path).inputs, _files(path).expected))


@pytest.mark.parametrize("path", MODELS, ids=IDS)
def test_model_converts_and_matches_its_framework(path, tmp_path):
    name = str(path.relative_to(CORPUS).with_suffix(""))
    out = tmp_path / path.name
    result = convert_file(path, out, files=_files(path))
    assert result.ok
    assert result.framework is not None and result.framework.passed, result.framework.outputs
    model = onnx.load(out)
    assert find_complex(model) == []
    if name in UNCHANGED:
        assert not result.report.changed
        return
    onnx.checker.check_model(model, full_check=True)
    assert result.validation is not None and result.validation.passed


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
@pytest.mark.parametrize("scale, finite", [(3e4, True), (4e4, False)])
def test_the_mvdr_export_overflows_where_jax_does_not_and_so_does_its_rewrite(
    target, scale, finite, tmp_path
):
    """jax2onnx writes R^H / s, s = |R|_1 |R|_inf taken as complex, as
    (x s + y 0) / (s^2 + 0^2), where XLA's complex division does not square s: s^2
    overflows float32 from s = 1.8e19, at inputs 4e4 times the fixture's (|x| up to
    1.4e5; 3e4 times stays below). The export's power is inf there, where JAX's is
    2.9e8 to 4.1e8, and so is the rewrite's: the function it keeps is the export's, not
    the one the exporter meant."""
    src = CORPUS / "jax2onnx" / "beamformer_mvdr.onnx"
    x = (np.load(src.with_suffix(".npz"))["in_0"] * scale).astype(np.complex64)
    np.savez(inputs := tmp_path / "loud.npz", in_0=x)
    out = tmp_path / src.name
    result = convert_file(src, out, files=Files(inputs=inputs), target=target)
    assert result.ok and result.validation.passed
    session = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    (power,) = session.run(None, {"in_0": pack(x)})
    if finite:
        assert np.all(np.isfinite(power)) and np.all(power > 1e8)
    else:
        assert np.all(np.isposinf(power))
