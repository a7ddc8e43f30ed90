"""Users run the tool on the only copy of a model: no file it reads ever changes, and a
run that does not exit 0 leaves every file as it was. Each case is a command that once
lost a user's file."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import make_model, vi
from onnx import helper, numpy_helper
from onnx_decomplex.cli.exits import EXIT_VALIDATION
from onnx_decomplex.cli.main import main

from onnx_decomplex.files import transaction as files
from onnx_decomplex.files.transaction import Transaction, _prefix, umask
from onnx_decomplex.folder import zoo
from onnx_decomplex.options import Options
from onnx_decomplex.pipeline import convert_file

ROOT = Path(__file__).resolve().parent.parent


def _model(folder: Path, name: str = "a.onnx", data: str | None = None) -> Path:
    """z times a complex table; with `data`, its weights in that external file."""
    table = np.exp(1j * np.linspace(0, 3, 64)).astype(np.complex64)
    model = make_model([helper.make_node("Mul", ["z", "table"], ["y"])],
                       [vi("z", np.complex64, [2, 64])], [vi("y", np.complex64, [2, 64])],
                       [numpy_helper.from_array(table, "table")])  # fmt: skip
    path = folder / name
    if data is None:
        onnx.save(model, path)
    else:
        onnx.save(model, path, save_as_external_data=True, location=data, size_threshold=0)
    return path


def _state(folder: Path) -> dict[str, str]:
    """Every file under `folder`, hidden ones too, by content."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _refused(result, *words):
    assert result.exit_code == 1, result.output
    assert result.stderr.count("\n") == 1 and all(w in result.stderr for w in words), result.stderr


def test_out_whose_data_file_is_the_inputs_is_refused(tmp_path):
    """a.onnx keeps its weights in b.onnx.data; writing b.onnx would write b.onnx.data."""
    src = _model(tmp_path, "a.onnx", data="b.onnx.data")
    before = _state(tmp_path)
    _refused(run("--no-validate", src, tmp_path / "b.onnx"), "output's data file",
             "input's data file 'b.onnx.data'")  # fmt: skip
    assert _state(tmp_path) == before


def test_out_that_is_the_inputs_data_file_is_refused(tmp_path):
    src = _model(tmp_path, "a.onnx", data="a.data")
    before = _state(tmp_path)
    _refused(run(src, tmp_path / "a.data"), "the output is the input's data file")
    assert _state(tmp_path) == before


def test_out_that_is_the_saved_inputs_is_refused(tmp_path):
    src = _model(tmp_path)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, z=np.ones((2, 64), np.complex64))
    before = _state(tmp_path)
    _refused(run(src, inputs, "--load-inputs", inputs), "the output is the --load-inputs file")
    assert _state(tmp_path) == before


def test_normalized_model_and_plan_must_not_share_a_path(tmp_path):
    src = _model(tmp_path)
    out = tmp_path / "o.onnx"
    _refused(run(src, out, "--save-normalized", out), "the normalized model is the output too")
    assert not out.exists()


@pytest.fixture
def zoo_dir(tmp_path):
    models = tmp_path / "zoo"
    (models / "sub").mkdir(parents=True)
    _model(models, "a.onnx")
    _model(models / "sub", "b.onnx")
    return models


def _kept(before: dict[str, str], after: dict[str, str]) -> None:
    """Every file there before is there after, as it was."""
    assert {k: after.get(k) for k in before} == before


