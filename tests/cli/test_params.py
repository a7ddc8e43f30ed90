"""Option values through the command line: a value that cannot be read, or that does not
fit the model, is bad usage (exit 2) in one line that names the option and the value;
nothing is written."""

import shutil
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx_decomplex.cli.exits import EXIT_USAGE
from onnx_decomplex.cli.main import main

from onnx_decomplex.folder.zoo import run_folder
from onnx_decomplex.options import Options

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
HAS_CUDA = "CUDAExecutionProvider" in ort.get_available_providers()


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def model(tmp_path):
    """complex_io.onnx (z: complex64 [batch, 8, 6], opset 13) alone in a folder."""
    return Path(shutil.copy(FIXTURES / "complex_io.onnx", tmp_path / "m.onnx"))


def _usage_error(result, *needles) -> str:
    """The click error line: exit 2, naming the option and the value."""
    assert result.exit_code == EXIT_USAGE, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("Error: "), result.stderr
    for needle in needles:
        assert needle in line, line
    return line


def _model_error(result, *needles) -> str:
    """The tool's own one-line error: exit 2, naming the file, the input and the dim."""
    assert result.exit_code == EXIT_USAGE, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "m.onnx" in line, line
    for needle in needles:
        assert needle in line, line
    return line


def _nothing_written(folder: Path):
    assert sorted(p.name for p in folder.iterdir()) == ["m.onnx"]


# --- A: malformed values --------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, quoted, why",
    [
        ("z=4x8x6", "z=4x8x6", "expected 'name:1x8x128', 'name:1,8,128' or 'name:[1,8,128]'"),
        ("z:[4,8,6", "z:[4,8,6", "missing ']'"),
        ("z:4xax6", "z:4xax6", "dims must be integers"),
        ("z:-1x8x6", "z:-1x8x6", "dims must not be negative"),
        ("z:4x8x6,z:4,8,6", "z:4,8,6", "'z' is given twice"),
    ],
)
def test_malformed_input_shapes(model, spec, quoted, why):
    result = invoke(model, model.parent / "o.onnx", "--input-shapes", spec)
    _usage_error(result, "Invalid value for '--input-shapes'", f"bad shape spec '{quoted}'", why)
    _nothing_written(model.parent)


def test_a_name_repeated_across_options_is_refused(model):
    result = invoke(model, model.parent / "o.onnx", "--input-shapes", "z:4x8x6",
                    "--input-shapes", "z:[2,8,6]")  # fmt: skip
    _usage_error(result, "'--input-shapes'", "'z' is given twice")


@pytest.mark.parametrize("flag", ["--load-inputs", "--expected-outputs"])
def test_a_file_to_read_that_does_not_exist(model, flag):
    missing = model.parent / "nope.npz"
    result = invoke(model, model.parent / "o.onnx", flag, missing)
    _usage_error(result, f"Invalid value for '{flag}'", "nope.npz", "does not exist")
    _nothing_written(model.parent)


# --- B: every spelling of a shape -----------------------------------------------------------


@pytest.mark.parametrize("spec", ["z:3x8x6", "z:3,8,6", "z:[3,8,6]", "z:[3, 8, 6]"])
def test_each_spelling_sets_the_validation_shape(model, spec):
    result = invoke(model, model.parent / "o.onnx", "--input-shapes", spec)
    assert result.exit_code == 0, result.output
    assert "inputs z:3x8x6" in result.stdout


def test_several_onnxsim_specs_in_one_value(tmp_path):
    src = shutil.copy(FIXTURES / "rope_freqs_input.onnx", tmp_path / "r.onnx")
    result = invoke(src, tmp_path / "o.onnx", "--input-shapes", "xq:1,5,4,32,freqs_cis:5,16")
    assert result.exit_code == 0, result.output
    assert "inputs xq:1x5x4x32, freqs_cis:5x16" in result.stdout


def test_help_shows_every_spelling():
    text = invoke("--help").stdout
    assert "'name:1x8x128', 'name:1,8,128' or 'name:[1,8,128]'" in " ".join(text.split())
    assert "a comma followed by name: starts the next" in " ".join(text.split())


# --- C: shapes that do not fit the model ----------------------------------------------------


