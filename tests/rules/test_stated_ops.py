"""Every rule test that converts a model states the op types it expects.

A test converts when it calls `decomplex` or `assert_rewrites`, itself or through a
function of its module. It states its ops when it calls `assert_rewrites(..., ops=...)`
or `assert_ops`, itself or through such a function. A test that expects a refusal
(`pytest.raises`) need not.
"""

import ast
from pathlib import Path

import pytest

HERE = Path(__file__).parent
CONVERTS = {"decomplex", "assert_rewrites"}


def _called(fn: ast.FunctionDef) -> set[str]:
    return {
        c.func.id if isinstance(c.func, ast.Name) else c.func.attr
        for c in ast.walk(fn)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name | ast.Attribute)
    }


def _states(fn: ast.FunctionDef) -> bool:
    """Calls assert_ops, or assert_rewrites with an `ops=` that is not None."""
    for c in ast.walk(fn):
        if not isinstance(c, ast.Call) or not isinstance(c.func, ast.Name):
            continue
        if c.func.id == "assert_ops":
            return True
        if c.func.id == "assert_rewrites":
            ops = next((k.value for k in c.keywords if k.arg == "ops"), None)
            if ops is not None and not (isinstance(ops, ast.Constant) and ops.value is None):
                return True
    return False


def _closure(functions: dict[str, ast.FunctionDef], seeds: set[str]) -> set[str]:
    """The names of `seeds` and of the module functions that call one, at any depth."""
    found = set(seeds)
    changed = True
    while changed:
        changed = False
        for name, fn in functions.items():
            if name not in found and _called(fn) & found:
                found.add(name)
                changed = True
    return found


def _unstated(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    converts = _closure(functions, CONVERTS)
    states = _closure(functions, {n for n, fn in functions.items() if _states(fn)})
    missing = []
    for name, fn in functions.items():
        if not name.startswith("test_") or not _called(fn) & converts:
            continue
        if name in states or "raises" in _called(fn):
            continue
        missing.append(f"{path.name}::{name}")
    return missing


@pytest.mark.parametrize("path", sorted(HERE.glob("test_*.py")), ids=lambda p: p.name)
def test_every_conversion_states_its_ops(path):
    assert _unstated(path) == []


def test_the_check_finds_a_test_without_ops(tmp_path):
    source = tmp_path / "test_example.py"
    source.write_text(
        "def _both(m):\n"
        "    return assert_rewrites(m)\n"
        "def test_silent(m):\n"
        "    _both(m)\n"
        "def test_none(m):\n"
        "    assert_rewrites(m, ops=None)\n"
        "def test_stated(m):\n"
        "    assert_rewrites(m, ops={'Mul': 1})\n"
        "def test_by_hand(m):\n"
        "    assert_ops(decomplex(m)[0], {'Mul': 1})\n"
        "def test_refused(m):\n"
        "    with pytest.raises(ValueError):\n"
        "        decomplex(m)\n"
    )
    assert _unstated(source) == ["test_example.py::test_silent", "test_example.py::test_none"]
