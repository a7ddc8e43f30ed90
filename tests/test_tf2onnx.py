"""Real tf2onnx exports (fixtures/tf2onnx, made by make_tf2onnx.py), with TensorFlow's
own outputs saved beside them.

tf2onnx copies complex dtypes onto standard ONNX ops where it has a converter. Where it
has none, it writes TensorFlow's own op (`Complex`, `RFFT`, `ComplexAbs`, ...) in the
default domain, which is no ONNX op, and sometimes converts the ops around it for its
own packed layout. Each export converts, runs in onnxruntime and matches TensorFlow.
"""

from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner
from onnx_decomplex.cli.exits import EXIT_VALIDATION
from onnx_decomplex.cli.main import main

from onnx_decomplex.check import find_complex
from onnx_decomplex.files.tensorflow import TENSORFLOW_OPS, is_tensorflow_op
from onnx_decomplex.graphs import graph_nodes
from onnx_decomplex.pipeline import Files, convert_file

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "tf2onnx"
NAMES = sorted(p.stem for p in CORPUS.glob("*.onnx"))

HALF_CONVERTED = {
    "fft_abs", "fft2d_abs", "abs_batch2", "mul_abs_batch2", "sign_batch2",
    "cond_abs_batch2", "cond_abs_batch2_other",
}  # fmt: skip
"""Exports with tf2onnx's magnitude of a complex value z: its converter reads z as its own
packed layout, the pair on a leading axis (Gather(z, [0|1], axis=0), a 2+0j exponent).
It writes that for a raw FFT's output, and for any complex value whose leading dim is 2."""

CONVERTED = {"rfft_abs_batch2", "rfft_abs_batch3", "spectrogram"}
"""Exports tf2onnx converted whole, to real graphs: nothing to rewrite."""

BATCH_PAIRS = [("abs_batch2", "abs"), ("mul_abs_batch2", "mul_abs_batch3"),
               ("sign_batch2", "sign_batch3")]  # fmt: skip
"""One function exported at a leading dim of 2 and of 3: two graphs, one meaning."""

WRONG = {"irfft_length", "pad"}
"""Exports that compute something else than TensorFlow: tf2onnx pads a complex tensor
between a Cast to float and one back, and a Cast to a real type keeps the real part.
Converted faithfully, they fail against TensorFlow's outputs."""


def _raw_ops(name: str) -> list[onnx.NodeProto]:
    model = onnx.load(CORPUS / f"{name}.onnx")
    return [n for n in graph_nodes(model.graph) if is_tensorflow_op(n)]


def _files(name):
    return CORPUS / f"{name}.onnx", CORPUS / f"{name}.npz", CORPUS / f"{name}.expected.npz"


def test_the_corpus_is_there():
    named = HALF_CONVERTED | CONVERTED | WRONG | {n for pair in BATCH_PAIRS for n in pair}
    assert len(NAMES) >= 90 and named < set(NAMES)


def test_the_corpus_holds_every_tensorflow_op():
    assert {n.op_type for name in NAMES for n in _raw_ops(name)} == TENSORFLOW_OPS


@pytest.mark.parametrize("name", sorted(set(NAMES) - WRONG))
def test_export_converts_and_matches_tensorflow(name, tmp_path):
    src, inputs, expected = _files(name)
    out = tmp_path / f"{name}.onnx"
    result = convert_file(src, out, files=Files(inputs=inputs, expected=expected))
    assert result.report.has_complex == (name not in CONVERTED)
    assert result.framework.passed, result.framework.outputs
    assert result.validation is None if name in CONVERTED else result.validation.passed
    assert result.report.warnings == []
    model = onnx.load(out)
    assert find_complex(model) == []
    onnx.checker.check_model(model, full_check=True)
    readings = " ".join(result.report.readings)
    for node in _raw_ops(name):
        assert f"{node.name} ({node.op_type}): TensorFlow's {node.op_type}" in readings
    if not _raw_ops(name) and name not in HALF_CONVERTED:
        assert result.report.normalized is None
    if name in HALF_CONVERTED:
        assert "tf2onnx's pair on axis 0" in readings and "(Pow): exponent" in readings


@pytest.mark.parametrize(("two", "three"), BATCH_PAIRS)
def test_the_leading_dim_decides_the_export_not_the_meaning(two, three):
    assert not any(n.op_type == "ComplexAbs" for n in _raw_ops(two))
    assert any(n.op_type == "ComplexAbs" for n in _raw_ops(three))


@pytest.mark.parametrize("name", ["cond_conj", "cond_fft", "cond_abs_batch2"])
def test_raw_ops_inside_if_branches_are_read(name, tmp_path):
    result = convert_file(CORPUS / f"{name}.onnx", tmp_path / "o.onnx", validate=False)
    branches = {line.split(":")[0] for line in result.report.readings}
    assert {b.split()[-1] for b in branches} == {"then_branch", "else_branch"} - (
        {"else_branch"} if name == "cond_conj" else set()
    )


def test_the_cli_names_what_it_read_with_v(tmp_path):
    src, inputs, expected = _files("spectral_filter")
    result = CliRunner().invoke(main, [str(src), str(tmp_path / "o.onnx"), "-v", "--load-inputs",
                                       str(inputs), "--expected-outputs", str(expected)])  # fmt: skip
    assert result.exit_code == 0
    assert "(RFFT): TensorFlow's RFFT" in result.output and "(IRFFT)" in result.output
    assert result.output.count("PASSED") == 2


@pytest.mark.parametrize("name", sorted(WRONG))
def test_export_that_computes_something_else_fails_against_tensorflow(name, tmp_path):
    src, inputs, expected = _files(name)
    result = CliRunner().invoke(main, [str(src), str(tmp_path / "o.onnx"), "--load-inputs",
                                       str(inputs), "--expected-outputs", str(expected)])  # fmt: skip
    assert result.exit_code == EXIT_VALIDATION
    assert "validation failed for Identity:0 (against expected outputs" in result.stderr
    assert "casts it back to complex: its imaginary part is dropped" in result.stderr
