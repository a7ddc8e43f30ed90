"""Half-lowered jax2onnx exports: native complex initializers and casts read with
Gather(axis=rank). onnxruntime rejects them as exported; after the rewrite they run,
and match JAX's own outputs saved beside them."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers import run_ort

from onnx_decomplex import decomplex
from onnx_decomplex.check import find_complex
from onnx_decomplex.cmath import pack, unpack

NAMES = ["rope", "complex_table", "complex_linear", "fnet"]


def _load(root, name):
    folder = root / "fixtures" / "jax2onnx"
    return onnx.load(folder / f"{name}.onnx"), dict(np.load(folder / f"{name}.npz"))


@pytest.mark.parametrize("name", NAMES)
def test_export_is_rejected_as_is(root, name):
    model, _ = _load(root, name)
    with pytest.raises(Exception):  # noqa: B017 - any load failure: that is the point
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


# jax2onnx 0.17.1's `.real` of the RoPE product re-packs a tensor it had already
# packed ((2, 16, 8, 2) -> (2, 16, 8, 2, 2)), so its final Reshape cannot run in any
# reading of the graph. Kept so that a fixed export shows up here.
EXPORTER_BUG = pytest.mark.xfail(reason="the export itself is inconsistent", strict=True)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=EXPORTER_BUG) if n == "rope" else n for n in NAMES]
)
def test_rewrite_matches_jax(root, name):
    model, data = _load(root, name)
    expected = data.pop("expected")
    out, report = decomplex(model)
    assert report.has_complex and find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    # The exporter packed complex inputs itself: they are fed packed.
    feeds = {k: pack(v) if np.iscomplexobj(v) else v for k, v in data.items()}
    (got,) = run_ort(out, feeds)
    if np.iscomplexobj(expected):
        got = unpack(got)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
