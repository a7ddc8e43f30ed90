"""The README opens with install and a quick start that runs as written. Its other
commands and code, and those of docs/, are run by test_docs.py."""

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

README = (ROOT / "README.md").read_text()
EXE = Path(sys.executable).parent / "onnx-decomplex"


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


def test_readme_is_a_front_door():
    """What the tool does, install, the quick start, the workflows, folder mode and CI in
    brief, the make targets: the reference lives in docs/ (test_docs.py checks the links)."""
    assert len(README.splitlines()) <= 300


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


def test_make_run_target_uses_a_shipped_fixture():
    makefile = (ROOT / "Makefile").read_text()
    fixture = re.search(r"onnx-decomplex (fixtures/\S+\.onnx)", makefile).group(1)
    assert (ROOT / fixture).is_file()
