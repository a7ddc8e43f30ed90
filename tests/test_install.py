"""What an install holds: one onnxruntime distribution for validation, or none.

`onnxruntime` and `onnxruntime-gpu` install the same `onnxruntime` module, so an
install holding both keeps whichever was written last. Without either, the rewrite
runs and validation says which extra to install.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

RUNTIMES = {"onnxruntime", "onnxruntime-gpu"}

INSTALLS = {
    "": set(),
    "cpu": {"onnxruntime"},
    "gpu": {"onnxruntime-gpu"},
    "dev,cpu": {"onnxruntime"},
    "dev,gpu": {"onnxruntime-gpu"},
    "cpu,bench": {"onnxruntime"},
}
"""Extras -> the onnxruntime distributions their install must hold."""


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0].lower()


def test_no_extra_pulls_in_a_second_runtime():
    """Read from pyproject.toml: the base holds no runtime, each extra one at most,
    and the installs the docs give hold exactly the runtime they name."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in Python 3.11 and newer")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert not {_name(r) for r in project["dependencies"]} & RUNTIMES
    for extras_given, runtimes in INSTALLS.items():
        chosen = [e for e in extras_given.split(",") if e]
        names = {_name(r) for e in chosen for r in extras[e]}
        assert names & RUNTIMES == runtimes, extras_given


def test_every_install_command_names_one_runtime():
    """README, docs and Makefile install the project with the cpu or the gpu extra,
    never both; the TensorRT and OpenVINO extras go beside one of them."""
    found = []
    for path in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "Makefile"):
        for line in path.read_text().splitlines():
            for m in re.finditer(r"pip install[^`\n]*?(?:onnx-decomplex|\.)\[([a-z,]+)\]", line):
                found.append((path.name, m.group(1)))
    assert ("Makefile", "dev,cpu,openvino") in found
    for where, extras in found:
        assert len(set(extras.split(",")) & {"cpu", "gpu"}) == 1, (where, extras)


def _without_onnxruntime(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command line in a process where `import onnxruntime` fails, as it does in an
    install with neither runtime."""
    code = (
        "import sys; sys.modules['onnxruntime'] = None; "
        "from onnx_decomplex.cli.main import main; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True
    )


def test_without_a_runtime_the_rewrite_runs_and_validation_names_the_extras(tmp_path):
    model = ROOT / "fixtures" / "complex_io.onnx"
    run = _without_onnxruntime(str(model), str(tmp_path / "o.onnx"), cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("error: validation runs the rewrite in onnxruntime, which is not")
    assert "pip install 'onnx-decomplex[cpu]', or 'onnx-decomplex[gpu]' for CUDA" in line
    assert "--no-validate" in line and list(tmp_path.iterdir()) == []
    run = _without_onnxruntime(str(model), str(tmp_path / "o.onnx"), "--no-validate", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "o.onnx").is_file()


def _resolved(extras: str) -> dict[str, str]:
    """The distributions pip would install for `.[extras]`, by name, from the index."""
    target = f".[{extras}]" if extras else "."
    run = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
         "--report", "-", target],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in report["install"]}


@pytest.mark.slow
@pytest.mark.parametrize("extras", list(INSTALLS))
def test_pip_resolves_one_runtime_for_each_install(extras):
    """pip's own resolution, against the package index (CI has it): the install holds
    exactly the onnxruntime distribution its extras name."""
    resolved = _resolved(extras)
    assert "onnx-decomplex" in resolved
    assert set(resolved) & RUNTIMES == INSTALLS[extras], resolved
