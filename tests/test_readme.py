"""The README's commands and code run as written, so the docs cannot drift."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT
from onnx_decomplex.cli.main import main

README = (ROOT / "README.md").read_text()
EXE = Path(sys.executable).parent / "onnx-decomplex"
SHAPE = re.compile(r"[\w.]+:(\[[\d,]*\]|\d+(x\d+)+)")
"""A shape spec, `name:1x8x128` or `name:[1,8,128]`."""


def _blocks(lang, text=README):
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _section(title):
    """The README's text under `## title`, up to the next `## ` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert match, f"no '## {title}' in the README"
    return match.group(1)


QUICK_START = _section("Quick start")


def test_readme_opens_with_install_then_quick_start():
    headings = re.findall(r"^## (.*)$", README, re.M)
    assert headings[:3] == ["Install", "Quick start", "Workflows: jax2onnx, PyTorch and TensorFlow"]
    install = _section("Install")
    for command in ("pip install -e '.[cpu]'", "pip install -e '.[gpu]'", "make run", "make test"):
        assert command in install, command
    assert re.search(
        r"pip install -e '\.\[\w*,?trt\]' --extra-index-url https://pypi\.nvidia\.com", install
    )


def _masked(line):
    """The line with its numbers masked, and its spacing and table rules collapsed: times
    and errors vary, and a column is as wide as its widest number."""
    line = re.sub(r"([─━═])\1+", r"\1", line)
    return " ".join(re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "#", line).split())


def test_quick_start_runs_as_written(tmp_path, monkeypatch):
    # In a folder of its own beside the shipped fixtures, as in a clone: the shell commands,
    # what they print (the lines shown, in order), then the Python that runs their result.
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    env = {**os.environ, "PATH": f"{EXE.parent}{os.pathsep}{os.environ['PATH']}"}
    (commands,) = _blocks("sh", QUICK_START)
    run = subprocess.run(["bash", "-euc", commands], cwd=tmp_path, env=env,
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    (shown,) = _blocks("text", QUICK_START)
    printed = iter(_masked(line) for line in run.stdout.splitlines())
    for line in shown.splitlines():
        if line.strip() != "...":
            assert _masked(line) in printed, f"not printed (in this order): {line}"
    (code,) = _blocks("python", QUICK_START)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})


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


@pytest.mark.parametrize(
    "code", [b for b in _blocks("python") if b not in _blocks("python", QUICK_START)]
)
def test_python_snippet_runs(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {})


def test_make_run_target_uses_a_shipped_fixture():
    makefile = (ROOT / "Makefile").read_text()
    fixture = re.search(r"onnx-decomplex (fixtures/\S+\.onnx)", makefile).group(1)
    assert (ROOT / fixture).is_file()


def _unquoted_shapes(text):
    return [m.group(0) for m in SHAPE.finditer(text) if text[m.start() - 1 : m.start()] != "'"]


def test_shape_examples_are_quoted_for_the_shell():
    # zsh stops on an unquoted name:[1,8,128] (no glob matches): every shape a reader may
    # paste is quoted, in the README and in --help. Printed output is not typed.
    typed = re.sub(r"```text\n.*?```", "", README, flags=re.S)
    assert len(SHAPE.findall(typed)) >= 8 and _unquoted_shapes(typed) == []
    help_text = CliRunner().invoke(main, ["--help"], terminal_width=200).output
    assert len(SHAPE.findall(help_text)) >= 4 and _unquoted_shapes(help_text) == []
