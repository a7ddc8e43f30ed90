"""JUnit XML for a folder run: one testcase per model, which CI systems show natively.

A model that fails is a <failure> (unsupported, validation-failed) or an <error>
(error). With a baseline, a model that fails as it did there is <skipped>, with the
reason, and a regression of a passing model is a <failure> too.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..files.transaction import write_atomic
from .baseline import Comparison
from .zoo import ERROR, ModelRecord, summarize


def _testcase(record: ModelRecord, regressions: list[str], known: bool) -> ET.Element:
    folder, _, name = record.path.rpartition("/")
    case = ET.Element(
        "testcase",
        classname="onnx-decomplex." + (folder.replace("/", ".") or "models"),
        name=name,
        time=f"{record.rewrite_seconds + record.validate_seconds:.6f}",
    )
    if known:
        ET.SubElement(case, "skipped", message=f"{record.status}, as in the baseline")
    elif not record.passed:
        tag = "error" if record.status == ERROR else "failure"
        element = ET.SubElement(case, tag, message=record.message, type=record.status)
        element.text = record.message
    elif regressions:
        element = ET.SubElement(case, "failure", message=regressions[0], type="regression")
        element.text = "\n".join(regressions)
    found = ", ".join(f"{k} {v}" for k, v in record.complex_found.items() if v)
    out = ET.SubElement(case, "system-out")
    out.text = (
        f"status {record.status}; complex: {found or 'none'}; "
        f"nodes {record.nodes_before} -> {record.nodes_after}"
    )
    return case


def write_junit(records: list[ModelRecord], path: Path, cmp: Comparison | None = None) -> None:
    """Writes the JUnit XML of a run, with baseline changes when `cmp` is given."""
    regressions: dict[str, list[str]] = {}
    known = set()
    if cmp is not None:
        for c in cmp.regressions:
            regressions.setdefault(c.path, []).append(c.what)
        known = {c.path for c in cmp.known}
    cases = [_testcase(r, regressions.get(r.path, []), r.path in known) for r in records]
    failures = sum(c.find("failure") is not None for c in cases)
    errors = sum(c.find("error") is not None for c in cases)
    skipped = sum(c.find("skipped") is not None for c in cases)
    total = summarize(records)
    suite = ET.Element(
        "testsuite",
        name="onnx-decomplex",
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{total['rewrite_seconds'] + total['validate_seconds']:.6f}",
    )
    suite.extend(cases)
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    write_atomic(path, ET.tostring(suites, encoding="utf-8", xml_declaration=True))
