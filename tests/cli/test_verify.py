"""`onnx-decomplex verify ORIGINAL CONVERTED`: a conversion made already, validated as a
conversion validates its own output, with the same verdict and exit codes."""

import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner
from onnx_decomplex.cli.exits import EXIT_ERROR, EXIT_VALIDATION
from onnx_decomplex.cli.verify import verify

from onnx_decomplex.pipeline import Files, convert_file, siblings, verify_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LRU = FIXTURES / "models" / "jax2onnx" / "lru.onnx"


def invoke(*args):
    return CliRunner().invoke(verify, [str(a) for a in args])


@pytest.fixture
def converted(tmp_path):
    out = tmp_path / "lru.onnx"
    assert convert_file(LRU, out).ok
    return out


def _negated(path: Path, to: Path) -> Path:
    """The conversion with its output negated: a sign a buggy rule could flip."""
    model = onnx.load(path)
    out = model.graph.output[0].name
    producer = next(n for n in model.graph.node if out in n.output)
    producer.output[list(producer.output).index(out)] = f"{out}_before"
    model.graph.node.append(onnx.helper.make_node("Neg", [f"{out}_before"], [out]))
    onnx.save(model, to)
    return to


def test_a_conversion_verifies_against_the_reference_and_its_framework(converted):
    result = invoke(LRU, converted)
    assert result.exit_code == 0, result.output
    # The siblings lru.npz and lru.expected.npz are read, as a conversion reads them.
    assert "reference (onnx.reference)" in result.output
    assert "reference (expected outputs lru.expected.npz)" in result.output
    assert result.output.count("PASSED") == 2
    assert f"verified {converted} against {LRU}" in result.output


def test_a_wrong_conversion_fails_with_the_conversions_exit_code(converted, tmp_path):
    wrong = _negated(converted, tmp_path / "wrong.onnx")
    before = sorted(tmp_path.iterdir())
    result = invoke(LRU, wrong)
    assert result.exit_code == EXIT_VALIDATION
    assert "FAILED" in result.output
    assert f"error: {wrong}: validation failed for" in result.stderr
    assert sorted(tmp_path.iterdir()) == before  # nothing written


def test_the_library_call_gives_the_conversions_result(converted):
    files = Files(*siblings(LRU))
    made = convert_file(LRU, converted.with_name("again.onnx"), files=files)
    checked = verify_file(LRU, converted, files=files)
    assert checked.ok and made.ok
    assert [o.name for o in checked.validation.outputs] == [o.name for o in made.validation.outputs]
    assert checked.framework is not None and checked.framework.passed


def test_a_conversion_of_another_model_is_an_error_naming_it(converted):
    other = FIXTURES / "complex_io.onnx"
    result = invoke(other, converted, "--input-shapes", "z:[2,8,6]")
    assert result.exit_code == EXIT_ERROR
    assert result.stderr.startswith(f"error: {converted}: onnxruntime could not run")
    assert "--no-validate" not in result.stderr  # no such option here


def test_the_console_script_dispatches_verify(converted):
    exe = Path(sys.executable).parent / "onnx-decomplex"
    run = subprocess.run([exe, "verify", LRU, converted, "-q"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    run = subprocess.run([exe, "verify", "--help"], capture_output=True, text=True)
    assert run.returncode == 0 and "Usage: onnx-decomplex verify" in run.stdout
