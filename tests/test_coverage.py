"""docs/ops.md's coverage table is what the registry says."""

import pytest

from onnx_decomplex import coverage
from onnx_decomplex.rules import REGISTRY, refused


def test_ops_doc_is_in_sync(root):
    doc = (root / "docs" / "ops.md").read_text()
    assert coverage.replace_in(doc) == doc, "run `make docs`"


def test_readme_links_to_the_table_and_holds_none(root):
    readme = (root / "README.md").read_text()
    assert "(docs/ops.md)" in readme
    assert coverage.START not in readme and "| Mul | rewritten |" not in readme


def test_every_rule_and_refusal_has_a_row():
    rows = coverage.table().splitlines()
    for op in [*REGISTRY, *refused.NO_MEANING]:
        assert any(r.startswith(f"| {op} |") for r in rows), op
    assert "| Mul | rewritten | `rules/arithmetic.py` |" in rows
    assert "| Relu | refused | complex numbers are not ordered |" in rows


def test_main_rewrites_only_between_the_markers(tmp_path):
    doc = tmp_path / "ops.md"
    doc.write_text(f"# intro\n\n{coverage.START}\n| stale |\n{coverage.END}\n\nafter\n")
    assert coverage.main([str(doc)]) == 0
    text = doc.read_text()
    assert text.startswith(f"# intro\n\n{coverage.START}\n") and text.endswith(
        f"{coverage.END}\n\nafter\n"
    )
    assert "| stale |" not in text and coverage.table() in text


@pytest.mark.parametrize("text", ["no markers\n", f"{coverage.END}\n{coverage.START}\n"])
def test_a_file_without_the_markers_is_left_alone(tmp_path, capsys, text):
    doc = tmp_path / "ops.md"
    doc.write_text(text)
    assert coverage.main([str(doc)]) == 1
    assert doc.read_text() == text
    assert "markers" in capsys.readouterr().err
