"""Shape specs on the command line (trtexec's `name:1x8x128` and Polygraphy's
`name:[1,8,128]`), and the dims a model declares."""

from __future__ import annotations

from collections.abc import Iterable

import onnx

from .errors import DecomplexError


def _split_items(spec: str) -> list[str]:
    """Splits on commas that are not inside brackets."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(spec):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(spec[start:i])
            start = i + 1
    items.append(spec[start:])
    return [s.strip() for s in items if s.strip()]


def _dims(text: str, item: str) -> tuple[int, ...]:
    text = text.strip()
    if text.startswith("["):
        if not text.endswith("]"):
            raise DecomplexError(f"bad shape spec '{item}': missing ']'")
        parts = [p.strip() for p in text[1:-1].split(",") if p.strip()]
    else:
        parts = [p.strip() for p in text.split("x")] if text else []
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise DecomplexError(
            f"bad shape spec '{item}': dims must be integers, as in name:1x8x128 or name:[1,8,128]"
        ) from None
    if any(d < 0 for d in dims):
        raise DecomplexError(f"bad shape spec '{item}': dims must not be negative")
    return dims


def parse_shapes(specs: str | Iterable[str]) -> dict[str, tuple[int, ...]]:
    """Parses shape specs into {input name: dims}.

    Args:
        specs: One string or several, each holding comma-separated entries in either
            syntax: `x:1x8x128,y:4` or `x:[1,8,128] y:[4]`. A name may itself contain
            ':' (as in `input:0`); the last ':' separates it from the dims.

    Raises:
        DecomplexError: An entry has no name, or a dim is not a non-negative integer.
    """
    if isinstance(specs, str):
        specs = [specs]
    shapes: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        for item in _split_items(spec):
            name, sep, dims = item.rpartition(":")
            if not sep or not name:
                raise DecomplexError(
                    f"bad shape spec '{item}': expected name:1x8x128 or name:[1,8,128]"
                )
            shapes[name] = _dims(dims, item)
    return shapes


def declared_dims(v: onnx.ValueInfoProto) -> list[int | str | None] | None:
    """The dims `v` declares: an int, a dim name, or None when unnamed; None for no shape."""
    t = v.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
