"""Optimization profiles and memory pools for the engine build, from command-line specs.

Shapes are given as the user knows the model: a complex input's logical shape S
(its packed form S + [2] is what the engine takes, with the trailing 2 fixed), or
the packed shape itself, in any spelling `shapes.parse_shapes` reads. Every check
here needs the model and not TensorRT, so a bad profile is refused before TensorRT
is imported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import onnx

from ..dtypes import is_complex_onnx
from ..errors import OptionError
from ..shapes import declared_dims, parse_shapes, static

KINDS = ("min", "opt", "max")

POOLS = {
    "workspace": "WORKSPACE",
    "dla_managed_sram": "DLA_MANAGED_SRAM",
    "dla_local_dram": "DLA_LOCAL_DRAM",
    "dla_global_dram": "DLA_GLOBAL_DRAM",
    "tactic_dram": "TACTIC_DRAM",
    "tactic_shared_memory": "TACTIC_SHARED_MEMORY",
    # trtexec's spellings
    "dlasram": "DLA_MANAGED_SRAM",
    "dlalocaldram": "DLA_LOCAL_DRAM",
    "dlaglobaldram": "DLA_GLOBAL_DRAM",
    "tacticsharedmem": "TACTIC_SHARED_MEMORY",
}
"""Pool names (Polygraphy's and trtexec's) -> `trt.MemoryPoolType` members."""

_UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


_SIZE = "a number and a unit, as in 2G, 512M, 64K or 4096B"


def parse_size(text: str) -> int:
    """`2G`, `512M`, `1.5G`, `4096B` -> bytes (binary units). A unit is required:
    trtexec reads a bare number as MiB and Polygraphy as bytes.

    Raises:
        OptionError: Not a number and a unit.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([BKMGT])(?:i?B)?\s*", text, re.IGNORECASE)
    if not m:
        raise OptionError(f"bad size '{text}': {_SIZE}")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def parse_pool_limits(specs) -> dict[str, int]:
    """`workspace:2G,tactic_shared_memory:48K` -> {`MemoryPoolType` member: bytes}.

    Raises:
        OptionError: An entry is not POOL:SIZE with a known pool and a size with a
            unit, or names a pool given already; the message quotes the entry.
    """
    if isinstance(specs, str):
        specs = [specs]
    limits = {}
    for spec in specs:
        for item in filter(None, (s.strip() for s in spec.split(","))):
            pool, sep, size = item.partition(":")
            key = POOLS.get(pool.strip().lower())
            if not sep or key is None:
                names = ", ".join(k for k in POOLS if "_" in k or k == "workspace")
                raise OptionError(
                    f"bad pool limit '{item}': expected POOL:SIZE with POOL one of {names}"
                )
            if key in limits:
                raise OptionError(
                    f"bad pool limit '{item}': the {pool.strip()} pool is given twice"
                )
            try:
                limits[key] = parse_size(size)
            except OptionError:
                raise OptionError(
                    f"bad pool limit '{item}': the size must be {_SIZE} (trtexec reads a bare "
                    "number as MiB, Polygraphy as bytes)"
                ) from None
    return limits


Shape = tuple[int, ...]


@dataclass
class Profile:
    """min/opt/max shapes for each engine input that has a dynamic dim.

    Attributes:
        shapes: Packed input name -> (min, opt, max).
        packed: Inputs that are complex in the original model (their shapes end in 2).
    """

    shapes: dict[str, tuple[Shape, Shape, Shape]] = field(default_factory=dict)
    packed: set[str] = field(default_factory=set)

    def check_within(self, shapes: dict[str, Shape]) -> None:
        """Raises when a logical input shape (validation's) is outside the profile."""
        for name, shape in shapes.items():
            if name not in self.shapes:
                continue
            low, _, high = self.shapes[name]
            packed = (*shape, 2) if name in self.packed else tuple(shape)
            if len(packed) != len(low) or not all(
                a <= d <= b for a, d, b in zip(low, packed, high, strict=True)
            ):
                raise OptionError(
                    f"--input-shapes gives '{name}' the shape {tuple(shape)}, outside the "
                    f"engine's profile {low} to {high}",
                    tensor=name,
                )

    def logical(self, kind: str = "opt") -> dict[str, Shape]:
        """The original model's input shapes at `kind`, for validation inputs."""
        i = KINDS.index(kind)
        return {name: s[i][:-1] if name in self.packed else s[i] for name, s in self.shapes.items()}


def _inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in inits]


def _declared(v: onnx.ValueInfoProto) -> tuple[list, bool]:
    """Packed dims (int, or the dim's name, or None) and whether the input is complex."""
    dims = declared_dims(v) or []
    packed = is_complex_onnx(v.type.tensor_type.elem_type)
    return (dims + [2] if packed else dims), packed


