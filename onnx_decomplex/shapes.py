"""Shape specs on the command line, and the dims a model declares.

Three spellings of one shape are read: trtexec's `name:1x8x128`, onnxsim's and
OnnxSlim's `name:1,8,128`, and Polygraphy's `name:[1,8,128]`. One option value may hold
several specs, separated by commas: a comma starts a new spec when the text up to the
next comma holds a `:` (a dim never does), so `x:1,8,128,y:4` is two specs,
`x:[1,8,128]` and `y:[4]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import onnx

from .errors import OptionError
from .graphs import graphs_in, is_default_domain

SYNTAX = "'name:1x8x128', 'name:1,8,128' or 'name:[1,8,128]'"
"""The spellings a shape spec may take, for help texts and errors."""

_DIM = re.compile(r"-?\d+")


def _pieces(spec: str) -> list[str]:
    """Splits on commas that are not inside brackets, keeping empty pieces."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(spec):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(spec[start:i])
            start = i + 1
    pieces.append(spec[start:])
    return pieces


def _split_items(spec: str) -> list[str]:
    """The specs of one option value: a piece with no `:` continues the spec before it
    (`x:1,8` is one spec, not `x:1` and `8`)."""
    items: list[str] = []
    for piece in _pieces(spec):
        if items and ":" not in piece:
            items[-1] += "," + piece
        else:
            items.append(piece)
    return [s.strip() for s in items if s.strip()]


def _dims(text: str, item: str) -> tuple[int, ...]:
    text = text.strip()
    if text.startswith("["):
        if not text.endswith("]"):
            raise OptionError(f"bad shape spec '{item}': missing ']'")
        inner = text[1:-1].strip()
        parts = inner.split(",") if inner else []
    elif "," in text:
        parts = text.split(",")
    else:
        parts = text.split("x") if text else []
    parts = [p.strip() for p in parts]
    if not all(_DIM.fullmatch(p) for p in parts):
        raise OptionError(f"bad shape spec '{item}': dims must be integers, as in {SYNTAX}")
    dims = tuple(int(p) for p in parts)
    if any(d < 0 for d in dims):
        raise OptionError(
            f"bad shape spec '{item}': dims must not be negative (a shape gives each dim's size)"
        )
    return dims


def parse_shapes(specs: str | Iterable[str]) -> dict[str, tuple[int, ...]]:
    """Parses shape specs into {input name: dims}.

    Args:
        specs: One string or several, each holding one or more specs in any of the
            three spellings, separated by commas: `x:1x8x128,y:4`, `x:1,8,128,y:4`
            or `x:[1,8,128],y:[4]`. A name may itself contain `:` (as in `input:0`):
            the last `:` separates it from the dims. `s:[]` is a scalar.

    Raises:
        OptionError: A spec has no name, a dim is not a non-negative integer, or a
            name is given twice; the message quotes the spec.
    """
    if isinstance(specs, str):
        specs = [specs]
    shapes: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        for item in _split_items(spec):
            name, sep, dims = item.rpartition(":")
            name = name.strip()
            if not sep or not name:
                raise OptionError(f"bad shape spec '{item}': expected {SYNTAX}")
            if name in shapes:
                raise OptionError(
                    f"bad shape spec '{item}': '{name}' is given twice; give each input once"
                )
            shapes[name] = _dims(dims, item)
    return shapes


def static(dims) -> bool:
    """Whether `dims` are known, each a number (not a dim name, not None)."""
    return dims is not None and all(isinstance(d, int) for d in dims)


def declared_dims(v: onnx.ValueInfoProto) -> list[int | str | None] | None:
    """The dims `v` declares: an int, a dim name, or None when unnamed; None for no shape."""
    t = v.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]


_STANDIN = "__shape_of_eyelike_input"


def infer_shapes(model: onnx.ModelProto, **kwargs) -> onnx.ModelProto:
    """`onnx.shape_inference.infer_shapes(model, **kwargs)`, without stopping the process
    where an EyeLike reads a value whose type inference cannot find (onnx#2647: a DFT of
    a complex signal, an op onnx does not know; see `_standing_in`)."""
    standing = _standing_in(model)
    if standing is None:
        return onnx.shape_inference.infer_shapes(model, **kwargs)
    copy, standins = standing
    return _taken_out(onnx.shape_inference.infer_shapes(copy, **kwargs), standins)


def convert_version(model: onnx.ModelProto, version: int) -> onnx.ModelProto:
    """`onnx.version_converter.convert_version`, which infers shapes on the way, without
    stopping the process where `infer_shapes` would (see there)."""
    import onnx.version_converter

    standing = _standing_in(model)
    if standing is None:
        return onnx.version_converter.convert_version(model, version)
    copy, standins = standing
    return _taken_out(onnx.version_converter.convert_version(copy, version), standins)


def _standing_in(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, str]] | None:
    """A copy of `model` where each EyeLike reads ConstantOfShape(Shape(input)), which is
    always typed and has the input's shape, and each stand-in's name with the input it
    stands for; None for a model without EyeLike."""
    if not any(n.op_type == "EyeLike" for g in graphs_in(model.graph) for n in g.node):
        return None
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    standins = {}
    for k, g in enumerate(graphs_in(copy.graph)):
        for i in reversed(range(len(g.node))):
            node = g.node[i]
            if node.op_type != "EyeLike" or not is_default_domain(node.domain) or not node.input:
                continue
            shape, standin = f"{_STANDIN}_{k}_{i}_shape", f"{_STANDIN}_{k}_{i}"
            g.node.insert(i, onnx.helper.make_node("ConstantOfShape", [shape], [standin]))
            g.node.insert(i, onnx.helper.make_node("Shape", [node.input[0]], [shape]))
            standins[standin] = node.input[0]
            node.input[0] = standin
    return copy, standins


def _taken_out(model: onnx.ModelProto, standins: dict[str, str]) -> onnx.ModelProto:
    """`model` without the stand-ins' nodes and labels, each EyeLike reading its own
    input again."""
    for g in graphs_in(model.graph):
        kept = [n for n in g.node if not any(o.startswith(_STANDIN) for o in n.output)]
        for node in kept:
            node.input[:] = [standins.get(name, name) for name in node.input]
        del g.node[:]
        g.node.extend(kept)
        labels = [v for v in g.value_info if not v.name.startswith(_STANDIN)]
        del g.value_info[:]
        g.value_info.extend(labels)
    return model
