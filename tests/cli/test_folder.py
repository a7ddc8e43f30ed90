"""Folder mode end to end: the fixture zoo against its baseline, broken rules caught,
one model's failure never stopping the others, shards, and the table's width."""

import functools
import io
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import click
import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from click.testing import CliRunner
from helpers import crandn, init, make_model, vi
from onnx import helper
from onnx_decomplex.cli import folder
from onnx_decomplex.cli.main import main
from onnx_decomplex.cli.output import size
from rich.console import Console

from onnx_decomplex import cmath
from onnx_decomplex.analyze import analyze
from onnx_decomplex.files.load import load_model
from onnx_decomplex.folder import zoo
from onnx_decomplex.normalize import normalize
from onnx_decomplex.options import Options
from onnx_decomplex.rules import registry

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BASELINE = FIXTURES / "baseline.json"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _zoo(tmp_path, *extra):
    out = tmp_path / "out"
    return invoke(FIXTURES, out, "--report", tmp_path / "r.json", "--junit", tmp_path / "r.xml",
                  "--baseline", BASELINE, *extra)  # fmt: skip


@pytest.mark.slow
def test_fixture_zoo_matches_its_baseline(tmp_path):
    """The whole fixture folder against fixtures/baseline.json (half a minute: in
    `make test-slow`, which CI runs beside `make test`)."""
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
    # tf2onnx's irfft_length and pad from TensorFlow; of the peer cases, 12 are known
    # (tests/test_peers.py: tf2onnx's Equal, Pad, PadV2 and NCHW BiasAdd, one 3-D FFT).
    assert int(suite.get("skipped")) == 18


@functools.cache
def _zoo_rules() -> dict[str, list[str]]:
    """Every op whose rule rewrites a node of a model that passes in the baseline, with
    those models (the peer cases' ops are the others'): about 10 s, each model read."""
    ops = {}
    for m in json.loads(BASELINE.read_text())["models"]:
        if m["status"] != "ok" or m["path"].startswith("peers/"):
            continue
        # What the rules see: the exporters' mixed graphs read as they mean.
        model = normalize(load_model(FIXTURES / m["path"])).model
        graph = gs.import_onnx(model)
        graph.toposort()
        for a in analyze(graph).walk():
            for op in {n.op for n in a.nodes}:
                ops.setdefault(op, []).append(m["path"])
    return ops


def _slow_cases_run(config) -> bool:
    """Whether the run's `-m` selects the cases marked slow (the default, `not slow`,
    does not: the zoo's rules are then not read, at each worker's collection)."""
    expression = config.getoption("markexpr")
    if not expression:
        return True
    try:
        from _pytest.mark.expression import Expression
    except ImportError:  # where pytest keeps it no more: read them whatever runs
        return True
    return Expression.compile(expression).evaluate(lambda name, **_: name == "slow")


def pytest_generate_tests(metafunc):
    if metafunc.function.__name__ == "test_disabling_any_rule_the_zoo_uses_fails_the_run":
        rules = _zoo_rules() if _slow_cases_run(metafunc.config) else {}
        metafunc.parametrize("op", sorted(rules))


def _part_of_zoo(tmp_path, paths: list[str]):
    """The zoo's models at `paths`, with the files beside each, against their part of
    the baseline."""
    part = tmp_path / "fixtures"
    for rel in paths:
        src = FIXTURES / rel
        (part / rel).parent.mkdir(parents=True, exist_ok=True)
        for f in src.parent.glob(f"{src.stem}.*"):
            shutil.copy(f, (part / rel).parent / f.name)
    baseline = json.loads(BASELINE.read_text())
    baseline["models"] = [m for m in baseline["models"] if m["path"] in paths]
    (part / BASELINE.name).write_text(json.dumps(baseline))
    return invoke(part, tmp_path / "out", "--baseline", part / BASELINE.name)


