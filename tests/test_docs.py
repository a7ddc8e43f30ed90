"""The commands and code of the README and of docs/ run as written, and their links resolve,
so the docs cannot drift.

What runs, by a block's language:

- `console`: each line, against the installed command; it must exit 0 and print a verdict.
- `python`: the block as a script, from the repository root.
- `sh`: a block whose every command runs `onnx-decomplex`, in a folder beside the shipped
  fixtures; one that needs a GPU (`--build-engine`, `--providers cuda`) is marked `gpu` and
  skips, saying why, where there is none.

The quick start is run whole by test_readme.py, and the CI example's `yaml` by
tests/cli/test_merge_command.py. What no test runs: `py` blocks (export scripts, which need
the frameworks: `make fixtures-jax` and its siblings run them in their own environments),
`sh` blocks of `pip` and `make` lines (set-up), and `text`, `json` and bare blocks (what a
run prints or writes).
"""

import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT
from onnx_decomplex.cli.main import main
from onnx_decomplex.cli.merge import main as merge
from onnx_decomplex.cli.verify import verify

PAGES = {
    str(path.relative_to(ROOT)): path.read_text()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
}
"""Every page of the docs, by its path from the repository root."""

EXE = Path(sys.executable).parent / "onnx-decomplex"
SHAPE = re.compile(r"[\w.]+:(\[[\d,]*\]|\d+(x\d+)+)")
"""A shape spec, `name:1x8x128` or `name:[1,8,128]`."""
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _quick_start_span() -> tuple[int, int]:
    """Where the README's quick start lies: test_readme.py runs its blocks, in order."""
    text = PAGES["README.md"]
    match = re.search(r"^## Quick start\n.*?(?=^## )", text, re.S | re.M)
    return match.span()


def _blocks(lang: str):
    """(page, line, code) of every ```lang block outside the quick start; line is where its
    code starts."""
    quick = _quick_start_span()
    for page, text in PAGES.items():
        for m in FENCE.finditer(text):
            if m.group(1) != lang or (page == "README.md" and quick[0] <= m.start() < quick[1]):
                continue
            yield page, text.count("\n", 0, m.start(2)) + 1, m.group(2)


def _whole_zoo(line: str) -> list:
    """Slow, for a folder run over all of fixtures/ (760 models, the peer cases among them)."""
    return [pytest.mark.slow] if line.startswith("onnx-decomplex fixtures ") else []


def _commands(code: str) -> list[str]:
    """The shell commands of a block: continuation lines joined, comments and blanks out."""
    joined = re.sub(r"\\\n\s*", " ", code)
    return [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.startswith("#")]


CONSOLE = [
    pytest.param(line, id=f"{page}:{start + i}", marks=_whole_zoo(line))
    for page, start, code in _blocks("console")
    for i, line in enumerate(code.splitlines())
    if line.strip()
]


@pytest.mark.parametrize("line", CONSOLE)
def test_console_command_runs(line, tmp_path):
    args = shlex.split(line)
    assert args[0] == "onnx-decomplex"
    args = [str(EXE)] + [a.replace("out/", f"{tmp_path}/") for a in args[1:]]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert any(s in proc.stdout for s in ("PASSED", "no complex values", "models: "))


@pytest.mark.parametrize(
    "page, code",
    [pytest.param(page, code, id=f"{page}:{line}") for page, line, code in _blocks("python")],
)
def test_python_snippet_runs(page, code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, page, "exec"), {})


def _gpu_reason(code: str) -> str | None:
    """Why the commands of `code` cannot run here, or None when they can."""
    if "--build-engine" in code:
        from onnx_decomplex.trt import engine

        try:
            engine.import_tensorrt()
            engine.gpu_count()
        except engine.EngineError as e:
            return str(e)
    if re.search(r"--providers \S*cuda", code):
        import onnxruntime

        if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
            return "onnxruntime has no CUDAExecutionProvider here (the gpu extra, on a GPU)"
    return None


def _needs_gpu(code: str) -> bool:
    return "--build-engine" in code or bool(re.search(r"--providers \S*cuda", code))


