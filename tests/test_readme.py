"""The README's commands and code run as written, so the docs cannot drift."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

README = (ROOT / "README.md").read_text()
EXE = Path(sys.executable).parent / "onnx-decomplex"


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def test_readme_opens_with_the_two_commands():
    first = _blocks("sh")[0]
    assert "make run" in first and "make test" in first


@pytest.mark.parametrize(
    "line", [ln for b in _blocks("console") for ln in b.splitlines() if ln.strip()]
)
def test_usage_command_runs(line, tmp_path):
    args = shlex.split(line)
    assert args[0] == "onnx-decomplex"
    args = [str(EXE)] + [a.replace("out/", f"{tmp_path}/") for a in args[1:]]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert any(s in proc.stdout for s in ("PASSED", "no complex values", "models: "))


@pytest.mark.parametrize("code", _blocks("python"))
def test_python_snippet_runs(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {})


def test_make_run_target_uses_a_shipped_fixture():
    makefile = (ROOT / "Makefile").read_text()
    fixture = re.search(r"onnx-decomplex (fixtures/\S+\.onnx)", makefile).group(1)
    assert (ROOT / fixture).is_file()