def _fit(name: str, given: Shape, dims: list, packed: bool, flag: str) -> Shape:
    """`given` as a packed shape, checked against the declared dims."""
    if packed and len(given) == len(dims) - 1:
        given = (*given, 2)
    if len(given) != len(dims):
        logical = f" (logical rank {len(dims) - 1})" if packed else ""
        raise OptionError(
            f"{flag} gives {len(given)} dims for '{name}', which has {len(dims)}{logical}",
            tensor=name,
        )
    for i, (g, d) in enumerate(zip(given, dims, strict=True)):
        if isinstance(d, int) and g != d:
            raise OptionError(
                f"{flag} gives {g} for dim {i} of '{name}', which is fixed at {d}", tensor=name
            )
    return tuple(given)


def _template(dims: list, packed: bool) -> str:
    shown = dims[:-1] if packed else dims
    return "x".join(str(d) if isinstance(d, int) else f"<{d or '?'}>" for d in shown)


def _parsed(specs) -> dict[str, Shape]:
    return dict(specs) if isinstance(specs, dict) else parse_shapes(specs or [])


def build_profile(model: onnx.ModelProto, specs: dict[str, object]) -> Profile:
    """One optimization profile for `model`'s inputs (the original model, or its rewrite).

    Args:
        model: The model whose inputs are profiled.
        specs: "min", "opt" and "max" -> shape specs (strings, as on the command line)
            or shapes parsed already ({input name: dims}). An input given in one
            kind only gets that shape for all three. A dim name fixed by one input's
            shapes applies to every input that uses it.

    Raises:
        OptionError: A spec names no input, has the wrong rank, contradicts a
            fixed dim, gives two kinds but not the third, or min <= opt <= max fails;
            or an input has a dynamic dim that no spec fixes (the message says which
            flags to add).
    """
    inputs = {v.name: _declared(v) for v in _inputs(model)}
    given = _given(specs, inputs)
    profile = Profile(packed={n for n, (_, packed) in inputs.items() if packed})
    symbols: dict[str, list[int]] = {}
    for name, (dims, packed) in inputs.items():
        shapes = _given_shapes(name, dims, packed, given)
        if shapes is None:
            continue
        profile.shapes[name] = shapes
        low, mid, high = shapes
        for i, d in enumerate(dims):
            if isinstance(d, str):
                symbols.setdefault(d, [low[i], mid[i], high[i]])
    _fill_from_symbols(profile, inputs, symbols)
    return profile


def _given(specs: dict[str, object], inputs: dict) -> dict[str, dict[str, Shape]]:
    """The specs of each kind, parsed, each naming one of `inputs`."""
    given = {k: _parsed(specs.get(k)) for k in KINDS}
    for kind, shapes in given.items():
        for name in shapes:
            if name not in inputs:
                raise OptionError(
                    f"--trt-{kind}-shapes names '{name}', which is not an input; "
                    f"inputs: {', '.join(inputs)}"
                )
    return given


def _given_shapes(
    name: str, dims: list, packed: bool, given: dict[str, dict[str, Shape]]
) -> tuple[Shape, Shape, Shape] | None:
    """The input's (min, opt, max) from the specs that name it (one kind given stands
    for all three), or None where none does."""
    kinds = {k: _fit(name, given[k][name], dims, packed, f"--trt-{k}-shapes")
             for k in KINDS if name in given[k]}  # fmt: skip
    if not kinds:
        return None
    if len(kinds) == 2:
        missing = next(k for k in KINDS if k not in kinds)
        raise OptionError(
            f"'{name}' has two of min/opt/max shapes: add --trt-{missing}-shapes", tensor=name
        )
    low, mid, high = (kinds.get(k) or next(iter(kinds.values())) for k in KINDS)
    for i, (a, b, c) in enumerate(zip(low, mid, high, strict=True)):
        if not a <= b <= c:
            raise OptionError(
                f"the profile gives dim {i} of '{name}' min {a}, opt {b}, max {c}: each "
                f"dim needs min <= opt <= max (shapes {low}, {mid}, {high})",
                tensor=name,
            )
    return low, mid, high


def _fill_from_symbols(profile: Profile, inputs: dict, symbols: dict[str, list[int]]) -> None:
    """Shapes for the dynamic inputs no spec names, from the dim names the specs fixed.

    Raises:
        OptionError: A dynamic dim that no spec fixes, naming the flags to add.
    """
    missing = []
    for name, (dims, packed) in inputs.items():
        if name in profile.shapes or static(dims):
            continue
        if all(isinstance(d, int) or d in symbols for d in dims):
            profile.shapes[name] = tuple(
                tuple(d if isinstance(d, int) else symbols[d][i] for d in dims) for i in range(3)
            )
        else:
            missing.append(f"{name}:{_template(dims, packed)}")
    if missing:
        raise OptionError(
            f"dynamic inputs need shapes for the engine: give --trt-min-shapes, "
            f"--trt-opt-shapes and --trt-max-shapes for {', '.join(missing)} "
            "(or one of them, for a fixed shape)"
        )
