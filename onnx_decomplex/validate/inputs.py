"""The inputs both models run on: their shapes, seeded random values, quiet rows and
edge values.

Random float inputs, and both parts of complex ones, are standard normal with every
other row scaled by `QUIET` (rank 2 and more: a row is the last axis), where an epsilon
shows; float and complex inputs also hold
`EDGE_VALUES` (`REAL_EDGE_VALUES` for real ones), where math rules break.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx

from ..dtypes import is_complex_np, np_of
from ..errors import DecomplexError, OptionError

DEFAULT_DIM = 2
"""Value of a symbolic dim that no --input-shapes entry fixes. Not 1, which would
hide a broadcasting mistake."""

_NEGATIVE_ZERO = complex(-0.0, -0.0)

EDGE_VALUES = (0, _NEGATIVE_ZERO, 3, -2.5j, 1e20, -1e20j, 1e-30, 1e-30j, -4, 1.5j, 1e20 + 1e20j,
               1e-30 - 1e-30j)  # fmt: skip
"""Complex values where math rules break (both signed zeros, pure real beyond 1, pure
imaginary, huge and tiny magnitudes: float32's squares overflow and underflow), written
into every complex64 input."""

EDGE_VALUES_128 = (0, _NEGATIVE_ZERO, 3, -2.5j, -4, 1.5j)
"""The same for complex128, less the magnitudes: with no wider type to run the
original in, an overflow or a cancellation in float64 (numpy's complex product
uses fused multiply-add, onnxruntime does not) cannot be told from a wrong rewrite.
Where float64 breaks (1e154 and beyond) is for the special-value tests."""

REAL_EDGE_VALUES = (0.0, -0.0)
"""The same for real float inputs: the signed zeros, where an angle or a sign built from
real parts turns (atan2(0, -0) is pi)."""

EDGES_BY_DEFAULT = True
"""Whether random inputs carry `EDGE_VALUES` (`--edge-values/--no-edge-values`)."""

QUIET = 1e-3
"""The scale of every other row of random float inputs. An additive constant that
guards a small value (a norm's epsilon, a log's offset) changes nothing at unit scale,
so a rewrite that gets its sign or its op wrong shows only where values are small."""

_MAX_INPUT_BYTES = 1 << 36
"""Random inputs past 64 GiB are refused before numpy is asked for them."""


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The inputs of `model`'s graph that no initializer gives a value."""
    inits = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in inits]


def resolve_shapes(
    model: onnx.ModelProto,
    overrides: dict[str, tuple[int, ...]] | None = None,
    flag: str = "--input-shapes",
) -> dict[str, tuple[int, ...]]:
    """Concrete shapes for the original model's inputs.

    A dim name fixed by an override applies to every input that uses it; other
    symbolic dims are DEFAULT_DIM.

    Args:
        model: The original model.
        overrides: Shapes by input name.
        flag: The option the overrides came from, for errors.

    Raises:
        OptionError: An override names no input, has the wrong rank, gives a fixed
            dim another size, gives a dim 0 (an empty input validates nothing), or
            gives a dim name two sizes.
    """
    overrides = dict(overrides or {})
    inputs = graph_inputs(model)
    names = {v.name for v in inputs}
    for name in overrides:
        if name not in names:
            raise OptionError(
                f"{flag} names '{name}', which is not an input; inputs: {', '.join(sorted(names))}"
            )
    symbols: dict[str, tuple[int, str]] = {}
    for v in inputs:
        if v.name in overrides and v.type.tensor_type.HasField("shape"):
            _check_override(v, overrides[v.name], flag, symbols)
    shapes = {}
    for v in inputs:
        if v.name in overrides:
            shapes[v.name] = tuple(overrides[v.name])
            continue
        shape = []
        for d in v.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            else:
                shape.append(symbols.get(d.dim_param, (DEFAULT_DIM, ""))[0])
        shapes[v.name] = tuple(shape)
    return shapes


def _check_override(
    v: onnx.ValueInfoProto,
    given: tuple[int, ...],
    flag: str,
    symbols: dict[str, tuple[int, str]],
) -> None:
    """Checks one input's override against the dims it declares, and records the
    sizes it gives its dim names in `symbols` (name -> (size, input))."""
    dims = v.type.tensor_type.shape.dim
    if len(dims) != len(given):
        raise OptionError(
            f"{flag} gives {len(given)} dims for '{v.name}', which has {len(dims)}",
            tensor=v.name,
        )
    for i, (d, size) in enumerate(zip(dims, given, strict=True)):
        if d.HasField("dim_value"):
            if size != d.dim_value:
                raise OptionError(
                    f"{flag} gives {size} for dim {i} of '{v.name}', which is fixed at "
                    f"{d.dim_value}",
                    tensor=v.name,
                )
            continue
        label = f"dim {i} ('{d.dim_param}')" if d.dim_param else f"dim {i}"
        if size == 0:
            raise OptionError(
                f"{flag} gives 0 for {label} of '{v.name}': validation on an empty input "
                "compares nothing; give 1 or more",
                tensor=v.name,
            )
        if d.dim_param:
            first, where = symbols.setdefault(d.dim_param, (size, v.name))
            if first != size:
                raise OptionError(
                    f"{flag} gives {label} of '{v.name}' the size {size}, and '{where}' "
                    f"gives it {first}; inputs that share a dim name share its size",
                    tensor=v.name,
                )