SHELL = [
    pytest.param(code, id=f"{page}:{line}", marks=[pytest.mark.gpu] if _needs_gpu(code) else [])
    for page, line, code in _blocks("sh")
    if all(c.startswith("onnx-decomplex ") for c in _commands(code))
]


@pytest.mark.parametrize("code", SHELL)
def test_shell_block_runs(code, tmp_path):
    # In a folder of its own beside the shipped fixtures, as in a clone, with out/ made.
    if reason := _gpu_reason(code):
        pytest.skip(reason)
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    (tmp_path / "out").mkdir()
    env = {**os.environ, "PATH": f"{EXE.parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(["bash", "-euc", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "PASSED" in run.stdout and "FAILED" not in run.stdout


def test_every_shell_block_of_the_tool_is_run():
    """A block that runs `onnx-decomplex` runs whole, or is the quick start."""
    for page, line, code in _blocks("sh"):
        commands = _commands(code)
        if any("onnx-decomplex" in c for c in commands):
            assert any(p.values[0] == code for p in SHELL), f"{page}:{line} is not run"


# --- Links -------------------------------------------------------------------------------


def _prose(text: str) -> str:
    """The text without its code blocks and code spans, where brackets are not links."""
    text = FENCE.sub("", text)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(text: str) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped,
    spaces made hyphens, a repeated one numbered from 1."""
    seen = Counter()
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+?)\s*$", FENCE.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return anchors


def _links(page: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", _prose(PAGES[page]))


@pytest.mark.parametrize("page", list(PAGES))
def test_every_relative_link_and_anchor_resolves(page):
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue  # https:, mailto:
        path, _, anchor = link.partition("#")
        target = (ROOT / page).parent / path if path else ROOT / page
        if not target.resolve().exists():
            broken.append(f"{link}: no {path}")
        elif anchor and anchor not in _anchors(target.read_text()):
            broken.append(f"{link}: no heading #{anchor} in {target.resolve().relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


def test_anchors_are_made_as_github_makes_them():
    text = "# A b\n## `--target tensorrt`\n### The I/O contract\n## A b\n```sh\n# not one\n```\n"
    assert _anchors(text) == {"a-b", "--target-tensorrt", "the-io-contract", "a-b-1"}


def test_the_readme_links_every_docs_page():
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _links("README.md")}
    for page in PAGES:
        assert page == "README.md" or (ROOT / page).resolve() in linked, page


# --- What the pages say ------------------------------------------------------------------


def test_every_option_is_on_the_options_page():
    text = PAGES["docs/options.md"]
    for command in (main, verify, merge):
        for param in command.params:
            if param.param_type_name == "option":
                names = [*param.opts, *param.secondary_opts]
                assert any(re.search(rf"`{re.escape(n)}(?![\w-])", text) for n in names), names


def test_every_install_command_names_one_runtime():
    """As tests/test_install.py checks of the README: the cpu or the gpu extra, never both."""
    found = [
        (page, m.group(1))
        for page, text in PAGES.items()
        for m in re.finditer(r"pip install[^`\n]*?(?:onnx-decomplex|\.)\[([a-z,]+)\]", text)
    ]
    assert found
    for where, extras in found:
        assert len(set(extras.split(",")) & {"cpu", "gpu"}) == 1, (where, extras)


def _unquoted_shapes(text):
    return [m.group(0) for m in SHAPE.finditer(text) if text[m.start() - 1 : m.start()] != "'"]


def test_shape_examples_are_quoted_for_the_shell():
    # zsh stops on an unquoted name:[1,8,128] (no glob matches): every shape a reader may
    # paste is quoted, in the docs and in --help. Printed output is not typed.
    typed = {page: re.sub(r"```text\n.*?```", "", text, flags=re.S) for page, text in PAGES.items()}
    assert sum(len(SHAPE.findall(t)) for t in typed.values()) >= 8
    assert {page: _unquoted_shapes(t) for page, t in typed.items() if _unquoted_shapes(t)} == {}
    help_text = CliRunner().invoke(main, ["--help"], terminal_width=200).output
    assert len(SHAPE.findall(help_text)) >= 4 and _unquoted_shapes(help_text) == []
