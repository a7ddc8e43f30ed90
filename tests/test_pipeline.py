"""The pipeline: its passes, in one list, and the loops that run them."""

from __future__ import annotations

import dataclasses
import inspect
import pkgutil
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import make_model, vi
from onnx import helper
from onnx_decomplex.cli.main import main
from onnx_decomplex.cli.merge import main as merge_main

import onnx_decomplex.passes
from onnx_decomplex import Session, pipeline
from onnx_decomplex import check as check_module
from onnx_decomplex.errors import OptionError
from onnx_decomplex.files.external import holds_external as holds_data
from onnx_decomplex.folder import zoo
from onnx_decomplex.options import (
    EngineOptions,
    Options,
    ReportOptions,
    RewriteOptions,
    TargetOptions,
    ValidateOptions,
    flag,
)
from onnx_decomplex.passes import check as check_pass
from onnx_decomplex.passes import save as save_pass
from onnx_decomplex.passes.state import Files
from onnx_decomplex.pipeline import IN_MEMORY, PASSES, Pass

ROOT = Path(__file__).resolve().parents[1]


def _mul_model() -> onnx.ModelProto:
    return make_model([helper.make_node("Mul", ["z", "z"], ["y"])],
                      [vi("z", np.complex64, [2, 3])], [vi("y", np.complex64, [2, 3])])  # fmt: skip


@pytest.fixture
def ran(monkeypatch):
    """The names of the passes that run, in the order they ran."""
    seen = []

    def recording(p: Pass) -> Pass:
        def run(state, options):
            seen.append(p.name)
            return p.run(state, options)

        return dataclasses.replace(p, run=run)

    monkeypatch.setattr(pipeline, "PASSES", tuple(recording(p) for p in PASSES))
    return seen


def test_every_pass_module_is_listed_once():
    modules = {m.name for m in pkgutil.iter_modules(onnx_decomplex.passes.__path__)}
    names = [p.name for p in PASSES]
    assert len(set(names)) == len(names)
    assert modules - {"state"} == set(names)
    for p in PASSES:
        assert p.run.__module__ == f"onnx_decomplex.passes.{p.name}"
        assert list(inspect.signature(p.run).parameters) == ["state", "options"]


def test_the_docs_list_the_passes_in_their_order():
    order = " -> ".join(p.name for p in PASSES)
    doc = re.sub(r"\s+", " ", pipeline.__doc__.split("```")[1]).strip()
    assert doc == order
    architecture = re.sub(r"\s+", " ", (ROOT / "ARCHITECTURE.md").read_text())
    assert order in architecture


def test_decomplex_runs_the_in_memory_passes_in_order(ran):
    out, report = pipeline.decomplex(_mul_model())
    assert ran == list(IN_MEMORY)
    assert report.rewritten == 1 and not [p for p in PASSES if p.name in ran and p.files]


def test_convert_file_runs_every_pass_in_order(ran, tmp_path):
    onnx.save(_mul_model(), tmp_path / "m.onnx")
    result = pipeline.convert_file(tmp_path / "m.onnx", tmp_path / "o.onnx")
    assert result.ok and result.written == [tmp_path / "o.onnx"]
    assert ran == [p.name for p in PASSES]


def test_check_tensorrt_reads_and_rewrites_but_writes_nothing(ran, tmp_path):
    onnx.save(_mul_model(), tmp_path / "m.onnx")
    report, lint = pipeline.check_tensorrt(tmp_path / "m.onnx")
    assert ran == ["load", *IN_MEMORY] and lint.passed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


@pytest.mark.parametrize("target", ["onnx", "tensorrt"])
def test_the_checker_runs_once(monkeypatch, target):
    calls = []
    real = check_pass.check

    def counting(model, **kwargs):
        calls.append(model)
        return real(model, **kwargs)

    monkeypatch.setattr(check_pass, "check", counting)
    model = make_model([helper.make_node("DFT", ["x"], ["y"], onesided=0)],
                       [vi("x", np.float32, [1, 8, 1])], [vi("y", np.float32, [1, 8, 2])],
                       opset=17)  # fmt: skip
    z = make_model([helper.make_node("Mul", ["z", "z"], ["m"]),
                    helper.make_node("Abs", ["m"], ["a"])],
                   [vi("z", np.complex64, [4])], [vi("a", np.float32, [4])])  # fmt: skip
    pipeline.decomplex(z, target=target)
    assert len(calls) == 1  # after rewriting and lowering, not after each
    pipeline.decomplex(model, target=target)  # no complex type, but a DFT: lowered
    assert len(calls) == 2