def test_out_inside_in_skips_the_models_under_out_and_changes_no_input(tmp_path, zoo_dir):
    """OUT is zoo/sub, where the user keeps b.onnx: under OUT, it is not an input."""
    out = zoo_dir / "sub"
    for n in (1, 2):
        before = _state(tmp_path)
        result = run(zoo_dir, out, "--report", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        # One line; the second run also skips the output of a.onnx that the first wrote.
        assert result.stderr == (f"warning OUT lies inside IN: the models under {out} are "
                                 f"outputs, not inputs; {n} skipped\n")  # fmt: skip
        after = _state(tmp_path)
        _kept({k: v for k, v in before.items() if k not in ("r.json", "zoo/sub/a.onnx")}, after)
        assert sorted(set(after) - set(before)) == (["r.json", "zoo/sub/a.onnx"] if n == 1 else [])
        report = json.loads((tmp_path / "r.json").read_text())
        assert [m["path"] for m in report["models"]] == ["a.onnx"]


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_out_inside_in_runs_again_over_outputs_with_real_io(tmp_path, target):
    """A model whose inputs and outputs are real, complex only inside, and one with no
    complex value at all: each output records what made it (or is the input's copy),
    so a second run writes over the first's outputs."""
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    nodes = [helper.make_node("Cast", ["x"], ["c"], to=onnx.TensorProto.COMPLEX64),
             helper.make_node("Exp", ["c"], ["e"]), helper.make_node("Abs", ["e"], ["y"])]  # fmt: skip
    io = ([vi("x", np.float32, [3])], [vi("y", np.float32, [3])])
    onnx.save(make_model(nodes, *io), zoo / "inside.onnx")
    onnx.save(make_model([helper.make_node("Relu", ["x"], ["y"])], *io), zoo / "real.onnx")
    for _ in range(2):
        result = run(zoo, zoo / "out", "--target", target)
        assert result.exit_code == 0, result.output


def test_out_inside_in_never_writes_over_a_model_there(tmp_path, zoo_dir):
    """OUT is zoo/sub, where the user keeps a.onnx of their own: the output of zoo/a.onnx
    would go there. Refused before any work; every file stays as it was."""
    user = zoo_dir / "sub" / "a.onnx"
    user.write_bytes(b"the user's own model, not one this tool wrote")
    before = _state(tmp_path)
    result = run(zoo_dir, zoo_dir / "sub")
    _refused(result, f"error: {user}: OUT lies inside IN", "no output of an earlier run")
    assert _state(tmp_path) == before


def test_out_inside_in_still_writes_over_no_data_file_of_an_input(tmp_path):
    """a.onnx keeps its weights in sub/a.onnx.data: OUT zoo/sub would write its output's
    data file there."""
    models = tmp_path / "zoo"
    (models / "sub").mkdir(parents=True)
    _model(models, "a.onnx", data="sub/a.onnx.data")
    before = _state(tmp_path)
    result = run(models, models / "sub")
    assert result.exit_code == 1
    error = result.stderr.splitlines()[-1]
    assert error.startswith(f"error: {models / 'sub' / 'a.onnx.data'}: the data file of the ")
    assert f"is the data file of {models / 'a.onnx'}, which this run reads" in error
    assert _state(tmp_path) == before


@pytest.mark.parametrize(("out", "why"), [("zoo", "IN and OUT are the same folder"),
                                          (".", "IN lies inside OUT")])  # fmt: skip
def test_in_inside_out_or_the_same_is_bad_usage(tmp_path, zoo_dir, out, why):
    before = _state(tmp_path)
    result = run(zoo_dir, tmp_path / out)
    assert result.exit_code == 2 and why in result.output
    assert _state(tmp_path) == before


@pytest.mark.parametrize("flag", ["--report", "--junit"])
def test_a_report_over_an_input_model_is_refused(tmp_path, zoo_dir, flag):
    before = _state(tmp_path)
    _refused(run(zoo_dir, tmp_path / "out", flag, zoo_dir / "sub" / "b.onnx"),
             f"the {flag} file is the input model")  # fmt: skip
    assert _state(tmp_path) == before


def test_a_report_over_the_baseline_is_refused(tmp_path, zoo_dir):
    """Else a regressed run writes its report over the baseline, and the next run passes."""
    base = tmp_path / "base.json"
    assert run(zoo_dir, tmp_path / "out", "--baseline", base, "--update-baseline").exit_code == 0
    before = _state(tmp_path)
    _refused(run(zoo_dir, tmp_path / "out2", "--baseline", base, "--report", base),
             "the --report file is the baseline")  # fmt: skip
    assert _state(tmp_path) == before


def test_a_failed_run_leaves_an_existing_out_as_it_was(tmp_path):
    src, out = _model(tmp_path), tmp_path / "o.onnx"
    out.write_bytes(b"the user's earlier output")
    bad = tmp_path / "bad.npz"
    np.savez(bad, other=np.zeros(3))
    before = _state(tmp_path)
    assert run(src, out, "--load-inputs", bad).exit_code == 1
    assert _state(tmp_path) == before


def test_a_failed_validation_writes_nothing(tmp_path):
    src, out = _model(tmp_path), tmp_path / "o.onnx"
    z = np.ones((2, 64), np.complex64)
    np.savez(tmp_path / "in.npz", z=z)
    np.savez(tmp_path / "wrong.npz", y=z)  # the model multiplies by a table
    out.write_bytes(b"the user's earlier output")
    before = _state(tmp_path)
    result = run(src, out, "--load-inputs", tmp_path / "in.npz", "--expected-outputs",
                 tmp_path / "wrong.npz")  # fmt: skip
    assert result.exit_code == EXIT_VALIDATION
    assert "nothing was written (--no-validate writes" in result.stderr
    assert _state(tmp_path) == before


def test_inputs_too_large_for_memory_are_one_line_and_leave_out(tmp_path, monkeypatch):
    from onnx_decomplex.passes import validate

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(validate, "random_inputs", no_memory)
    src, out = _model(tmp_path), tmp_path / "o.onnx"
    out.write_bytes(b"the user's earlier output")
    before = _state(tmp_path)
    _refused(run(src, out), "do not fit in memory")
    assert _state(tmp_path) == before


def test_validation_runs_on_the_file_this_run_wrote(tmp_path, monkeypatch):
    """Not on whatever lies at OUT by then (another run may write it)."""
    from onnx_decomplex.passes import validate

    seen = []
    real = validate.validate

    def spy(original, rewritten, *args, **kwargs):
        seen.append(Path(rewritten))
        return real(original, rewritten, *args, **kwargs)

    monkeypatch.setattr(validate, "validate", spy)
    out = tmp_path / "o.onnx"
    result = convert_file(_model(tmp_path), out)
    assert result.ok and result.written == [out]
    staged = [p for p in seen if p != out and p.name == out.name and p.parent.parent == tmp_path]
    assert seen and staged == seen


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_runs_temporary_files_are_removed_by_the_next_run(tmp_path):
    out = tmp_path / "o.onnx"
    mine = _prefix(out)
    dead = tmp_path / (mine[: mine.rindex("-", 0, -1) + 1] + f"{_dead_pid()}-x1y2")
    dead.mkdir()
    (dead / "o.onnx.data").write_bytes(b"\0" * 4096)
    other_host = tmp_path / ".o.onnx.tmp-elsewhere-1-abcd"
    other_host.mkdir()
    assert convert_file(_model(tmp_path), out).ok
    assert not dead.exists() and other_host.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".o.onnx.tmp-elsewhere-1-abcd",
                                                                 "a.onnx", "o.onnx"])  # fmt: skip


