"""Folder mode end to end: the fixture zoo against its baseline, broken rules caught,
and one model's failure never stopping the others."""

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from click.testing import CliRunner
from helpers import crandn, init, make_model, vi
from onnx import helper
from onnx_decomplex.cli.main import main

from onnx_decomplex import cmath
from onnx_decomplex.analyze import analyze
from onnx_decomplex.load import load_model
from onnx_decomplex.normalize import normalize
from onnx_decomplex.pipeline import ConvertOptions
from onnx_decomplex.rules import registry

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BASELINE = FIXTURES / "baseline.json"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _zoo(tmp_path, *extra):
    out = tmp_path / "out"
    return invoke(FIXTURES, out, "--report", tmp_path / "r.json", "--junit", tmp_path / "r.xml",
                  "--baseline", BASELINE, *extra)  # fmt: skip


def test_fixture_zoo_matches_its_baseline(tmp_path):
    result = _zoo(tmp_path)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    statuses = {m["path"]: m["status"] for m in report["models"]}
    assert statuses["complex_relu.onnx"] == "unsupported"
    assert statuses["no_complex.onnx"] == "no-complex"
    assert report["summary"]["by_status"]["ok"] >= 8
    assert report["baseline"]["regressions"] == []
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) == len(report["models"])
    # The known failures are skipped, not failed: the run is green.
    assert suite.get("failures") == "0" and suite.get("errors") == "0"
    # complex_relu and cumprod are refused; sqrt_plus and log_of_sum differ from JAX, and
    # tf2onnx's irfft_length and pad from TensorFlow.
    assert int(suite.get("skipped")) == 6


def _zoo_rules() -> list[str]:
    """Every op whose rule rewrites a node of a model that passes in the baseline."""
    ops = set()
    for m in json.loads(BASELINE.read_text())["models"]:
        if m["status"] != "ok":
            continue
        # What the rules see: the exporters' mixed graphs read as they mean.
        model = normalize(load_model(FIXTURES / m["path"])).model
        graph = gs.import_onnx(model)
        graph.toposort()
        for a in analyze(graph).walk():
            ops |= {n.op for n in a.nodes}
    return sorted(ops)


@pytest.mark.parametrize("op", _zoo_rules())
def test_disabling_any_rule_the_zoo_uses_fails_the_run(tmp_path, monkeypatch, op):
    monkeypatch.delitem(registry.REGISTRY, op)
    result = _zoo(tmp_path)
    assert result.exit_code == 1
    assert "regression" in result.stderr and f"({op}, " in result.stderr
    # Each regression line names the model: 'path: was ok, now unsupported: ...'.
    assert any(".onnx: was ok, now unsupported" in line for line in result.stderr.splitlines())


def test_a_rule_with_wrong_numbers_fails_the_run(tmp_path, monkeypatch):
    real_mul_packed = cmath.mul_packed

    def wrong(ops, z, w_re2, w_im2):
        return real_mul_packed(ops, z, w_re2, ops.neg(w_im2))  # z times conj(w)

    monkeypatch.setattr(cmath, "mul_packed", wrong)
    result = _zoo(tmp_path)
    assert result.exit_code == 1
    assert "was ok, now validation-failed" in result.stderr


def _models(folder: Path):
    rng = np.random.default_rng(0)
    nested = folder / "a" / "b"
    nested.mkdir(parents=True)
    shutil.copy(FIXTURES / "complex_io.onnx", folder / "complex_io.onnx")
    shutil.copy(FIXTURES / "beamformer.onnx", nested / "beamformer.onnx")
    shutil.copy(FIXTURES / "no_complex.onnx", nested / "no_complex.onnx")
    (folder / "a" / "corrupt.onnx").write_bytes(b"\x08\x07 not a model")
    # A model with external data: its weights live in weights.bin beside it.
    big = make_model(
        [helper.make_node("Mul", ["x", "w"], ["y"])],
        [vi("x", np.complex64, [64, 64])],
        [vi("y", np.complex64, [64, 64])],
        [init("w", crandn(rng, (64, 64)))],
    )
    onnx.save(big, folder / "a" / "external.onnx", save_as_external_data=True,
              location="weights.bin", size_threshold=0)  # fmt: skip