@pytest.mark.parametrize(
    "spec, message",
    [
        ("z:4x8x7", "--input-shapes gives 7 for dim 2 of 'z', which is fixed at 6"),
        ("z:4x0x6", "--input-shapes gives 0 for dim 1 of 'z', which is fixed at 8"),
        (
            "z:0x8x6",
            "--input-shapes gives 0 for dim 0 ('batch') of 'z': validation on an empty "
            "input compares nothing; give 1 or more",
        ),
        ("z:4x8", "--input-shapes gives 2 dims for 'z', which has 3"),
        ("q:4x8x6", "--input-shapes names 'q', which is not an input; inputs: z"),
    ],  # fmt: skip
)
def test_shapes_that_do_not_fit_the_model(model, spec, message):
    _model_error(invoke(model, model.parent / "o.onnx", "--input-shapes", spec), message)
    _nothing_written(model.parent)


def test_shapes_for_random_inputs_and_inputs_from_a_file_are_refused_together(model, tmp_path):
    inputs = tmp_path / "in.npz"
    inputs.write_bytes(b"")
    result = invoke(model, tmp_path / "o.onnx", "--input-shapes", "z:3x8x6", "--load-inputs",
                    inputs)  # fmt: skip
    _usage_error(result, "--input-shapes makes random inputs and --load-inputs gives them")


# --- D: target opsets -----------------------------------------------------------------------


def test_a_target_opset_newer_than_onnx_knows(model):
    newest = onnx.defs.onnx_opset_version()
    result = invoke(model, model.parent / "o.onnx", "--target-opset", newest + 1)
    _usage_error(result, "Invalid value for '--target-opset'", f"{newest + 1}:",
                 f"onnx {onnx.__version__} knows opsets up to {newest}")  # fmt: skip
    _nothing_written(model.parent)


def test_a_target_opset_older_than_the_model(model):
    _model_error(invoke(model, model.parent / "o.onnx", "--target-opset", 12),
                 "target opset 12 is older than the model's opset 13; only upgrades are done")  # fmt: skip
    _nothing_written(model.parent)


def test_a_target_opset_below_the_oldest_supported(model):
    _usage_error(invoke(model, model.parent / "o.onnx", "--target-opset", 10),
                 "Invalid value for '--target-opset'", "x>=11")  # fmt: skip


# --- F: execution providers -----------------------------------------------------------------


@pytest.mark.parametrize("value", ["cpu", "CPUExecutionProvider", "CPU"])
def test_providers_short_or_full(model, value):
    result = invoke(model, model.parent / "o.onnx", "--providers", value)
    assert result.exit_code == 0, result.output
    assert "onnxruntime (CPUExecutionProvider)" in result.stdout


def test_a_provider_onnxruntime_lacks(model):
    result = invoke(model, model.parent / "o.onnx", "--providers", "cuda,cpu")
    if HAS_CUDA:
        assert result.exit_code == 0, result.output
        assert "onnxruntime (CUDAExecutionProvider, CPUExecutionProvider)" in result.stdout
        return
    have = ", ".join(ort.get_available_providers())
    _usage_error(result, "Invalid value for '--providers'", "execution provider 'cuda'",
                 f"has no CUDAExecutionProvider; it has {have}", "onnx-decomplex[gpu]")  # fmt: skip
    _nothing_written(model.parent)


@pytest.mark.parametrize(
    "value, why", [("gpu", "unknown execution provider 'gpu'"), ("cpu,cpu", "given twice")]
)
def test_bad_providers(model, value, why):
    _usage_error(invoke(model, model.parent / "o.onnx", "--providers", value), why)


def test_providers_need_validation(model):
    result = invoke(model, model.parent / "o.onnx", "--providers", "cpu", "--no-validate")
    _usage_error(result, "--providers: only with validation")


def test_providers_in_folder_mode(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(FIXTURES / "complex_io.onnx", models)
    result = invoke(models, tmp_path / "out", "--providers", "cpu")
    assert result.exit_code == 0, result.output
    if not HAS_CUDA:
        result = invoke(models, tmp_path / "out2", "--providers", "cuda")
        _usage_error(result, "Invalid value for '--providers'")
        assert not (tmp_path / "out2").exists()


@pytest.mark.skipif(HAS_CUDA, reason="CUDA is available here")
def test_folder_mode_validates_on_the_providers_given(tmp_path):
    """Options carry the providers to each model's validation: asked for one
    that cannot load, every model fails, naming it."""
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(FIXTURES / "complex_io.onnx", models)
    options = Options.of(providers=["CUDAExecutionProvider"])
    (record,) = run_folder(models, tmp_path / "out", options)
    assert record.status == "error" and "could not use CUDAExecutionProvider" in record.message