@pytest.mark.slow  # one folder run per rule, over the models that use it
def test_disabling_any_rule_the_zoo_uses_fails_the_run(tmp_path, monkeypatch, op):
    monkeypatch.delitem(registry.REGISTRY, op)
    result = _part_of_zoo(tmp_path, _zoo_rules()[op])
    assert result.exit_code == 1
    assert "regression" in result.stderr and f"({op}, " in result.stderr
    # Each regression line names the model: 'path: was ok, now unsupported: ...'.
    assert any(".onnx: was ok, now unsupported" in line for line in result.stderr.splitlines())


@pytest.mark.slow  # a copy of the zoo's passing models but the peer cases
def test_a_rule_with_wrong_numbers_fails_the_run(tmp_path, monkeypatch):
    real_mul_packed = cmath.mul_packed

    def wrong(ops, z, w_re2, w_im2):
        return real_mul_packed(ops, z, w_re2, ops.neg(w_im2))  # z times conj(w)

    monkeypatch.setattr(cmath, "mul_packed", wrong)
    result = _part_of_zoo(tmp_path, sorted({p for paths in _zoo_rules().values() for p in paths}))
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


def test_each_model_converted_is_parsed_once(tmp_path, parses):
    """By its conversion only: no path the run writes lies in a model's folder, where alone
    its data files can be, so none is read ahead for them (a failed model's record reads
    its file again, for what it holds)."""
    result, _, report = _run(tmp_path)
    converted = [tmp_path / "models" / m["path"] for m in report["models"]
                 if m["status"] != "error"]  # fmt: skip
    assert len(converted) == 4
    assert [parses[m.resolve()] for m in converted] == [1] * 4


def _external(folder: Path, name: str, data: str) -> Path:
    """A model whose weights are in `data`, beside it."""
    rng = np.random.default_rng(1)
    model = make_model([helper.make_node("Mul", ["x", "w"], ["y"])], [vi("x", np.complex64, [8])],
                       [vi("y", np.complex64, [8])], [init("w", crandn(rng, (8,)))])  # fmt: skip
    (folder / data).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, folder / name, save_as_external_data=True, location=data, size_threshold=0)
    return folder / name


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def test_a_model_whose_folder_the_run_writes_in_has_its_data_files_read_first(tmp_path, parses):
    """OUT is models/out: the output of a.onnx would write its data file over the one b.onnx
    reads. b.onnx's folder holds OUT, so its data files are read before any work."""
    models = tmp_path / "models"
    a = _external(models, "a.onnx", "a.bin")
    b = _external(models, "b.onnx", "out/a.onnx.data")
    before = _files(tmp_path)
    result = CliRunner().invoke(main, [str(models), str(models / "out")])
    assert result.exit_code == 1
    error = result.stderr.splitlines()[-1]
    assert error == (f"error: {models / 'out' / 'a.onnx.data'}: the data file of the output of "
                     f"{a} is the data file of {b}, which this run reads: it would be written "
                     "over; give another path")  # fmt: skip
    assert _files(tmp_path) == before
    assert parses[b.resolve()] == 1 and parses[a.resolve()] == 1  # read ahead, not converted


def test_a_report_over_a_data_file_is_refused(tmp_path):
    """The report lies in sub/, the folder of a.onnx: its data files are read first."""
    models = tmp_path / "models"
    a = _external(models / "sub", "a.onnx", "a.bin")
    before = _files(tmp_path)
    result = CliRunner().invoke(main, [str(models), str(tmp_path / "out"), "--report",
                                       str(models / "sub" / "a.bin")])  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr == (f"error: {models / 'sub' / 'a.bin'}: the --report file is the data "
                             f"file of {a}, which this run reads: it would be written over; "
                             "give another path\n")  # fmt: skip
    assert _files(tmp_path) == before