def edge_values(dtype) -> np.ndarray:
    """`EDGE_VALUES` in `dtype`; `EDGE_VALUES_128` for complex128, `REAL_EDGE_VALUES` for
    a real float type."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.array(REAL_EDGE_VALUES, dtype)
    return np.array(EDGE_VALUES_128 if dtype == np.complex128 else EDGE_VALUES, dtype)


def edge_positions(size: int, count: int) -> np.ndarray:
    """Flat positions, spread evenly, for `count` edge values in `size` elements;
    at most half of them, so that most values stay ordinary."""
    k = min(count, size // 2)
    return (np.arange(k) * size) // k if k else np.zeros(0, np.int64)


def _edge_slots(feeds: dict[str, np.ndarray]) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(name, flat positions, edge values) for each float or complex array of `feeds`:
    where `with_edges` writes which values."""
    for name, value in feeds.items():
        if value.dtype.kind in "fc":
            edges = edge_values(value.dtype)
            where = edge_positions(value.size, len(edges))
            yield name, where, edges[: len(where)]


def with_edges(feeds: dict[str, np.ndarray]) -> dict[str, list[int]]:
    """Writes `edge_values` into every float or complex array of `feeds`, in place, at
    `edge_positions`; returns those positions by input name."""
    placed = {}
    for name, where, edges in _edge_slots(feeds):
        feeds[name].reshape(-1)[where] = edges
        placed[name] = where.tolist()
    return placed


def edges_in(feeds: dict[str, np.ndarray]) -> dict[str, list[int]]:
    """The positions `with_edges` wrote its values at, in the complex arrays of `feeds`
    that hold them there. Real arrays are left alone: a zero where a real edge value
    would go is as likely a user's own."""
    return {name: where.tolist() for name, where, edges in _edge_slots(feeds)
            if len(where) and is_complex_np(feeds[name].dtype)
            and np.array_equal(feeds[name].reshape(-1)[where], edges)}  # fmt: skip


def without_edges(
    feeds: dict[str, np.ndarray], placed: dict[str, list[int]], seed: int = 0
) -> dict[str, np.ndarray]:
    """`feeds` with the edge values at `placed` replaced by seeded ordinary ones."""
    rng = np.random.default_rng(seed + 1)
    plain = dict(feeds)
    for name, where in placed.items():
        value = feeds[name].copy()
        n = len(where)
        ordinary = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        value.reshape(-1)[where] = ordinary if value.dtype.kind == "c" else ordinary.real
        plain[name] = value
    return plain


def random_inputs(
    model: onnx.ModelProto,
    shapes: dict[str, tuple[int, ...]],
    seed: int = 0,
    edges: bool | None = None,
) -> dict[str, np.ndarray]:
    """Seeded random inputs for the original model.

    Floats and both parts of complex values are standard normal, with every other row
    (along all axes but the last) scaled by `QUIET`; integers are in [0, 4); booleans
    are fair coin flips. With `edges` (default `EDGES_BY_DEFAULT`), float and complex
    inputs also hold edge values (`edge_values`, see `with_edges`).

    Raises:
        DecomplexError: An input's shape cannot be made (too large, or negative).
    """
    rng = np.random.default_rng(seed)
    feeds = {}
    for v in graph_inputs(model):
        dtype = np.dtype(np_of(v.type.tensor_type.elem_type))
        shape = shapes[v.name]
        if any(d < 0 for d in shape) or _nbytes(shape, dtype) > _MAX_INPUT_BYTES:
            raise DecomplexError(
                f"cannot make a random input of shape {list(shape)} ({dtype}): "
                "--input-shapes can fix smaller dims",
                tensor=v.name,
            )
        if dtype.kind == "c":
            value = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        elif dtype.kind == "f":
            value = rng.standard_normal(shape)
        elif dtype.kind in "iu":
            value = rng.integers(0, 4, size=shape)
        elif dtype.kind == "b":
            value = rng.random(shape) < 0.5
        else:
            raise DecomplexError(f"cannot make random inputs of type {dtype}", tensor=v.name)
        feeds[v.name] = _quieted(np.asarray(value)).astype(dtype)
    if EDGES_BY_DEFAULT if edges is None else edges:
        with_edges(feeds)
    return feeds


def _quieted(value: np.ndarray) -> np.ndarray:
    """`value` with its odd rows scaled by QUIET: floats of rank 2 or more only."""
    if value.dtype.kind not in "fc" or value.ndim < 2 or value.size == 0:
        return value
    rows = value.reshape(-1, value.shape[-1])
    rows[1::2] *= QUIET
    return rows.reshape(value.shape)


def _nbytes(shape, dtype: np.dtype) -> int:
    n = dtype.itemsize
    for d in shape:
        n *= int(d)
    return n