def test_a_model_with_nothing_to_do_is_passed_through_unchecked(monkeypatch):
    monkeypatch.setattr(check_pass, "check", lambda m, **kwargs: pytest.fail("checked"))
    model = make_model([helper.make_node("Abs", ["x"], ["y"])], [vi("x", np.float32, [2])],
                       [vi("y", np.float32, [2])])  # fmt: skip
    out, report = pipeline.decomplex(model)
    assert out is model and not report.changed


@pytest.mark.parametrize("external", [False, True])
def test_a_file_run_looks_for_external_data_only_where_its_input_kept_some(
    monkeypatch, tmp_path, external
):
    """Only tensors of an input that keeps its data in files are left on disk: the result
    of any other file run is checked in memory, and no walk looks for data files."""
    looked = []

    def holds_external(model):
        looked.append(model)
        return holds_data(model)

    monkeypatch.setattr(check_module, "holds_external", holds_external)
    monkeypatch.setattr(save_pass, "holds_external", holds_external)
    w = onnx.numpy_helper.from_array(np.arange(4, dtype=np.complex64) * 1j, "w")
    model = make_model([helper.make_node("Mul", ["z", "w"], ["y"])],
                       [vi("z", np.complex64, [4])], [vi("y", np.complex64, [4])], [w])  # fmt: skip
    src = tmp_path / "m.onnx"
    onnx.save(model, src, save_as_external_data=external, size_threshold=0)
    result = pipeline.convert_file(src, tmp_path / "out.onnx", validate=False)
    assert result.ok and not any(holds_data(m) for m in looked)
    assert bool(looked) == external
    z = np.array([1, 2j, -3, 4 - 1j], np.complex64)
    (y,) = Session(onnx.load(tmp_path / "out.onnx")).run(None, {"z": z})
    np.testing.assert_allclose(y, z * onnx.numpy_helper.to_array(w), rtol=1e-6)


def test_options_of_routes_each_field_to_its_concern():
    options = Options.of(mul_strategy="gauss", target="onnxruntime", atol=1e-3)
    assert options.rewrite == RewriteOptions(mul_strategy="gauss")
    assert options.target == TargetOptions(target="onnxruntime")
    assert options.validate == ValidateOptions(atol=1e-3)
    assert options.replace(seed=3).validate == ValidateOptions(atol=1e-3, seed=3)
    assert options.replace(seed=3).rewrite == options.rewrite


@pytest.mark.parametrize(
    "values, message",
    [
        ({"color": "red"}, "unknown option"),
        ({"target": "cuda"}, "target must be one of"),
        ({"mul_strategy": "five"}, "mul_strategy must be one of"),
    ],  # fmt: skip
)
def test_an_option_that_does_not_exist_is_refused(values, message):
    with pytest.raises(OptionError, match=message):
        Options.of(**values)
    with pytest.raises(OptionError, match=message):
        pipeline.decomplex(_mul_model(), **values)


def test_the_report_records_every_reported_option():
    options = Options.of(target="tensorrt", target_opset=23, keep_double=True, seed=7)
    data = zoo.to_json([], Path("zoo"), options, 1.0)
    reported = [f.name for concern in (RewriteOptions, TargetOptions, ValidateOptions)
                for f in dataclasses.fields(concern) if f.metadata["reported"]]  # fmt: skip
    assert sorted(data["options"]) == sorted(reported)
    assert data["options"]["target"] == "tensorrt" and data["options"]["target_opset"] == 23
    assert data["options"]["keep_double"] is True and data["options"]["seed"] == 7


def test_every_option_is_on_the_command_line():
    help_text = CliRunner().invoke(main, ["--help"], terminal_width=200).output
    for concern in (RewriteOptions, TargetOptions, ValidateOptions, ReportOptions, EngineOptions,
                    Files):  # fmt: skip
        for f in dataclasses.fields(concern):
            assert flag(f).split("/")[0] in help_text, f.name
    merge_help = CliRunner().invoke(merge_main, ["--help"], terminal_width=200).output
    for f in dataclasses.fields(ReportOptions):
        assert flag(f) in merge_help, f.name


def test_report_options_are_folder_only(tmp_path):
    onnx.save(_mul_model(), tmp_path / "m.onnx")
    result = CliRunner().invoke(
        main, [str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx"), "--max-node-growth", "3"]
    )
    assert result.exit_code == 2 and "--max-node-growth: only when IN is a folder" in result.output


def test_engine_options_are_only_with_build_engine(tmp_path):
    onnx.save(_mul_model(), tmp_path / "m.onnx")
    result = CliRunner().invoke(
        main, [str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx"), "--fp16", "--timing-cache",
               str(tmp_path / "c")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--timing-cache, --fp16: only with --build-engine" in result.output