def _run(tmp_path, *extra):
    src = tmp_path / "models"
    if not src.exists():
        src.mkdir()
        _models(src)
    out = tmp_path / "out"
    report = tmp_path / f"report{len(list(tmp_path.glob('report*')))}.json"
    result = invoke(src, out, "--report", report, *extra)
    return result, out, json.loads(report.read_text())


def test_one_corrupt_model_does_not_stop_the_others(tmp_path):
    result, out, report = _run(tmp_path)
    assert result.exit_code == 1
    statuses = {m["path"]: m["status"] for m in report["models"]}
    assert statuses == {
        "a/b/beamformer.onnx": "ok",
        "a/b/no_complex.onnx": "no-complex",
        "a/corrupt.onnx": "error",
        "a/external.onnx": "ok",
        "complex_io.onnx": "ok",
    }
    corrupt = next(m for m in report["models"] if m["path"] == "a/corrupt.onnx")
    assert "corrupt.onnx" in corrupt["message"]
    assert "a/corrupt.onnx" in result.stderr
    # Nested paths are kept, and nothing is written for the corrupt model.
    assert (out / "a" / "b" / "beamformer.onnx").is_file()
    assert not (out / "a" / "corrupt.onnx").exists()


def test_external_data_stays_beside_its_output(tmp_path):
    _, out, _ = _run(tmp_path)  # stored with external data: written back that way
    written = out / "a" / "external.onnx"
    model = onnx.load(written, load_external_data=False)
    locations = {
        e.value for t in model.graph.initializer for e in t.external_data if e.key == "location"
    }
    assert locations and all((written.parent / loc).is_file() for loc in locations)
    onnx.checker.check_model(str(written), full_check=True)


def test_jobs_give_the_same_report(tmp_path):
    _, _, one = _run(tmp_path, "--jobs", "1")
    _, _, two = _run(tmp_path, "--jobs", "2")

    def strip(report):
        models = [{k: v for k, v in m.items() if not k.endswith("seconds")}
                  for m in report["models"]]  # fmt: skip
        summary = {k: v for k, v in report["summary"].items() if not k.endswith("seconds")}
        return models, summary

    assert strip(one) == strip(two)


def test_update_baseline_then_compare(tmp_path):
    baseline = tmp_path / "base.json"
    result, _, _ = _run(tmp_path, "--baseline", baseline, "--update-baseline")
    assert result.exit_code == 0 and baseline.is_file()
    # The corrupt model fails as it did in the baseline: known, not a regression.
    result, _, report = _run(tmp_path, "--baseline", baseline)
    assert result.exit_code == 0, result.stderr
    assert report["baseline"]["known_failures"] == ["a/corrupt.onnx: error, as in the baseline"]
    # A model that passed and is now gone is a regression.
    (tmp_path / "models" / "complex_io.onnx").unlink()
    result, _, _ = _run(tmp_path, "--baseline", baseline)
    assert result.exit_code == 1
    assert "complex_io.onnx: in the baseline, but not found" in result.stderr


def test_folder_options_need_a_folder(tmp_path):
    result = invoke(FIXTURES / "complex_io.onnx", tmp_path / "o.onnx", "--jobs", "2")
    assert result.exit_code == 2 and "--jobs: only when IN is a folder" in result.output


def test_missing_baseline_is_an_error(tmp_path):
    result = invoke(FIXTURES, tmp_path / "out", "--baseline", tmp_path / "nope.json")
    assert result.exit_code == 1 and "--update-baseline creates it" in result.stderr


def test_progress_bar_on_a_terminal(tmp_path):
    import io

    from onnx_decomplex.cli import folder
    from rich.console import Console

    src = tmp_path / "models"
    src.mkdir()
    for i in range(folder.PROGRESS_FROM + 1):
        shutil.copy(FIXTURES / "complex_io.onnx", src / f"m{i}.onnx")
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100)
    records, _ = folder._run(console, src, tmp_path / "out", ConvertOptions(), 1)
    assert [r.status for r in records] == ["ok"] * (folder.PROGRESS_FROM + 1)
    assert "models" in buffer.getvalue()  # the bar's label was drawn


def test_bad_input_shapes_in_folder_mode_is_a_usage_error(tmp_path):
    result = invoke(FIXTURES, tmp_path / "out", "--input-shapes", "z:[4")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--input-shapes': bad shape spec 'z:[4': missing ']'"
    )
    assert not (tmp_path / "out").exists()