def test_a_terminated_run_leaves_no_temporary_files(tmp_path):
    src, out = _model(tmp_path), tmp_path / "o.onnx"
    ready = tmp_path / "ready"
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from onnx_decomplex.passes import validate
        from onnx_decomplex.cli.main import main

        def slow(*args, **kwargs):
            Path({str(ready)!r}).write_text("")
            time.sleep(60)

        validate.validate = slow
        main([{str(src)!r}, {str(out)!r}])
    """)
    child = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path)
    try:
        for _ in range(600):
            if ready.exists() or child.poll() is not None:
                break
            subprocess.run(["sleep", "0.05"])
        assert ready.exists()
        staged = [p for p in tmp_path.iterdir() if p.name.startswith(".o.onnx.tmp-")]
        assert staged  # the rewrite waits there for its validation
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        child.kill()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.onnx", "ready"]


def test_a_termination_during_the_renames_waits_for_them(tmp_path, monkeypatch):
    """A model and its data file are renamed into place together: a SIGTERM between the
    two arrives after both, and the run then ends as terminated."""
    rename = os.replace

    def replace_then_terminated(src, dst):
        rename(src, dst)
        os.kill(os.getpid(), signal.SIGTERM)

    before = signal.signal(signal.SIGTERM, files.terminate)
    monkeypatch.setattr(files, "_terminated_by", None)
    try:
        with Transaction() as t:
            t.write(tmp_path / "o.onnx", b"model")
            t.write(tmp_path / "o.onnx.data", b"weights")
            monkeypatch.setattr(os, "replace", replace_then_terminated)
            with pytest.raises(SystemExit) as exited:
                t.commit()
    finally:
        signal.signal(signal.SIGTERM, before)
    assert exited.value.code == 128 + signal.SIGTERM
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.onnx", "o.onnx.data"]


def test_a_termination_during_onnxruntime_import_is_no_missing_install(tmp_path):
    """A C extension's import turns the handler's exit into ImportError("initialization
    failed"): the run still ends as terminated, not as "onnxruntime is not installed"."""
    src, out = _model(tmp_path), tmp_path / "o.onnx"
    code = textwrap.dedent(f"""
        import builtins, os, signal, sys
        from onnx_decomplex.cli.main import run

        stock = builtins.__import__

        def cut_short(name, *args, **kwargs):
            if name != "onnxruntime":
                return stock(name, *args, **kwargs)
            try:  # as pybind11's module init does with an exception
                os.kill(os.getpid(), signal.SIGTERM)
            except BaseException:
                pass
            raise ImportError("initialization failed")

        sys.modules.pop("onnxruntime", None)
        builtins.__import__ = cut_short
        sys.argv = ["onnx-decomplex", {str(src)!r}, {str(out)!r}]
        run()
    """)
    child = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    assert child.returncode == 128 + signal.SIGTERM, child.stderr
    assert "not installed" not in child.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.onnx"]


def kill_on_b(task):
    """A runner whose worker dies on model b, as one killed for memory would."""
    if task[2].endswith("b.onnx"):
        os.kill(os.getpid(), signal.SIGKILL)
    return zoo.run_model(*task)


def test_a_dead_worker_costs_its_own_model_only(tmp_path, zoo_dir):
    _model(zoo_dir, "c.onnx")
    records = zoo.run_folder(zoo_dir, tmp_path / "out", Options(), jobs=2,
                             runner=kill_on_b)  # fmt: skip
    status = {r.path: r.status for r in records}
    assert status == {"a.onnx": zoo.OK, "c.onnx": zoo.OK, "sub/b.onnx": zoo.ERROR}
    dead = next(r for r in records if r.path == "sub/b.onnx")
    assert "worker process converting it died" in dead.message


def test_reports_baseline_and_outputs_have_the_users_mode(tmp_path, zoo_dir):
    out = tmp_path / "out"
    paths = [tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "base.json"]
    result = run(zoo_dir, out, "--report", paths[0], "--junit", paths[1], "--baseline", paths[2],
                 "--update-baseline")  # fmt: skip
    assert result.exit_code == 0, result.output
    mode = 0o666 & ~umask()
    for path in [*paths, out / "a.onnx"]:
        assert stat.S_IMODE(path.stat().st_mode) == mode, path
    assert json.loads(paths[2].read_text())["models"]
