"""TensorRT: the compatibility lowering, the static parser lint, and the engine.

Only `engine` imports `tensorrt`, and only when a build is asked for; every other
module here runs, and is tested, without it.
"""

from __future__ import annotations

from collections.abc import Callable


def registrar(table: dict[str, Callable], what: str):
    """A decorator factory: `@deco("Op", ...)` puts the function in `table` under each
    op; an op registered twice is an error, never a silent overwrite."""

    def deco(*ops: str):
        def register(fn):
            for op in ops:
                if op in table:
                    raise ValueError(f"a {what} for {op} is already registered")
                table[op] = fn
            return fn

        return register

    return deco
