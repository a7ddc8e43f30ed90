"""`--target openvino` and validation in OpenVINO: the target's forms avoid every defect
of OpenVINO that docs/openvino.md lists, validation runs in the runtime the target is
for, `Session` and `verify` take the runtime, and every fixture converts and matches
there (slow)."""

import json
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import op_counts, op_types
from onnx_decomplex.cli.main import main
from onnx_decomplex.cli.verify import verify

from onnx_decomplex import Session, decomplex, validate
from onnx_decomplex.errors import DecomplexError, OptionError
from onnx_decomplex.folder import zoo
from onnx_decomplex.options import Options
from onnx_decomplex.pipeline import convert_file
from onnx_decomplex.validate import runners

pytest.importorskip("openvino", reason="the openvino extra is not installed")
import openvino_defects as defects  # noqa: E402  (fixtures/: it imports openvino)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.parametrize("letter", sorted(defects.CASES))
def test_the_openvino_target_avoids_each_defect(letter):
    """Each case runs right in OpenVINO as the openvino target writes it (the repro
    script prints how it runs as written, too: docs/openvino.md)."""
    _, fixed = defects.check(letter)
    assert fixed == "PASSED"


def test_a_power_of_two_is_one_dft_of_rows_on_axis_1():
    """OpenVINO's own DFT computes a power-of-two length as accurately as the MatMul forms,
    and faster: written as [rows, L, 2] on axis 1, which it reads right."""
    model = defects._dft([2, 3, 64, 1], 20, axis=2, onesided=1)
    out, report = decomplex(model, target="openvino")
    (dft,) = [n for n in out.graph.node if n.op_type == "DFT"]
    axis = next(t for t in out.graph.initializer if t.name == dft.input[2])
    assert onnx.numpy_helper.to_array(axis) == 1 and "MatMul" not in op_types(out)
    assert "one DFT of [rows, length, 2] on axis 1" in report.lowering_notes[0]
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 1)).astype(np.float32)
    assert validate(model, out, {"x": x}, runtime="openvino").passed


def test_other_lengths_take_the_matmul_forms():
    """OpenVINO's own DFT is 7e-4 off at 4099 and 1.5e-5 at 100 (docs/openvino.md)."""
    out, _ = decomplex(defects._dft([2, 100, 2], 17, axis=1), target="openvino")
    assert "DFT" not in op_types(out) and op_counts(out)["MatMul"] == 2


def test_float64_is_narrowed_as_openvino_computes_it():
    """OpenVINO's CPU plugin computes float64 in float32, where a formula's float64
    constants turn to 0 or inf: the target narrows the model, and the verdict takes
    float32's tolerances."""
    out = FIXTURES / "tf2onnx" / "abs_c128.onnx"
    model, report = decomplex(onnx.load(str(out)), target="openvino")
    assert report.narrowed
    types = {i.type.tensor_type.elem_type for i in [*model.graph.input, *model.graph.output]}
    assert types == {onnx.TensorProto.FLOAT}


def test_validation_runs_in_openvino_for_its_target(tmp_path):
    result = convert_file(
        FIXTURES / "complex_linear.onnx", tmp_path / "out.onnx", target="openvino"
    )
    assert result.validation.runtime == "OpenVINO (CPU, f32)" and result.validation.passed
    assert not result.validation.notes


def test_the_default_target_is_checked_in_openvino_on_request(tmp_path):
    out = tmp_path / "out.onnx"
    result = convert_file(FIXTURES / "beamformer.onnx", out, runtime="openvino")
    assert result.validation.runtime == "OpenVINO (CPU, f32)" and result.validation.passed
    default = convert_file(FIXTURES / "beamformer.onnx", tmp_path / "b.onnx")
    assert default.validation.runtime == "onnxruntime"


def test_without_openvino_the_target_validates_in_onnxruntime_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(runners, "has_openvino", lambda: False)
    result = convert_file(
        FIXTURES / "complex_linear.onnx", tmp_path / "out.onnx", target="openvino"
    )
    assert result.validation.runtime == "onnxruntime" and result.validation.passed
    (note,) = result.validation.notes
    assert "OpenVINO, which the target is for, is not installed" in note
    assert "pip install 'onnx-decomplex[cpu,openvino]'" in note


def test_asking_for_openvino_without_it_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(runners, "import_openvino", _missing)
    result = CliRunner().invoke(
        main, [str(FIXTURES / "complex_linear.onnx"), str(tmp_path / "o.onnx"),
               "--runtime", "openvino"],
    )  # fmt: skip
    assert result.exit_code == 1 and not (tmp_path / "o.onnx").exists()
    assert "needs its runtime, which is not installed" in result.output


def _missing():
    raise DecomplexError("validation in OpenVINO needs its runtime, which is not installed")


def test_providers_are_for_onnxruntime_only(tmp_path):
    with pytest.raises(OptionError, match="--providers names onnxruntime's execution providers"):
        convert_file(FIXTURES / "complex_linear.onnx", tmp_path / "o.onnx", target="openvino",
                     providers=["CPUExecutionProvider"])  # fmt: skip


def test_session_runs_in_openvino(tmp_path):
    out = tmp_path / "rope.onnx"
    convert_file(FIXTURES / "rope_complex128.onnx", out, target="openvino")
    feeds = {"xq": np.random.default_rng(0).standard_normal((2, 16, 4, 32))}  # float64
    session = Session(out, runtime="openvino")
    assert session.contract.target == "openvino"
    (on_openvino,) = session.run(None, feeds)
    (on_onnxruntime,) = Session(out).run(None, feeds)
    np.testing.assert_allclose(on_openvino, on_onnxruntime, rtol=1e-5, atol=1e-5)
    with pytest.raises(DecomplexError, match="runtime must be one of"):
        Session(out, runtime="tensorrt")


def test_verify_runs_where_the_target_was_for(tmp_path):
    src, out = FIXTURES / "fnet_block.onnx", tmp_path / "fnet.onnx"
    convert_file(src, out, target="openvino")
    result = CliRunner().invoke(verify, [str(src), str(out)])
    assert result.exit_code == 0, result.output
    assert "OpenVINO (CPU, f32)" in result.output
    result = CliRunner().invoke(verify, [str(src), str(out), "--runtime", "onnxruntime"])
    assert result.exit_code == 0 and re.search(r"ms, onnxruntime \d", result.output)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["onnx", "openvino"])
def test_every_fixture_in_openvino(target, tmp_path):
    """Every fixture, as the target writes it, validated in OpenVINO against the reference
    and its framework's outputs: the baseline's verdict (made in onnxruntime) on every
    one. Nine exports hold a DFT that OpenVINO misreads (defects A and B) in a model with
    no complex type; both targets take it on, so they pass too."""
    records = zoo.run_folder(FIXTURES, tmp_path / "out",
                             Options.of(target=target, runtime="openvino"), jobs=2)  # fmt: skip
    baseline = {
        m["path"]: m["status"]
        for m in json.loads((FIXTURES / "baseline.json").read_text())["models"]
    }
    departed = {r.path: r.status for r in records if r.status != baseline[r.path]}
    ok = {"ok", "no-complex"}
    assert {p for p, s in departed.items() if s not in ok} == set(), departed
    assert all(baseline[p] in ok for p in departed)
