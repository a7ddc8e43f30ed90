"""What validation ran on, kept and read again: --save-inputs and --save-outputs write it,
passed or failed, never over a file the run reads; a model's sibling NAME.npz and
NAME.expected.npz are read for one model as for a folder of them."""

import hashlib
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from onnx_decomplex.cli.exits import EXIT_ERROR, EXIT_TIMEOUT, EXIT_USAGE, EXIT_VALIDATION
from onnx_decomplex.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _state(folder: Path) -> dict[str, str]:
    """Every file under `folder`, hidden ones too, by content."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}  # fmt: skip


@pytest.fixture
def model(tmp_path):
    """rope_freqs_initializer.onnx (xq: float [batch, seq, 4, 32] times a complex table)
    alone in a folder; it fails validation at zero tolerances."""
    return Path(shutil.copy(FIXTURES / "rope_freqs_initializer.onnx", tmp_path / "m.onnx"))


@pytest.fixture
def cmodel(tmp_path):
    """complex_io.onnx (z: complex64 [batch, 8, 6] -> y: complex64 [batch, 48]) alone in
    a folder; it fails validation at zero tolerances."""
    return Path(shutil.copy(FIXTURES / "complex_io.onnx", tmp_path / "m.onnx"))


def _errors(stdout: str) -> list[str]:
    return re.findall(r"(?:PASSED|FAILED) \S+: \S+ of the tolerance, max rel error [^,\s]+", stdout)


# --- H: --save-inputs and --save-outputs ----------------------------------------------------


def test_a_failed_validation_keeps_its_inputs_and_outputs_for_a_replay(cmodel, tmp_path):
    out, inputs, outputs = tmp_path / "o.onnx", tmp_path / "in.npz", tmp_path / "outs.npz"
    exact = ["--atol", "0", "--rtol", "0"]
    result = invoke(cmodel, out, *exact, "--save-inputs", inputs, "--save-outputs", outputs)
    assert result.exit_code == EXIT_VALIDATION, result.output
    assert f"nothing but {inputs} and {outputs} was written" in result.stderr
    assert sorted(_state(tmp_path)) == ["in.npz", "m.onnx", "outs.npz"]  # no OUT, no temp
    with np.load(inputs) as saved:
        assert saved.files == ["z"] and saved["z"].shape == (2, 8, 6)
        assert saved["z"].dtype == np.complex64  # as the model takes it, not packed
    with np.load(outputs) as saved:
        assert sorted(saved.files) == ["expected:y", "y"]
        assert saved["y"].shape == saved["expected:y"].shape == (2, 48)
        assert saved["y"].dtype == np.complex64  # the rewrite's, unpacked
        assert not np.array_equal(saved["y"], saved["expected:y"])
    # The replay: the same inputs fail the same way, with another seed too.
    replay = invoke(cmodel, out, *exact, "--load-inputs", inputs, "--seed", "7")
    assert replay.exit_code == EXIT_VALIDATION
    assert _errors(replay.stdout) == _errors(result.stdout) and "FAILED" in replay.stdout
    # Saved outputs stand in for the reference, as --load-inputs reads `expected:NAME`.
    both = tmp_path / "both.npz"
    with np.load(inputs) as i, np.load(outputs) as o:
        np.savez(both, z=i["z"], **{"expected:y": o["expected:y"]})
    again = invoke(cmodel, out, *exact, "--load-inputs", both)
    assert again.exit_code == EXIT_VALIDATION and "reference (saved outputs)" in again.stdout
    assert _errors(again.stdout) == _errors(result.stdout)


def test_a_passing_run_writes_them_too(cmodel, tmp_path):
    out, inputs, outputs = tmp_path / "o.onnx", tmp_path / "in.npz", tmp_path / "outs.npz"
    result = invoke(cmodel, out, "--save-inputs", inputs, "--save-outputs", outputs)
    assert result.exit_code == 0, result.output
    assert f"wrote {out} and {inputs} and {outputs}" in result.stdout
    assert sorted(_state(tmp_path)) == ["in.npz", "m.onnx", "o.onnx", "outs.npz"]


def test_they_are_written_with_the_umask(model, tmp_path):
    mask = os.umask(0o027)
    try:
        assert (
            invoke(model, tmp_path / "o.onnx", "--save-inputs", tmp_path / "in.npz").exit_code == 0
        )
    finally:
        os.umask(mask)
    assert (tmp_path / "in.npz").stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize(
    "args, message",
    [
        (["--save-inputs", "m.onnx"], "the --save-inputs file is the input model"),
        (["--save-outputs", "o.onnx"], "the --save-outputs file is the output too"),
        (
            ["--save-inputs", "a.npz", "--save-outputs", "a.npz"],
            "the --save-outputs file is the --save-inputs file too",
        ),
        (
            ["--load-inputs", "keep.npz", "--save-inputs", "keep.npz"],
            "the --save-inputs file is the --load-inputs file",
        ),
    ],  # fmt: skip
)
def test_never_over_a_file_the_run_reads_or_writes(cmodel, tmp_path, args, message):
    np.savez(tmp_path / "keep.npz", z=np.ones((1, 8, 6), np.complex64))
    before = _state(tmp_path)
    args = [tmp_path / a if a.endswith((".onnx", ".npz")) else a for a in args]
    result = invoke(cmodel, tmp_path / "o.onnx", *args)
    assert result.exit_code == EXIT_ERROR, result.output
    (line,) = result.stderr.strip().splitlines()
    assert message in line, line
    assert _state(tmp_path) == before


def test_they_are_for_one_model(tmp_path, model):
    result = invoke(tmp_path, tmp_path / "out", "--save-inputs", tmp_path / "in.npz")
    assert result.exit_code == EXIT_USAGE and "are for one model, not a folder" in result.stderr


def test_they_need_validation(model, tmp_path):
    result = invoke(model, tmp_path / "o.onnx", "--no-validate", "--save-outputs", "x.npz")
    assert result.exit_code == EXIT_USAGE
    assert "--save-outputs: only with validation" in result.stderr


def test_nothing_to_save_when_nothing_is_validated(tmp_path):
    src = shutil.copy(FIXTURES / "no_complex.onnx", tmp_path / "n.onnx")
    result = invoke(src, tmp_path / "o.onnx", "--save-inputs", tmp_path / "in.npz")
    assert result.exit_code == 0, result.output
    assert f"validation did not run: {tmp_path / 'in.npz'} not written" in result.stderr
    assert not (tmp_path / "in.npz").exists()


# --- I: a model's sibling NAME.npz and NAME.expected.npz ------------------------------------


def _sibling_inputs(model: Path, batch: int = 3) -> np.ndarray:
    xq = np.random.default_rng(1).standard_normal((batch, 16, 4, 32)).astype(np.float32)
    np.savez(model.with_suffix(".npz"), xq=xq)
    return xq


def test_one_model_reads_its_sibling_inputs(model, tmp_path):
    _sibling_inputs(model)
    result = invoke(model, tmp_path / "o.onnx")
    assert result.exit_code == 0, result.output
    assert f"inputs: {model.with_suffix('.npz')}, beside the model" in result.stdout
    assert "inputs xq:3x16x4x32" in result.stdout


def test_quietly_too(model, tmp_path):
    xq = _sibling_inputs(model)
    result = invoke(model, tmp_path / "o.onnx", "-q", "--save-inputs", tmp_path / "used.npz")
    assert result.exit_code == 0 and result.stdout == ""
    with np.load(tmp_path / "used.npz") as used:
        np.testing.assert_array_equal(used["xq"], xq)


def test_given_inputs_win_over_the_siblings(model, tmp_path):
    _sibling_inputs(model)
    np.savez(model.with_name("m.expected.npz"), xq_out=np.zeros((3, 16, 4, 16), np.complex64))
    np.savez(tmp_path / "other.npz", xq=np.ones((1, 16, 4, 32), np.float32))
    result = invoke(model, tmp_path / "o.onnx", "--load-inputs", tmp_path / "other.npz")
    # The framework's outputs beside the model were computed on the inputs beside it.
    assert result.exit_code == 0, result.output
    assert "beside the model" not in result.stdout and "inputs xq:1x16x4x32" in result.stdout


def test_input_shapes_give_way_to_sibling_inputs_and_say_so(model, tmp_path):
    _sibling_inputs(model)
    result = invoke(model, tmp_path / "o.onnx", "--input-shapes", "xq:1x16x4x32")
    assert result.exit_code == 0, result.output
    assert "(--input-shapes is not used: these inputs have their shapes)" in result.stdout
    assert "inputs xq:3x16x4x32" in result.stdout


def test_one_model_and_a_folder_read_siblings_alike(tmp_path):
    """Outputs beside the model that the rewrite does not match fail it in both modes."""
    models = tmp_path / "models"
    models.mkdir()
    model = Path(shutil.copy(FIXTURES / "rope_freqs_initializer.onnx", models / "m.onnx"))
    _sibling_inputs(model)
    np.savez(model.with_name("m.expected.npz"), xq_out=np.zeros((3, 16, 4, 16), np.complex64))
    out = tmp_path / "out"
    out.mkdir()
    one = invoke(model, out / "m.onnx")
    assert one.exit_code == EXIT_VALIDATION, one.output
    assert f"expected outputs: {model.with_name('m.expected.npz')}, beside the model" in one.stdout
    assert "xq_out (against expected outputs m.expected.npz)" in one.stderr
    folder = invoke(models, out, "--report", tmp_path / "r.json")
    assert folder.exit_code == EXIT_ERROR
    assert "validation-failed" in folder.stdout
    # Outputs beside the model without its inputs: the same error in both modes.
    model.with_suffix(".npz").unlink()
    one = invoke(model, out / "m.onnx")
    assert one.exit_code == EXIT_ERROR and "need the inputs they were computed on" in one.stderr
    folder = invoke(models, out, "--report", tmp_path / "r.json")
    assert folder.exit_code == EXIT_ERROR
    assert "need the inputs they were computed on" in (tmp_path / "r.json").read_text()


def test_a_validation_past_its_time_limit_keeps_the_inputs(cmodel, tmp_path):
    """The inputs are written once made, before either side runs: a run stopped past
    --validate-timeout (here before its first node) leaves them, and nothing else."""
    out, inputs, outputs = tmp_path / "o.onnx", tmp_path / "in.npz", tmp_path / "outs.npz"
    result = invoke(cmodel, out, "--validate-timeout", "1e-9", "--save-inputs", inputs,
                    "--save-outputs", outputs)  # fmt: skip
    assert result.exit_code == EXIT_TIMEOUT, result.output
    assert sorted(_state(tmp_path)) == ["in.npz", "m.onnx"]
    with np.load(inputs) as saved:
        assert saved["z"].shape == (2, 8, 6)
