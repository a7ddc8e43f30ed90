"""Merging shard reports: the N shards of one run make the report of the whole run, and
anything else is refused in one line that names the report."""

from pathlib import Path

import pytest

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.folder import zoo
from onnx_decomplex.folder.baseline import parse_report
from onnx_decomplex.folder.merge import merge_reports
from onnx_decomplex.options import Options

PATHS = [f"m{i}.onnx" for i in range(9)]  # shards of 3: 1 3 2 1 1 2 3 1 1


def _record(path: str) -> zoo.ModelRecord:
    status = zoo.ERROR if path == "m4.onnx" else zoo.OK
    return zoo.ModelRecord(path, status, "m4.onnx: bad" if status == zoo.ERROR else "",
                           nodes_before=2, nodes_after=3, rewrite_seconds=0.5)  # fmt: skip


def _shard(k: int, n: int = 3, paths=None, seconds: float = 1.0, **options) -> tuple:
    shard = zoo.Shard(k, n)
    paths = [p for p in PATHS if shard.holds(p)] if paths is None else paths
    data = zoo.to_json([_record(p) for p in paths], Path("zoo"), Options.of(**options),
                       seconds, shard)  # fmt: skip
    return Path(f"r{k}.json"), parse_report(data)


def test_the_shards_of_a_run_merge_into_the_report_of_the_whole_run():
    merged = merge_reports([_shard(3, seconds=2.5), _shard(1), _shard(2)])
    whole = zoo.to_json([_record(p) for p in PATHS], Path("zoo"), Options(), 2.5)
    assert merged.shard is None and merged.data["shard"] is None
    assert [r.path for r in merged.records] == PATHS
    for key in ("schema_version", "tool_version", "models_dir", "options", "wall_seconds",
                "models", "summary"):  # fmt: skip
        assert merged.data[key] == whole[key], key
    assert merged.data["summary"]["failed"] == 1 and merged.data["summary"]["models"] == 9
    assert list(merged.data) == list(whole)  # the same fields, in the same order


def test_an_empty_shard_merges():
    merged = merge_reports([_shard(1, 1, paths=["a.onnx"])])
    assert [r.path for r in merged.records] == ["a.onnx"]
    empty = _shard(2, 2, paths=[])  # no model of the folder hashes to it
    merged = merge_reports([_shard(1, 2, paths=["b.onnx", "d.onnx"]), empty])
    assert merged.data["summary"]["models"] == 2


@pytest.mark.parametrize(
    ("reports", "file", "why"),
    [
        ([_shard(1), _shard(2)], None, "no report of shard 3/3: merge the reports of all 3"),
        ([_shard(1), _shard(2), _shard(2), _shard(3)], "r2.json", "shard 2/3 twice"),
        ([_shard(1), _shard(2), _shard(3), _shard(1, 1, paths=[])], "r1.json",
         "shard 1/1 is one of 1, and r1.json (shard 1/3) one of 3"),
        ([_shard(1), _shard(2), _shard(3, seed=1)], "r3.json",
         "not the same options as r1.json: seed 1, not 0; not shards of one run"),
        ([_shard(1), _shard(2, paths=["m2.onnx", "m5.onnx", "m0.onnx"]), _shard(3)], "r2.json",
         "model 'm0.onnx' is in r1.json too"),
        ([_shard(1), _shard(2, paths=["m2.onnx", "m1.onnx"]), _shard(3, paths=["m6.onnx"])],
         "r2.json",
         "model 'm1.onnx' belongs to shard 3/3, not 2/3"),
    ],
)  # fmt: skip
def test_reports_that_are_not_the_shards_of_one_run_are_refused(reports, file, why):
    with pytest.raises(DecomplexError) as info:
        merge_reports(reports)
    assert why in info.value.message and info.value.file == file
    assert "\n" not in str(info.value)


def test_the_report_of_a_whole_folder_is_not_a_shard():
    whole = parse_report(zoo.to_json([], Path("zoo"), Options(), 1.0))
    with pytest.raises(DecomplexError, match="not the report of a shard"):
        merge_reports([_shard(1, 1, paths=[]), (Path("whole.json"), whole)])


def test_another_tool_version_or_schema_is_refused():
    path, other = _shard(2, 2, paths=[])
    other.data["tool_version"] = "0.0.1"
    with pytest.raises(DecomplexError, match='not the same tool_version as r1.json: "0.0.1", not'):
        merge_reports([_shard(1, 2, paths=[]), (path, other)])
    path, other = _shard(2, 2, paths=[])
    other.data["schema_version"] = 1
    with pytest.raises(DecomplexError, match="not the same schema_version as r1.json: 1, not 3"):
        merge_reports([_shard(1, 2, paths=[]), (path, other)])