def test_a_bad_data_offset_is_its_models_error(tmp_path):
    """The model's own run says what is wrong; the others run."""
    models = tmp_path / "models"
    bad = _external(models, "bad.onnx", "bad.bin")
    _external(models, "good.onnx", "good.bin")
    model = onnx.load(bad, load_external_data=False)
    model.graph.initializer[0].external_data.add(key="offset", value="-5")
    onnx.save(model, bad)
    result = CliRunner().invoke(main, [str(models), str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"error {bad}: tensor 'w': external data offset '-5' is not a non-negative integer"
    )
    assert (tmp_path / "out" / "good.onnx").is_file()


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
    records, _ = folder._run(console, src, tmp_path / "out", Options(), 1)
    assert [r.status for r in records] == ["ok"] * (folder.PROGRESS_FROM + 1)
    assert "models" in buffer.getvalue()  # the bar's label was drawn


def test_bad_input_shapes_in_folder_mode_is_a_usage_error(tmp_path):
    result = invoke(FIXTURES, tmp_path / "out", "--input-shapes", "z:[4")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--input-shapes': bad shape spec 'z:[4': missing ']'"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["0/3", "4/3", "a/b", "3", "1/0"])
def test_a_malformed_shard_is_bad_usage(tmp_path, value):
    result = invoke(FIXTURES, tmp_path / "out", "--shard", value)
    assert result.exit_code == 2 and "Invalid value for '--shard'" in result.output
    assert not (tmp_path / "out").exists()


def test_shards_are_for_a_folder(tmp_path):
    result = invoke(FIXTURES / "complex_io.onnx", tmp_path / "o.onnx", "--shard", "1/2")
    assert result.exit_code == 2 and "--shard: only when IN is a folder" in result.output
    result = invoke(FIXTURES, tmp_path / "out", "--shard", "1/2", "--baseline",
                    tmp_path / "b.json", "--update-baseline")  # fmt: skip
    assert result.exit_code == 2 and "merge the shards' reports" in result.output
    assert not (tmp_path / "b.json").exists()


def _shard_run(tmp_path, k, n, *extra):
    src = tmp_path / "models"
    if not src.exists():
        src.mkdir()
        _models(src)
    out, report = tmp_path / f"out{k}", tmp_path / f"shard{k}.json"
    result = invoke(src, out, "--shard", f"{k}/{n}", "--report", report, *extra)
    return result, out, json.loads(report.read_text())


def test_each_model_is_converted_by_one_shard(tmp_path):
    _, _, whole = _run(tmp_path)
    seen = []
    for k in (1, 2):
        result, out, report = _shard_run(tmp_path, k, 2)
        paths = [m["path"] for m in report["models"]]
        assert report["shard"] == {"index": k, "count": 2}
        assert paths and all(zoo.shard_of(p, 2) == k for p in paths)
        assert report["summary"]["models"] == len(paths)
        written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.onnx"))
        passed = sorted(m["path"] for m in report["models"] if m["status"] in ("ok", "no-complex"))
        assert written == passed
        assert f"(shard {k}/2, " in result.output
        seen += paths
    assert sorted(seen) == [m["path"] for m in whole["models"]]


def test_an_empty_shard_writes_a_report_with_no_models(tmp_path):
    src = tmp_path / "models"
    src.mkdir()
    shutil.copy(FIXTURES / "complex_io.onnx", src / "complex_io.onnx")
    assert zoo.shard_of("complex_io.onnx", 3) == 1
    report = tmp_path / "r.json"
    result = invoke(src, tmp_path / "out", "--shard", "2/3", "--report", report)
    assert result.exit_code == 0, result.output
    assert "0 models: none (shard 2/3, " in result.output
    data = json.loads(report.read_text())
    assert data["models"] == [] and data["shard"] == {"index": 2, "count": 3}
    assert data["summary"]["models"] == 0


def test_a_shard_compares_with_its_own_models_of_a_whole_baseline(tmp_path):
    baseline = tmp_path / "base.json"
    result, _, _ = _run(tmp_path, "--baseline", baseline, "--update-baseline")
    assert result.exit_code == 0
    assert zoo.shard_of("complex_io.onnx", 2) == 2
    for k in (1, 2):
        result, _, report = _shard_run(tmp_path, k, 2, "--baseline", baseline)
        assert result.exit_code == 0, result.stderr  # the other shard's models are not gone
        assert report["baseline"]["regressions"] == []
    (tmp_path / "models" / "complex_io.onnx").unlink()
    result, _, _ = _shard_run(tmp_path, 1, 2, "--baseline", baseline)
    assert result.exit_code == 0, result.stderr
    result, _, _ = _shard_run(tmp_path, 2, 2, "--baseline", baseline)
    assert result.exit_code == 1
    assert "complex_io.onnx: in the baseline, but not found" in result.stderr


def test_a_shards_report_is_no_baseline(tmp_path):
    _shard_run(tmp_path, 1, 2)
    result = invoke(tmp_path / "models", tmp_path / "out", "--baseline", tmp_path / "shard1.json")
    assert result.exit_code == 1
    assert "the baseline is the report of shard 1/2 alone" in result.stderr


def _numbers(record: zoo.ModelRecord) -> list[str]:
    """What the table must show whole for `record`: of a model that was not rewritten
    (unsupported, error), what its file holds."""
    found = sum(record.complex_found.values())
    numbers = [str(found)] if found else []
    if record.status in (zoo.UNSUPPORTED, zoo.ERROR):
        return numbers + ([str(record.nodes_before)] if record.nodes_before else [])
    numbers += [str(record.nodes_before), str(record.nodes_after)]
    numbers += [size(record.initializer_bytes_before), size(record.initializer_bytes_after)]
    if record.worst_abs is not None:
        numbers.append(f"{record.worst_abs:.2g}")
    return numbers


def _whole(number: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(number)}(?![\w.])", text) is not None


RECORDS = [
    zoo.ModelRecord("exports/jax2onnx/very/deeply/nested/fourier_neural_operator_big.onnx", "ok",
                    complex_found={"inputs": 1, "initializers": 1233}, nodes_before=123456,
                    nodes_after=1234567, initializer_bytes_before=1023 * 2**30,
                    initializer_bytes_after=2046 * 2**30,
                    outputs=[zoo.OutputError("y", True, 1.234e-07, 1e-3, 0.5)],
                    rewrite_seconds=1234.5),
    zoo.ModelRecord("validation/failed.onnx", "validation-failed", "why",
                    complex_found={"inputs": 12}, nodes_before=99999, nodes_after=199999,
                    initializer_bytes_before=1000 * 2**20, initializer_bytes_after=2000 * 2**20,
                    outputs=[zoo.OutputError("y", False, 3.5e12, 0.25, 1e9)],
                    rewrite_seconds=12.25, validate_seconds=987.5),
    zoo.ModelRecord("b.onnx", "no-complex", nodes_before=7, nodes_after=7,
                    initializer_bytes_before=680, initializer_bytes_after=680,
                    outputs=[zoo.OutputError("y", True, 0.0, 0.0, 0.0)], validate_seconds=0.0125),
]  # fmt: skip


@pytest.mark.parametrize("width", [80, 100, 132])
def test_the_table_cuts_no_number_on_a_narrow_terminal(width):
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, soft_wrap=True,
                      color_system=None)  # fmt: skip
    folder.print_table(console, RECORDS, 3.25)
    text = buffer.getvalue()
    assert max(map(len, text.splitlines())) <= width, text
    for record in RECORDS:
        for number in [*_numbers(record), record.status]:
            assert _whole(number, text), (number, text)
    for time in ["1234 s", "999.8 s", "12 ms"]:
        assert _whole(time, text), (time, text)
    # The path, folded or not, is all there.
    joined = "".join(line.split(" ")[0] for line in text.splitlines())
    assert RECORDS[0].path in joined


def test_the_table_of_a_run_fits_an_80_column_terminal(tmp_path):
    src = tmp_path / "models"
    src.mkdir()
    _models(src)
    runner = CliRunner(env={"COLUMNS": "80", "TTY_COMPATIBLE": "1", "NO_COLOR": "1"})
    report = tmp_path / "r.json"
    result = runner.invoke(main, [str(src), str(tmp_path / "out"), "--report", str(report)])
    assert result.exit_code == 1  # the corrupt model
    text = click.unstyle(result.stdout)
    assert "onnx-decomplex zoo" in text
    assert max(map(len, text.splitlines())) <= 80, text
    records = zoo.records_from_json(json.loads(report.read_text()))
    for record in records:
        for number in [*_numbers(record), record.status]:
            assert _whole(number, text), (number, text)
