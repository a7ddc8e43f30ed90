"""What a new user meets before the first conversion: the commands, the version, the
license, the package metadata and `make help`."""

import importlib.metadata
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from onnx_decomplex import __version__

METADATA = importlib.metadata.metadata("onnx-decomplex")


def _module(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "onnx_decomplex", *args], cwd=cwd,
                          capture_output=True, text=True)  # fmt: skip


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag):
    run = _module(flag)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"onnx-decomplex, version {__version__}\n"
    assert __version__ == importlib.metadata.version("onnx-decomplex")  # pyproject's


def test_python_m_runs_the_command(tmp_path):
    run = _module(str(ROOT / "fixtures" / "complex_io.onnx"), str(tmp_path / "out.onnx"),
                  "--input-shapes", "z:[3,8,6]", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "PASSED y" in run.stdout and (tmp_path / "out.onnx").is_file()
    usage = _module("--bogus")
    assert usage.returncode == 2 and "Try 'python -m onnx_decomplex --help'" in usage.stderr


def test_license_is_apache_2_as_declared():
    text = (ROOT / "LICENSE").read_text()
    assert text.splitlines()[0] == "Copyright 2026 The onnx-decomplex Authors"
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert METADATA["License-Expression"] == "Apache-2.0"
    assert "LICENSE" in METADATA.get_all("License-File")


def test_classifiers_follow_requires_python():
    classifiers = METADATA.get_all("Classifier")
    versions = [int(c.rsplit(".", 1)[1]) for c in classifiers
                if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]  # fmt: skip
    lowest = re.fullmatch(r">=3\.(\d+)", METADATA["Requires-Python"]).group(1)
    assert versions == list(range(int(lowest), int(lowest) + len(versions))) and len(versions) >= 3
    for c in ("Operating System :: OS Independent",
              "Topic :: Scientific/Engineering :: Artificial Intelligence"):  # fmt: skip
        assert c in classifiers
    # The license is the SPDX expression alone: setuptools refuses a License classifier too.
    assert not [c for c in classifiers if c.startswith("License ::")]


def test_make_help_lists_every_target():
    makefile = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY: (.*)$", makefile, re.M).group(1).split()
    described = re.findall(r"^## ([a-z-]+): ", makefile, re.M)
    assert sorted(described) == sorted(phony)
    run = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    listed = [line.split()[1] for line in run.stdout.splitlines()]
    assert listed == described
    assert "make docs            regenerate docs/ops.md" in run.stdout
    # A bare `make` is `make help`: it installs nothing.
    bare = subprocess.run(["make", "-s"], cwd=ROOT, capture_output=True, text=True)
    assert bare.stdout == run.stdout


def test_every_package_folder_is_installed():
    """setuptools installs the packages pyproject lists, no others: a folder left out
    is missing from a wheel, though an editable install still finds it."""
    text = (ROOT / "pyproject.toml").read_text()
    listed = set(
        re.findall(r'"(onnx_decomplex[\w.]*)"', text.split("packages = [")[1].split("]")[0])
    )
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "onnx_decomplex").rglob("__init__.py")}  # fmt: skip
    assert "onnx_decomplex.cli" in listed and found <= listed, sorted(found - listed)
