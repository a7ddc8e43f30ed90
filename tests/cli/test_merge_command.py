"""`onnx-decomplex-merge`: the shards of a folder run merged and compared with a baseline,
as docs/folder-mode.md's CI matrix runs them."""

import glob
import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from onnx_decomplex.cli.main import main
from onnx_decomplex.cli.merge import main as merge

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
BIN = Path(sys.executable).parent


def invoke(command, *args):
    return CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)


def _ci_example() -> tuple[list[str], str, str]:
    """docs/folder-mode.md's GitHub Actions example: the matrix, the shard job's command
    and the merge job's."""
    page = (ROOT / "docs" / "folder-mode.md").read_text()
    (yaml,) = re.findall(r"```yaml\n(.*?)```", page, re.S)
    matrix = re.search(r"shard: \[([\d, ]+)\]", yaml)[1].split(", ")
    runs = re.findall(r"- run: (onnx-decomplex.*)", yaml)
    (shard,) = [r for r in runs if r.startswith("onnx-decomplex ")]
    (merged,) = [r for r in runs if r.startswith("onnx-decomplex-merge ")]
    return matrix, shard, merged


def _run(line: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`line` as the job runs it, from the repository root, with out/ and reports/ in
    `tmp_path`, and globs expanded as a shell does."""
    args = []
    for arg in shlex.split(line):
        arg = arg.replace("out/", f"{tmp_path}/out/").replace("reports/", f"{tmp_path}/reports/")
        args += sorted(glob.glob(arg)) if "*" in arg else [arg]
    args[0] = str(BIN / args[0])
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True)


@pytest.mark.slow  # the whole zoo in four shards, 760 models
def test_the_docs_ci_example_merges_the_shards_into_the_whole_zoo(tmp_path):
    matrix, shard_job, merge_job = _ci_example()
    assert matrix == ["1", "2", "3", "4"] and "--shard ${{ matrix.shard }}/4" in shard_job
    (tmp_path / "reports").mkdir()
    for k in matrix:
        proc = _run(shard_job.replace("${{ matrix.shard }}", k), tmp_path)
        assert proc.returncode == 0, proc.stderr  # each shard against its part of the baseline
        # upload-artifact, then download-artifact with merge-multiple: one folder of reports
        shutil.copy(tmp_path / "out" / f"zoo-{k}.json", tmp_path / "reports")
    proc = _run(merge_job, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "(4 shards, " in proc.stdout
    merged = json.loads((tmp_path / "out" / "zoo.json").read_text())
    baseline = json.loads((FIXTURES / "baseline.json").read_text())
    assert merged["shard"] is None and merged["baseline"]["regressions"] == []
    paths = [m["path"] for m in merged["models"]]
    assert paths == [m["path"] for m in baseline["models"]]
    assert merged["summary"]["models"] == len(paths)
    suite = ET.parse(tmp_path / "out" / "zoo.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) == len(paths) and suite.get("failures") == "0"


def _zoo(tmp_path) -> Path:
    src = tmp_path / "models"
    (src / "a").mkdir(parents=True)
    for name in ("complex_io.onnx", "beamformer.onnx", "no_complex.onnx"):
        shutil.copy(FIXTURES / name, src / name)
    shutil.copy(FIXTURES / "complex_linear.onnx", src / "a" / "linear.onnx")
    (src / "a" / "corrupt.onnx").write_bytes(b"\x08\x07 not a model")
    return src


def _shards(tmp_path, n=2) -> list[Path]:
    src = tmp_path / "models"
    if not src.exists():
        _zoo(tmp_path)
    reports = []
    for k in range(1, n + 1):
        reports.append(tmp_path / f"shard{k}.json")
        invoke(main, src, tmp_path / f"out{k}", "--shard", f"{k}/{n}", "--report", reports[-1])
    return reports


def test_the_merge_is_the_report_of_one_run_over_the_folder(tmp_path):
    reports = _shards(tmp_path, 3)
    result = invoke(merge, *reversed(reports), "--report", tmp_path / "m.json")
    assert result.exit_code == 1  # the corrupt model failed, as a folder run would say
    assert "error" in result.stderr and "a/corrupt.onnx" in result.stderr
    invoke(main, tmp_path / "models", tmp_path / "whole", "--report", tmp_path / "w.json")
    merged, whole = (json.loads((tmp_path / n).read_text()) for n in ("m.json", "w.json"))

    def strip(report):
        models = [{k: v for k, v in m.items() if not k.endswith("seconds")}
                  for m in report["models"]]  # fmt: skip
        summary = {k: v for k, v in report["summary"].items() if not k.endswith("seconds")}
        return models, summary, report["options"], report["shard"]

    assert strip(merged) == strip(whole)
    assert merged["summary"]["models"] == 5


def test_a_merged_baseline_then_a_regression(tmp_path):
    reports = _shards(tmp_path)
    base = tmp_path / "base.json"
    result = invoke(merge, *reports, "--baseline", base, "--update-baseline")
    assert result.exit_code == 0 and f"baseline {base} updated" in result.output
    assert "baseline" not in json.loads(base.read_text())
    # The merged baseline serves a whole run as well as the merge.
    result = invoke(main, tmp_path / "models", tmp_path / "whole", "--baseline", base)
    assert result.exit_code == 0, result.stderr
    xml = tmp_path / "m.xml"
    result = invoke(merge, *reports, "--baseline", base, "--junit", xml)
    assert result.exit_code == 0, result.stderr
    suite = ET.parse(xml).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "0", "1")
    # complex_io.onnx is gone: its shard's report says so, and the merge fails on it.
    (tmp_path / "models" / "complex_io.onnx").unlink()
    reports = _shards(tmp_path)
    result = invoke(merge, *reports, "--baseline", base, "--junit", xml)
    assert result.exit_code == 1
    assert "complex_io.onnx: in the baseline, but not found" in result.stderr


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.iterdir() if p.is_file()}  # fmt: skip


def test_reports_that_do_not_merge_are_one_line_and_write_nothing(tmp_path):
    reports = _shards(tmp_path, 3)
    before = _digests(tmp_path)
    result = invoke(merge, reports[0], reports[2], "--report", tmp_path / "m.json")
    assert result.exit_code == 1
    assert result.stderr == "error: no report of shard 2/3: merge the reports of all 3 shards\n"
    result = invoke(merge, *reports, reports[1])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert f"error: {reports[1]}: shard 2/3 twice: here and in {reports[1]}" in result.stderr
    result = invoke(merge, *reports, "--report", reports[0])
    assert result.exit_code == 1
    assert "the --report file is the shard report, which this run reads" in result.stderr
    result = invoke(merge, tmp_path / "nope.json")
    assert result.exit_code == 1 and "cannot read the shard report" in result.stderr
    assert _digests(tmp_path) == before


def test_bad_usage(tmp_path):
    assert invoke(merge).exit_code == 2
    result = invoke(merge, tmp_path / "shard1.json", "--update-baseline")
    assert result.exit_code == 2 and "--update-baseline needs --baseline" in result.output
