"""Regressions and improvements against a baseline report."""

import pytest

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.folder.baseline import baseline_for, compare, parse_report, read_baseline
from onnx_decomplex.folder.zoo import ModelRecord, OutputError, Shard


def _rec(path="m.onnx", status="ok", err=1e-7, nodes=10, share=None):
    outputs = [OutputError("y", True, err, err, share)] if status == "ok" else []
    return ModelRecord(path, status, "why" if status not in ("ok", "no-complex") else "",
                       nodes_before=5, nodes_after=nodes, outputs=outputs)  # fmt: skip


def _whats(changes):
    return [str(c) for c in changes]


def test_same_run_has_no_changes():
    cmp = compare([_rec()], [_rec()])
    assert cmp.passed and not cmp.improvements and not cmp.known


def test_ok_to_failing_is_a_regression_and_back_is_an_improvement():
    cmp = compare([_rec()], [_rec(status="unsupported")])
    assert _whats(cmp.regressions) == ["m.onnx: was ok, now unsupported: why"]
    cmp = compare([_rec(status="unsupported")], [_rec()])
    assert cmp.passed and _whats(cmp.improvements) == ["m.onnx: was unsupported, now ok"]


def test_the_same_failure_is_known_and_another_is_a_regression():
    assert compare([_rec(status="error")], [_rec(status="error")]).known
    cmp = compare([_rec(status="unsupported")], [_rec(status="error")])
    assert not cmp.passed


def test_error_growth_past_the_factor_from_a_floor():
    # 1e-7 -> 9e-7 is within 10x; 1e-7 -> 2e-6 is not.
    assert compare([_rec(err=1e-7)], [_rec(err=9e-7)]).passed
    cmp = compare([_rec(err=1e-7)], [_rec(err=2e-6)])
    assert "worst error grew from 1e-07 to 2e-06" in _whats(cmp.regressions)[0]
    # An exact 0 in the baseline is measured from the floor (1% of atol): noise passes.
    assert compare([_rec(err=0.0)], [_rec(err=5e-7)], atol=1e-5).passed
    assert not compare([_rec(err=0.0)], [_rec(err=5e-6)], atol=1e-5).passed
    assert _whats(compare([_rec(err=2e-6)], [_rec(err=1e-7)]).improvements)


def test_error_growth_as_a_share_of_the_tolerance():
    # Errors of 1e13 on values of 1e20 are 0.01 of the tolerance: the scale says nothing.
    assert compare([_rec(err=1e-7, share=0.01)], [_rec(err=1e13, share=0.02)]).passed
    cmp = compare([_rec(err=1e-7, share=0.02)], [_rec(err=1e-7, share=0.5)])
    assert _whats(cmp.regressions) == [
        "m.onnx: output 'y' worst error grew from 0.02 to 0.5 of the tolerance (over 10x)"
    ]
    # From a floor of 1% of the tolerance; a version 1 baseline has absolute errors only.
    assert compare([_rec(share=0.0)], [_rec(share=0.09)]).passed
    assert not compare([_rec(err=1e-7)], [_rec(err=2e-6, share=0.01)]).passed


def test_node_growth_past_the_percentage():
    assert compare([_rec(nodes=10)], [_rec(nodes=11)]).passed
    cmp = compare([_rec(nodes=10)], [_rec(nodes=12)], max_node_growth=10)
    assert _whats(cmp.regressions) == ["m.onnx: node count grew from 10 to 12 (over 10%)"]
    assert compare([_rec(nodes=10)], [_rec(nodes=12)], max_node_growth=25).passed


def test_new_and_missing_models():
    cmp = compare([_rec("a.onnx")], [_rec("b.onnx", status="error")])
    assert _whats(cmp.regressions) == [
        "a.onnx: in the baseline, but not found",
        "b.onnx: new model, error: why",
    ]
    assert compare([], [_rec("new.onnx")]).passed


BASELINE_CASES = {
    "[]": "the report is a list, not an object",
    "null": "the report is null",
    '{"schema_version": 1}': "'models' is missing",
    '{"schema_version": 4, "models": []}': "schema version 4",
    '{"schema_version": 1, "models": ["a"]}': "models[0] is a string",
    '{"schema_version": 1, "models": [{"status": "ok"}]}': "has no 'path'",
    '{"schema_version": 1, "models": [{"path": "a", "status": 3}]}': "'status' is 3",
    '{"schema_version": 1, "models": [{"path": "a", "status": "fine"}]}': "'fine' is none of",
    '{"schema_version": 1, "models": [{"path": "a", "status": "ok", "zzz": 1}]}': "'zzz'",
    '{"schema_version": 1, "models": [{"path": "a", "status": "ok", "nodes_after": "many"}]}': (
        "'nodes_after'"
    ),
    '{"schema_version": 1, "models": [{"path": "a", "status": "ok", "outputs": '
    '[{"name": "y", "passed": true, "max_abs": NaN, "max_rel": 0}]}]}': "'max_abs' is NaN",
    '{"schema_version": 1, "models": [{"path": "a", "status": "ok", "outputs": '
    '[{"name": "y", "passed": true}]}]}': "has no 'max_abs'",
    "not json": "cannot read the baseline",
    '{"schema_version": 2, "models": [], "zzz": 1}': "unknown field 'zzz'",
    '{"schema_version": 2, "models": [], "options": []}': "'options' is [], not an object",
    '{"schema_version": 2, "models": [], "wall_seconds": "1 s"}': "'wall_seconds'",
    '{"schema_version": 2, "models": [], "shard": "1/3"}': "'shard' is \"1/3\", not an object",
    '{"schema_version": 2, "models": [], "shard": {"index": 0, "count": 3}}': "'shard' is",
    '{"schema_version": 2, "models": [], "shard": {"index": 1}}': "with 1 <= K <= N",
    '{"schema_version": 2, "models": [], "shard": {"index": true, "count": 1}}': "'shard' is",
}


@pytest.mark.parametrize("text", list(BASELINE_CASES))
def test_a_baseline_of_the_wrong_shape_is_one_error(tmp_path, text):
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(DecomplexError) as info:
        read_baseline(path)
    assert info.value.file == str(path)
    assert BASELINE_CASES[text] in str(info.value) and "\n" not in str(info.value)


def test_the_committed_baseline_reads(root):
    records = read_baseline(root / "fixtures" / "baseline.json")
    assert records and all(isinstance(r, ModelRecord) for r in records)


def _report(shard=None, paths=("a.onnx", "b.onnx", "c.onnx", "d.onnx")):
    return parse_report({"schema_version": 2, "shard": shard,
                         "models": [{"path": p, "status": "ok"} for p in paths]})  # fmt: skip


def test_a_shard_compares_with_its_own_models_of_the_baseline():
    report = _report()
    assert report.shard is None
    assert baseline_for(report, None, "b.json") == report.records
    for k in (1, 2):
        mine = baseline_for(report, Shard(k, 2), "b.json")
        assert [r.path for r in mine] == [
            r.path for r in report.records if Shard(k, 2).holds(r.path)
        ]
    assert 0 < len(baseline_for(report, Shard(1, 2), "b.json")) < 4


def test_a_shards_report_is_no_baseline():
    report = _report({"index": 2, "count": 3})
    assert report.shard == Shard(2, 3)
    with pytest.raises(DecomplexError, match="report of shard 2/3 alone") as info:
        baseline_for(report, Shard(2, 3), "b.json")
    assert info.value.file == "b.json"
