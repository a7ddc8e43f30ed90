"""The op coverage table in docs/ops.md, made from the rule registry.

    python -m onnx_decomplex.coverage               # print the table
    python -m onnx_decomplex.coverage docs/ops.md   # rewrite the table in that file

Only the part between the coverage markers is rewritten; the text around it is the
file's own. A test checks that docs/ops.md holds exactly what this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx.defs

from .graphs import is_default_domain
from .rules import REGISTRY, refused

START = "<!-- coverage:start -->"
END = "<!-- coverage:end -->"


def _state(op: str) -> tuple[str, str]:
    if op in REGISTRY:
        module = REGISTRY[op].fn.__module__.rsplit(".", 1)[-1]
        return "rewritten", f"`rules/{module}.py`"
    if op in refused.NO_MEANING:
        return "refused", refused.NO_MEANING[op]
    return "no rule", ""


def ops() -> list[str]:
    """Every op of the default ONNX domain that onnx knows, sorted."""
    names = {s.name for s in onnx.defs.get_all_schemas() if is_default_domain(s.domain)}
    return sorted(names | set(REGISTRY))


def table() -> str:
    """The markdown table: one row per op, with its state for complex inputs."""
    rows = [_state(op) for op in ops()]
    counts = {k: sum(1 for s, _ in rows if s == k) for k in ("rewritten", "refused", "no rule")}
    lines = [
        f"{counts['rewritten']} ops rewritten, {counts['refused']} refused with a reason, "
        f"{counts['no rule']} with no rule (refused as such) of the {len(rows)} ops in "
        f"onnx {onnx.__version__}.",
        "",
        "| op | complex inputs | where, or why not |",
        "|---|---|---|",
    ]
    lines += [f"| {op} | {s} | {why} |" for op, (s, why) in zip(ops(), rows, strict=True)]
    return "\n".join(lines)


def replace_in(text: str) -> str:
    """`text` with the part between the coverage markers replaced by `table()`.

    Raises:
        ValueError: `text` lacks a marker, or has them out of order.
    """
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not (start and end):
        raise ValueError(f"no '{START}' ... '{END}' markers, in that order")
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    """Prints the table, or rewrites it in the file named by `argv[0]`; the exit status."""
    if not argv:
        print(table())
        return 0
    path = Path(argv[0])
    try:
        path.write_text(replace_in(path.read_text()))
    except (OSError, ValueError) as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
