"""The README's coverage table is what the registry says."""

from onnx_decomplex import coverage
from onnx_decomplex.rules import REGISTRY, refused


def test_readme_table_is_in_sync(root):
    readme = (root / "README.md").read_text()
    assert coverage.replace_in(readme) == readme, "run `make coverage`"


def test_every_rule_and_refusal_has_a_row():
    rows = coverage.table().splitlines()
    for op in [*REGISTRY, *refused.NO_MEANING]:
        assert any(r.startswith(f"| {op} |") for r in rows), op
    assert "| Mul | rewritten | `rules/arithmetic.py` |" in rows
    assert "| Relu | refused | complex numbers are not ordered |" in rows
