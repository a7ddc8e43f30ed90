"""The project's modules import one another without a circle.

Every import of a project module counts, wherever it is written: at module level,
under `if TYPE_CHECKING:`, or inside a function. A circle hidden in either of the
last two still ties the modules together: neither can be understood, tested or
moved without the other.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "onnx_decomplex"
# The top-level cli/ folder installs as onnx_decomplex.cli.
FOLDERS = {PACKAGE: ROOT / PACKAGE, f"{PACKAGE}.cli": ROOT / "cli"}


def _modules() -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the project."""
    found = {}
    for prefix, folder in FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([prefix, *parts])] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports, anywhere in its source.

    `from pkg import sub` names the submodule `pkg.sub` when there is one, else `pkg`
    itself. Importing `pkg.sub` runs `pkg/__init__.py` first, so `pkg` is imported
    too, unless it is a package `name` itself lies in (then it is already running).
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            for end in range(1, len(parts) + 1):
                module = ".".join(parts[:end])
                if module in modules and not _within(name, module):
                    found.add(module)
    return found


def _within(name: str, package: str) -> bool:
    """True when module `name` is `package` or lies inside it."""
    return name == package or name.startswith(package + ".")


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports as [a, b, ..., a], or None when the graph is acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for dep in sorted(graph.get(module, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    # Module level, relative, and a submodule named in `from . import`.
    assert "onnx_decomplex.rules.registry" in graph["onnx_decomplex.rules.layout"]
    assert "onnx_decomplex.cmath" in graph["onnx_decomplex.rules.unary"]
    assert "onnx_decomplex.rules.arithmetic" in graph["onnx_decomplex.rules"]
    # The cli folder under its installed name.
    assert "onnx_decomplex.cli.output" in graph["onnx_decomplex.cli.main"]
    # Importing a submodule of another package runs that package's __init__.
    assert "onnx_decomplex.rules" in graph["onnx_decomplex.rewrite"]


def test_finds_a_circle_hidden_anywhere():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)
