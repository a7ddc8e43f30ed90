"""The op coverage table in the README, made from the rule registry.

    python -m onnx_decomplex.coverage            # print the table
    python -m onnx_decomplex.coverage README.md  # rewrite the table in that file

A test checks that the README holds exactly what this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx.defs

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
    names = {s.name for s in onnx.defs.get_all_schemas() if s.domain in ("", "ai.onnx")}
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
    """`text` with the part between the coverage markers replaced by `table()`."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main(argv: list[str]) -> None:
    if not argv:
        print(table())
        return
    path = Path(argv[0])
    path.write_text(replace_in(path.read_text()))


if __name__ == "__main__":
    main(sys.argv[1:])
