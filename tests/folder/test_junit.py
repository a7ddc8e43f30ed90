"""JUnit XML: one testcase per model, failures and errors where CI systems look."""

import xml.etree.ElementTree as ET

from onnx_decomplex.folder.baseline import compare
from onnx_decomplex.folder.junit import write_junit
from onnx_decomplex.folder.zoo import ModelRecord

RECORDS = [
    ModelRecord("a/ok.onnx", "ok", nodes_before=3, nodes_after=5),
    ModelRecord("bad.onnx", "error", "bad.onnx: not an ONNX model"),
    ModelRecord("relu.onnx", "unsupported", "relu.onnx: 'relu' (Relu, ...)"),
]


def _suite(path):
    return ET.parse(path).getroot().find("testsuite")


def test_one_testcase_per_model_with_failures_and_errors(tmp_path):
    write_junit(RECORDS, tmp_path / "r.xml")
    suite = _suite(tmp_path / "r.xml")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["ok.onnx"].get("classname") == "onnx-decomplex.a"
    assert cases["bad.onnx"].find("error").get("message") == "bad.onnx: not an ONNX model"
    assert cases["relu.onnx"].find("failure").get("type") == "unsupported"


def test_with_a_baseline_known_failures_are_skipped_and_regressions_fail(tmp_path):
    old = [ModelRecord("a/ok.onnx", "ok", nodes_after=4), *RECORDS[1:]]
    cmp = compare(old, RECORDS)  # ok.onnx grew from 4 to 5 nodes: 25%
    write_junit(RECORDS, tmp_path / "r.xml", cmp)
    suite = _suite(tmp_path / "r.xml")
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("1", "0", "2")
    failure = next(c for c in suite.iter("testcase") if c.get("name") == "ok.onnx").find("failure")
    assert failure.get("type") == "regression" and "node count grew" in failure.get("message")
