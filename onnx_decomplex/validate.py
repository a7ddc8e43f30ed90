"""Compare the rewrite, run in onnxruntime, with the original run by the reference evaluator.

The reference evaluator (`onnx.reference`) runs complex graphs in numpy; what it
computes is what the original model means. Three guards keep the verdict honest:

- a time limit for the whole comparison (`DEFAULT_TIMEOUT`, `ValidationTimeout`);
- a failure at float32 is judged again against the original run in float64, within
  float32's noise floor there (`noise`), so that float32's rounding, which both sides
  make, is not blamed on the rewrite;
- random inputs carry `EDGE_VALUES`, where math rules break, and quiet rows (`QUIET`),
  where an epsilon shows.
"""

from __future__ import annotations

import functools
import io
import threading
import time
import warnings
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper
from onnx.external_data_helper import uses_external_data

from . import cmath, noise
from .constants import attribute_value
from .dtypes import TYPE_ATTRIBUTES, is_complex_np, np_of
from .errors import DecomplexError, OptionError, ValidationTimeout
from .files import terminated
from .graphs import graphs_in
from .reference import evaluator, quietly, quirks, unpack

DEFAULT_DIM = 2
"""Value of a symbolic dim that no --input-shapes entry fixes. Not 1, which would
hide a broadcasting mistake."""

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-4

DEFAULT_TIMEOUT = 600.0
"""Seconds one `validate` call may take, reference and runtime together; None for
no limit."""

PRECISION_FACTOR = 4.0
"""A rewrite that fails at the model's own precision still passes when it is no
further than this many times the reference's own distance from a float64 run."""

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


@dataclass
class OutputResult:
    """The comparison of one graph output.

    Attributes:
        name: The output name.
        passed: Every element within atol + rtol * |expected| (NaN matching NaN).
        max_abs: The largest |expected - actual|, complex modulus for complex outputs.
        max_rel: The largest |expected - actual| / |expected|.
        note: Why it failed, when the shapes or dtypes differ.
        max_tol: The largest |expected - actual| / (atol + rtol |expected|): the
            error as a share of the tolerance, whatever the values' scale (1 is the
            tolerance's edge).
        edges: Where the inputs held edge values, the elements of this output that
            depend on them (see `EdgeSplit`); None for no edge values.
        floor_tol: Where it passed only once float32's noise floor widened its
            tolerance (see `noise`), its worst error as a share of the widened one;
            None otherwise.
    """

    name: str
    passed: bool
    max_abs: float
    max_rel: float
    note: str = ""
    max_tol: float = 0.0
    edges: EdgeSplit | None = None
    floor_tol: float | None = None


@dataclass
class EdgeSplit:
    """One output's elements split by whether their value depends on the inputs' edge
    values (it changes when they are replaced by ordinary ones).

    Attributes:
        elements: How many depend on them.
        max_tol: Their worst error as a share of the tolerance.
        not_finite: How many of them float32 (the model's own precision) holds as an
            infinity or a NaN.
        ordinary_max_rel: The largest relative error on the other elements.
        ordinary_max_tol: Their worst error as a share of the tolerance.
    """

    elements: int
    max_tol: float
    not_finite: int
    ordinary_max_rel: float
    ordinary_max_tol: float


@dataclass
class ValidationResult:
    """Per-output comparisons, what the rewrite was compared with ("onnx.reference"
    or "saved outputs") and what ran it, how long each side took, and the expected
    outputs themselves (for a second runtime to be compared with).

    `notes` says where the reference was read against onnx.reference's own quirks
    (see `reference.quirks`); `edges` gives, per complex input, the flat positions
    that hold `EDGE_VALUES`; `actual` holds the rewrite's outputs as the runtime gave
    them (complex ones packed)."""

    outputs: list[OutputResult] = field(default_factory=list)
    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    reference: str = "onnx.reference"
    runtime: str = "onnxruntime"
    reference_seconds: float = 0.0
    runtime_seconds: float = 0.0
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    expected: list[np.ndarray] | None = field(default=None, repr=False)
    notes: list[str] = field(default_factory=list)
    edges: dict[str, list[int]] = field(default_factory=dict)
    actual: list[np.ndarray] | None = field(default=None, repr=False)

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
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
    inputs = _graph_inputs(model)
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
    are fair coin flips. With `edges` (default `EDGES_BY_DEFAULT`), complex inputs also
    hold `EDGE_VALUES` (see `with_edges`).

    Raises:
        DecomplexError: An input's shape cannot be made (too large, or negative).
    """
    rng = np.random.default_rng(seed)
    feeds = {}
    for v in _graph_inputs(model):
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


QUIET = 1e-3
"""The scale of every other row of random float inputs. An additive constant that
guards a small value (a norm's epsilon, a log's offset) changes nothing at unit scale,
so a rewrite that gets its sign or its op wrong shows only where values are small."""


def _quieted(value: np.ndarray) -> np.ndarray:
    """`value` with its odd rows scaled by QUIET: floats of rank 2 or more only."""
    if value.dtype.kind not in "fc" or value.ndim < 2 or value.size == 0:
        return value
    rows = value.reshape(-1, value.shape[-1])
    rows[1::2] *= QUIET
    return rows.reshape(value.shape)


_MAX_INPUT_BYTES = 1 << 36
"""Random inputs past 64 GiB are refused before numpy is asked for them."""


def _nbytes(shape, dtype: np.dtype) -> int:
    n = dtype.itemsize
    for d in shape:
        n *= int(d)
    return n


EXPECTED = "expected"
"""Key of saved outputs in an inputs file: `expected` for a model with one output,
or `expected:NAME` for each output by name."""


def replay_outputs(v: ValidationResult) -> dict[str, np.ndarray]:
    """The outputs of one comparison, as `--save-outputs` writes them: the rewrite's by
    output name, in the original's types (a complex output as a complex array, not
    packed), and what it was compared with as `expected:NAME`, the key `load_saved`
    reads as saved outputs."""
    arrays = {}
    for o, e, a in zip(v.outputs, v.expected or [], v.actual or [], strict=True):
        complex_ = is_complex_np(e.dtype) and a.dtype.kind == "f" and a.shape == (*e.shape, 2)
        arrays[o.name] = unpack(a) if complex_ else a
        arrays[f"{EXPECTED}:{o.name}"] = e
    return arrays


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An uncompressed .npz archive of `arrays`, by name, as `np.load` reads it. Written
    member by member, as `np.savez` does, which cannot take an array named `file`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return buffer.getvalue()


_NUMBERS = "biufc"
"""numpy kinds an input or output can be: bool, integers, floats, complex."""


def _read_npz(path, what: str) -> dict[str, np.ndarray]:
    """Every array of an .npz file, by name; each must hold numbers.

    Raises:
        DecomplexError: Not an .npz archive, unreadable, or an array of strings,
            objects, dates or records; naming the file and the array.
    """
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as e:
        raise DecomplexError(f"cannot read {what}: {e}", file=str(path)) from e
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise DecomplexError(f"cannot read {what}: not an .npz archive", file=str(path))
    try:
        with data:
            arrays = {k: data[k] for k in data.files}
    except Exception as e:
        raise DecomplexError(f"cannot read {what}: {e}", file=str(path)) from e
    for name, value in arrays.items():
        if value.dtype.kind not in _NUMBERS or value.dtype.fields is not None:
            raise DecomplexError(
                f"cannot read {what}: array '{name}' holds {value.dtype}, not numbers",
                file=str(path),
                tensor=name,
            )
    return arrays


def _as_input(value: np.ndarray, dtype: np.dtype, name: str, path) -> np.ndarray:
    """A saved array as the input's dtype: a complex input takes a complex, real or
    packed array; a real one takes a real or (packed by its exporter) complex one."""
    if dtype.kind == "c" and value.dtype.kind != "c" and value.shape[-1:] == (2,):
        value = unpack(value)
    elif dtype.kind == "f" and value.dtype.kind == "c":
        # An exporter that packs complex inputs itself takes this one packed.
        value = cmath.pack(value)
    if value.dtype.kind == "c" and dtype.kind != "c":
        raise DecomplexError(
            f"the inputs file gives '{name}' as {value.dtype}; the input is {dtype}",
            file=str(path),
            tensor=name,
        )
    return value.astype(dtype)


def load_saved(
    path: str, model: onnx.ModelProto
) -> tuple[dict[str, np.ndarray], list[np.ndarray] | None]:
    """Inputs from an .npz file, by input name, and the outputs saved with them.

    A complex input may be given as a complex array, or packed (a real array with a
    trailing 2).
    Saved outputs (see `EXPECTED`), made by the framework that exported the model,
    stand in for the reference evaluator, which cannot run every model.

    Returns:
        The inputs by name, and the expected outputs in graph order (None when the
        file holds none).
    """
    arrays = _read_npz(path, "inputs")
    feeds = {}
    for v in _graph_inputs(model):
        if v.name not in arrays:
            raise DecomplexError(
                f"the inputs file has no array '{v.name}'", file=str(path), tensor=v.name
            )
        dtype = np.dtype(np_of(v.type.tensor_type.elem_type))
        feeds[v.name] = _as_input(arrays[v.name], dtype, v.name, path)
    return feeds, _expected(arrays, model, path)


def load_expected(path: str | Path, model: onnx.ModelProto) -> list[np.ndarray]:
    """The framework's own outputs, from an .npz that holds one array per output name.

    A complex output may be saved as a complex array or packed (a real array with a
    trailing 2); the comparison takes either.

    Returns:
        The outputs in graph order.

    Raises:
        DecomplexError: The file cannot be read or lacks an output.
    """
    arrays = _read_npz(path, "expected outputs")
    names = [o.name for o in model.graph.output]
    missing = [n for n in names if n not in arrays]
    if missing:
        raise DecomplexError(
            f"the expected outputs have no array for {', '.join(missing)}; "
            f"it holds {', '.join(sorted(arrays)) or 'nothing'}",
            file=str(path),
        )
    return [arrays[n] for n in names]


def _expected(arrays: dict, model: onnx.ModelProto, path) -> list[np.ndarray] | None:
    names = [o.name for o in model.graph.output]
    if EXPECTED in arrays and len(names) == 1:
        return [arrays[EXPECTED]]
    found = [arrays.get(f"{EXPECTED}:{n}") for n in names]
    if all(a is None for a in found):
        return None
    missing = [n for n, a in zip(names, found, strict=True) if a is None]
    if missing:
        raise DecomplexError(
            f"the inputs file saves some outputs but not {', '.join(missing)}", file=str(path)
        )
    return found


def _same_non_finite(expected, actual, atol: float, rtol: float) -> bool:
    """Values with an infinite or NaN part: those parts equal, the others close."""
    for part in (np.real, np.imag) if is_complex_np(expected.dtype) else (np.asarray,):
        e, a = part(expected), part(actual)
        finite = np.isfinite(e)
        if not np.array_equal(e[~finite], a[~finite], equal_nan=True):
            return False
        if not np.all(np.abs(e[finite] - a[finite]) <= atol + rtol * np.abs(e[finite])):
            return False
    return True


def _compare(
    name: str, expected: np.ndarray, actual: np.ndarray, atol: float, rtol: float
) -> OutputResult:
    if is_complex_np(expected.dtype):
        if actual.shape != (*expected.shape, 2):
            return OutputResult(
                name,
                False,
                np.inf,
                np.inf,
                f"shape {actual.shape}, expected {(*expected.shape, 2)}",
            )
        actual = unpack(actual)
    elif actual.shape != expected.shape:
        return OutputResult(
            name, False, np.inf, np.inf, f"shape {actual.shape}, expected {expected.shape}"
        )
    if expected.dtype.kind in "biu" or expected.dtype.kind not in "fc":
        equal = np.array_equal(expected, actual)
        bad = 0.0 if equal else np.inf
        return OutputResult(name, equal, bad, bad, max_tol=bad)
    # Infinities and NaNs must be matched exactly, part by part: inf - x is inf, and
    # inf <= atol + rtol * inf would let any value through.
    odd = ~np.isfinite(expected)
    if np.any(odd) and not _same_non_finite(expected[odd], actual[odd], atol, rtol):
        return OutputResult(name, False, np.inf, np.inf, "infinities or NaNs differ", np.inf)
    diff, rel, share = _errors(np.where(odd, 0, expected), np.where(odd, 0, actual), atol, rtol)
    ok = bool(np.all(share <= 1))
    if diff.size == 0:
        return OutputResult(name, ok, 0.0, 0.0)
    max_abs, max_rel, max_tol = (float(np.max(x)) for x in (diff, rel, share))
    return OutputResult(name, ok, max_abs, max_rel, max_tol=max_tol)


def _errors(expected, actual, atol: float, rtol: float) -> tuple[np.ndarray, ...]:
    """Per element: |expected - actual|, that over |expected| and that over the tolerance
    atol + rtol |expected| (0 for both where they are equal)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.abs(np.asarray(expected).astype(np.complex128) - actual)
        scale = np.abs(expected)
        rel = np.where(diff == 0, 0.0, diff / scale)
        share = np.where(diff == 0, 0.0, diff / (atol + rtol * scale))
    return diff, rel, share


def _moved(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where `a` and `b` differ, NaN counting as equal to NaN."""
    return ~((a == b) | (np.isnan(a) & np.isnan(b)))


def run_reference(
    model: onnx.ModelProto, feeds: dict[str, np.ndarray], timeout: float | None = None
) -> list[np.ndarray]:
    """Runs `model` with the reference evaluator; outputs in graph order.

    Raises:
        ValidationTimeout: It ran past `timeout` seconds (checked between nodes).
        DecomplexError: The evaluator failed.
    """
    try:
        with quietly(timeout):
            return [np.asarray(o) for o in evaluator(model).run(None, feeds)]
    except ValidationTimeout:
        raise
    except Exception as e:
        raise DecomplexError(
            f"the reference evaluator could not run the original model: {e}"
        ) from e


def run_onnxruntime(
    model: onnx.ModelProto | str | Path | bytes,
    feeds: dict[str, np.ndarray],
    providers: list[str] | None = None,
    timeout: float | None = None,
) -> list[np.ndarray]:
    """Runs `model` in onnxruntime (CPU unless `providers` says otherwise).

    A path lets onnxruntime find the model's external data beside it; bytes are
    the serialized model itself (one that keeps no data outside).

    Raises:
        ValidationTimeout: The run went past `timeout` seconds; onnxruntime stops it.
        DecomplexError: onnxruntime failed.
    """
    ort = import_onnxruntime()
    options = ort.SessionOptions()
    # Failures come back as the exception below; the log would repeat them on stderr.
    options.log_severity_level = 4
    run_options = ort.RunOptions()
    run_options.log_severity_level = 4
    watched = None
    try:
        if isinstance(model, bytes):
            source = model
        elif isinstance(model, str | Path):
            source = str(model)
        else:
            source = model.SerializeToString()
        with warnings.catch_warnings():
            # A provider it lacks is a warning to onnxruntime; `_check_used` says it once.
            warnings.simplefilter("ignore", UserWarning)
            session = ort.InferenceSession(
                source, options, providers=providers or ["CPUExecutionProvider"]
            )
        _check_used(session, providers)
        if timeout is not None:
            watched = _WATCHDOG.watch(run_options, time.monotonic() + timeout)
        return session.run(None, _as_declared(session, feeds), run_options)
    except DecomplexError:
        raise
    except Exception as e:
        if run_options.terminate:
            raise ValidationTimeout(
                f"validation ran past its time limit of {timeout:g} s in onnxruntime"
            ) from None
        raise DecomplexError(f"onnxruntime could not run the rewritten model: {e}") from e
    finally:
        if watched is not None:
            _WATCHDOG.forget(watched)


RUNTIME_HINT = "pip install 'onnx-decomplex[cpu]', or 'onnx-decomplex[gpu]' for CUDA"
"""How to get a runtime for validation; the rewrite itself needs none."""


def import_onnxruntime():
    """The `onnxruntime` module, imported when validation first needs it.

    Raises:
        DecomplexError: It is not installed (or does not load): one line naming the
            extras that install it.
    """
    try:
        import onnxruntime
    except ImportError as e:
        signum = terminated()
        if signum is not None:  # the import was cut short ("initialization failed")
            raise SystemExit(128 + signum) from None
        raise DecomplexError(
            f"validation runs the rewrite in onnxruntime, which is not installed ({e}): "
            f"{RUNTIME_HINT}; --no-validate writes the rewrite unchecked"
        ) from None
    return onnxruntime


PROVIDERS = {
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
    "dml": "DmlExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
}
"""Short names of onnxruntime's execution providers (Polygraphy's spelling)."""


def resolve_providers(names: str | Iterable[str]) -> list[str]:
    """onnxruntime execution providers by name, in priority order.

    Args:
        names: Comma-separated in one string, or a list: short names (`PROVIDERS`)
            or full ones (`CUDAExecutionProvider`), in any case.

    Returns:
        The full names, each one the installed onnxruntime has.

    Raises:
        OptionError: A name is unknown, given twice, or names a provider the
            installed onnxruntime lacks (the message lists the ones it has).
        DecomplexError: onnxruntime is not installed.
    """
    if isinstance(names, str):
        names = [names]
    wanted = [n.strip() for text in names for n in text.split(",") if n.strip()]
    ort = import_onnxruntime()
    known = {p.lower(): p for p in ort.get_all_providers()}
    known.update({p.lower(): p for p in PROVIDERS.values()})
    available = ort.get_available_providers()
    found: list[str] = []
    for name in wanted:
        key = name.lower()
        full = PROVIDERS.get(key) or known.get(key) or known.get(f"{key}executionprovider")
        if full is None:
            raise OptionError(
                f"unknown execution provider '{name}': give {', '.join(PROVIDERS)} or a full "
                "onnxruntime name such as CUDAExecutionProvider"
            )
        if full in found:
            raise OptionError(f"execution provider '{name}' is given twice")
        if full not in available:
            gpu = " (pip install 'onnx-decomplex[gpu]', in place of [cpu])" if full in (
                PROVIDERS["cuda"], PROVIDERS["tensorrt"]) else ""  # fmt: skip
            raise OptionError(
                f"execution provider '{name}': onnxruntime {ort.__version__} here has no "
                f"{full}; it has {', '.join(available)}{gpu}"
            )
        found.append(full)
    return found


def _check_used(session, providers: list[str] | None) -> None:
    """Refuses a session that left out a provider asked for: onnxruntime falls back to
    the CPU when a provider's libraries do not load, and a validation said to run on
    a GPU must not quietly run elsewhere."""
    used = session.get_providers()
    missing = [p for p in providers or [] if p not in used]
    if missing:
        raise DecomplexError(
            f"onnxruntime could not use {', '.join(missing)} (its libraries or device did "
            f"not load) and would run on {', '.join(used)}; give --providers that load here"
        )


class _Watchdog:
    """One daemon thread that sets onnxruntime's `terminate` flag on runs past their
    deadline (onnxruntime checks it between kernels and Loop iterations). It is
    started once: a thread per run would cost more than a small model's run."""

    def __init__(self):
        self._cond = threading.Condition()
        self._runs: dict[int, tuple[float, object]] = {}
        self._wake_at = None
        self._thread = None
        self._count = 0

    def watch(self, run_options, end: float) -> int:
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="validate-timeout")
                self._thread.daemon = True
                self._thread.start()
            self._count += 1
            self._runs[self._count] = (end, run_options)
            if self._wake_at is None or end < self._wake_at:
                self._cond.notify()
            return self._count

    def forget(self, token: int) -> None:
        with self._cond:
            self._runs.pop(token, None)

    def _loop(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for token, (end, run_options) in list(self._runs.items()):
                    if end <= now:
                        run_options.terminate = True
                        del self._runs[token]
                ends = [end for end, _ in self._runs.values()]
                self._wake_at = min(ends) if ends else None
                self._cond.wait(None if self._wake_at is None else self._wake_at - now)


_WATCHDOG = _Watchdog()


_ORT_FLOATS = {"tensor(float)": np.float32, "tensor(double)": np.float64}


def _as_declared(session, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Float feeds in the float type each input declares: a model narrowed to float32
    (for TensorRT) takes float32 where the original took float64."""
    declared = {i.name: _ORT_FLOATS.get(i.type) for i in session.get_inputs()}
    out = {}
    for name, value in feeds.items():
        dtype = declared.get(name)
        cast = dtype is not None and value.dtype.kind == "f" and value.dtype != dtype
        out[name] = value.astype(dtype) if cast else value
    return out


_WIDER = {
    TensorProto.FLOAT: TensorProto.DOUBLE,
    TensorProto.FLOAT16: TensorProto.DOUBLE,
    TensorProto.BFLOAT16: TensorProto.DOUBLE,
    TensorProto.COMPLEX64: TensorProto.COMPLEX128,
}


def _widen_tensor(t: TensorProto) -> None:
    wide = _WIDER.get(t.data_type)
    if wide is not None:
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np_of(wide)), t.name))


def upcast(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """A copy of `model` computing in float64 and complex128 where it computes in
    float32, float16, bfloat16 or complex64: its values, constants and casts. None
    when it has nothing narrower, or keeps tensors on disk."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    changed = False
    for g in graphs_in(copy.graph):
        for v in [*g.input, *g.output, *g.value_info]:
            t = v.type.tensor_type
            if v.type.HasField("tensor_type") and t.elem_type in _WIDER:
                t.elem_type = _WIDER[t.elem_type]
                changed = True
        for t in g.initializer:
            if uses_external_data(t):
                return None
            changed |= t.data_type in _WIDER
            _widen_tensor(t)
        for node in g.node:
            for attr in node.attribute:
                if attr.type == AttributeProto.TENSOR:
                    if uses_external_data(attr.t):
                        return None
                    changed |= attr.t.data_type in _WIDER
                    _widen_tensor(attr.t)
                elif attr.type == AttributeProto.INT and attr.name in TYPE_ATTRIBUTES:
                    if attr.i in _WIDER:
                        attr.i = _WIDER[attr.i]
                        changed = True
                elif node.op_type == "Constant" and attr.name in ("value_float", "value_floats"):
                    value = attribute_value(attr)
                    attr.CopyFrom(
                        onnx.helper.make_attribute(
                            "value", numpy_helper.from_array(value.astype(np.float64), "")
                        )
                    )
                    changed = True
    return copy if changed else None


def _wide_feeds(feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    wide = {"c": np.complex128, "f": np.float64}
    return {k: v.astype(wide.get(v.dtype.kind, v.dtype)) for k, v in feeds.items()}


def _max_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest |a - b| over elements where both are finite; 0 for none."""
    a, b = np.asarray(a, np.complex128), np.asarray(b, np.complex128)
    both = np.isfinite(a) & np.isfinite(b)
    return float(np.max(np.abs(a[both] - b[both]))) if np.any(both) else 0.0


def _judge_precision(
    result: OutputResult,
    expected: np.ndarray,
    actual: np.ndarray,
    truth: np.ndarray,
    floor: Callable[[], np.ndarray | None],
    atol: float,
    rtol: float,
) -> OutputResult:
    """A failed output against the float64 run: it passes when the rewrite is no
    further from it than PRECISION_FACTOR times the reference's own distance, or when
    every element is within its tolerance plus `noise.FACTOR` times float32's noise
    floor there (`floor`, made when first asked for; see `noise`)."""
    if is_complex_np(expected.dtype):
        actual = unpack(actual)
    if truth.shape != expected.shape or actual.shape != expected.shape:
        return result
    if not np.array_equal(np.isfinite(actual), np.isfinite(expected)):
        return result
    ref_off, rewrite_off = _max_distance(expected, truth), _max_distance(actual, truth)
    # The accumulation is in the real type: float32 for complex64.
    precision = str(np.real(expected.reshape(-1)[:0]).dtype)
    detail = f"reference off by {ref_off:.3g}, rewrite off by {rewrite_off:.3g} against float64"
    if rewrite_off <= PRECISION_FACTOR * ref_off + atol:
        return replace(result, passed=True, note=f"within {precision} accumulation error: {detail}")
    share = _floor_share(actual, truth, floor(), atol, rtol)
    if share <= 1:
        return replace(result, passed=True, floor_tol=share, note=detail)
    note = f"{result.note}; " if result.note else ""
    return replace(result, note=f"{note}beyond {precision} error: {detail}")


def _floor_share(actual, truth, floor: np.ndarray | None, atol: float, rtol: float) -> float:
    """The largest |actual - truth| / (atol + rtol |truth| + FACTOR floor) over the
    elements where both are finite; inf without a floor."""
    if floor is None or floor.shape != truth.shape:
        return np.inf
    both = np.isfinite(actual) & np.isfinite(truth) & np.isfinite(floor)
    if np.any(np.isfinite(truth) & ~both):
        return np.inf
    with np.errstate(all="ignore"):
        off = np.abs(actual[both].astype(np.complex128) - truth[both])
        allowed = atol + rtol * np.abs(truth[both]) + noise.FACTOR * floor[both]
        return float(np.max(np.where(off == 0, 0.0, off / allowed), initial=0.0))


class Deadline:
    """The time left of one limit, shared by the runs of one or more `validate` calls."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.end = None if seconds is None else time.monotonic() + seconds

    def left(self) -> float | None:
        """Seconds left for the next run; None for no limit."""
        return None if self.end is None else max(self.end - time.monotonic(), 0.0)

    @contextmanager
    def stage(self, what: str) -> Iterator[None]:
        """Reports a run past the limit as past the whole call's limit, in `what`."""
        try:
            yield
        except ValidationTimeout:
            raise ValidationTimeout(
                f"validation ran past its time limit of {self.seconds:g} s in {what}"
            ) from None


def validate(
    original: onnx.ModelProto,
    rewritten: onnx.ModelProto | str | Path | bytes | None,
    inputs: dict[str, np.ndarray] | None = None,
    *,
    input_shapes: dict[str, tuple[int, ...]] | None = None,
    seed: int = 0,
    atol: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    providers: list[str] | None = None,
    expected: list[np.ndarray] | None = None,
    runner: Callable[[dict[str, np.ndarray]], list[np.ndarray]] | None = None,
    runtime: str = "onnxruntime",
    reference: str | None = None,
    timeout: float | Deadline | None = DEFAULT_TIMEOUT,
    edges: bool | None = None,
) -> ValidationResult:
    """Runs both models on the same inputs and compares every output.

    An output that fails while the original computes in float32 (or complex64,
    float16) is judged again against the original run in float64 (`upcast`): it
    passes when the rewrite is no further from that than PRECISION_FACTOR times
    the float32 reference is, or when every element is within its tolerance plus
    `noise.FACTOR` times float32's noise floor there (`OutputResult.floor_tol`); its
    note gives both distances. Elements where float32 itself breaks down are left
    out first (`_leave_out_breakdown`).
    Zero `atol` and `rtol` ask for equality and skip both.

    Args:
        original: The complex model, run by `onnx.reference.ReferenceEvaluator`.
        rewritten: The packed-real model, run by onnxruntime on packed inputs: the
            model, its serialized bytes (exactly what was written), or the path it
            was saved to (which lets onnxruntime find external data beside it).
            Unused with `runner`.
        inputs: Inputs for the original model (complex arrays for complex inputs).
            Random, seeded inputs are made when None.
        input_shapes: Shapes for inputs with symbolic dims, by input name.
        seed: Seed for random inputs.
        atol: Absolute tolerance.
        rtol: Relative tolerance, against |expected|.
        providers: onnxruntime execution providers, full names in priority order
            (see `resolve_providers`); CPU by default. One that does not load is an
            error, never a quiet fallback to the CPU.
        expected: The original's outputs, saved by the framework that made it; the
            reference evaluator runs when None.
        runner: Runs the rewrite on packed inputs instead of onnxruntime (a TensorRT
            engine, say), returning its outputs in the original's output order.
        runtime: What `runner` is, for the report.
        reference: Where `expected` came from, for the report, when not from the
            framework that made the model.
        timeout: Seconds the whole call may take (reference evaluator and
            onnxruntime, not `runner`); None for no limit. A `Deadline` shares one
            limit among several calls.
        edges: Random inputs also hold `EDGE_VALUES` (see `with_edges`); default
            `EDGES_BY_DEFAULT`. Given `inputs` are used as they are.

    Returns:
        PASSED/FAILED per output with the max absolute and relative error.

    Raises:
        ValidationTimeout: Validation ran past `timeout`.
        DecomplexError: Either side could not run.
    """
    deadline = timeout if isinstance(timeout, Deadline) else Deadline(timeout)
    placed: dict[str, list[int]] = {}
    if inputs is None:
        shapes = resolve_shapes(original, input_shapes)
        inputs = random_inputs(original, shapes, seed, edges=False)
        if EDGES_BY_DEFAULT if edges is None else edges:
            placed = with_edges(inputs)
    shapes = {k: tuple(v.shape) for k, v in inputs.items()}
    packed = {k: cmath.pack(v) if is_complex_np(v.dtype) else v for k, v in inputs.items()}

    start = time.perf_counter()
    own_reference = expected is None
    reference = reference or ("onnx.reference" if expected is None else "saved outputs")
    notes = quirks(original) if own_reference else []
    if expected is None:
        with deadline.stage("the reference evaluator"):
            expected = run_reference(original, inputs, deadline.left())
    middle = time.perf_counter()
    if runner:
        actual = runner(packed)
    else:
        with deadline.stage("onnxruntime"):
            actual = run_onnxruntime(rewritten, packed, providers, deadline.left())
    end = time.perf_counter()
    if runner is None and providers:
        runtime = f"{runtime} ({', '.join(providers)})"

    names = [o.name for o in original.graph.output]
    result = ValidationResult(
        atol=atol,
        rtol=rtol,
        reference=reference,
        runtime=runtime,
        reference_seconds=middle - start,
        runtime_seconds=end - middle,
        shapes=shapes,
        expected=expected,
        notes=notes,
        edges=placed,
    )
    actual = [np.asarray(a) for a in actual]
    result.actual = actual
    for name, e, a in zip(names, expected, actual, strict=True):
        result.outputs.append(_compare(name, e, a, atol, rtol))
    # Zero tolerances ask for equality, which no float32 argument excuses.
    if own_reference and not result.passed and (atol or rtol):
        _judge_failures(result, original, inputs, actual, deadline)
    placed = (result.edges or edges_in(inputs)) if own_reference else {}
    if placed:
        # Edge values can hide an error: where every element of an output meets one
        # (a sum, a mean), all may overflow alike. The same inputs without them are
        # judged too, and tell which elements depend on them.
        plain = functools.partial(validate, original, rewritten, atol=atol, rtol=rtol,
                                  providers=providers, runner=runner, runtime=runtime,
                                  timeout=deadline)  # fmt: skip
        _judge_without_edges(result, plain(without_edges(inputs, placed, seed)))
    return result


def _judge_without_edges(result: ValidationResult, plain: ValidationResult) -> None:
    """Judges each output again with `plain`, the same inputs without edge values: it
    fails where it passed with edge values but fails without them. Splits each output's
    errors by whether its elements depend on the edge values (they change when the
    edge values are replaced)."""
    rows = zip(result.outputs, plain.outputs, result.expected, result.actual, plain.expected,
               strict=True)  # fmt: skip
    for o, p, e, a, q in rows:
        if o.passed and not p.passed:
            note = f": {p.note}" if p.note else ""
            o.passed = False
            o.note = (f"on the same inputs without edge values, {p.max_tol:.2g} of the "
                      f"tolerance, max abs error {p.max_abs:.3g}{note}")  # fmt: skip
        if e.dtype.kind == "c" and a.shape == (*e.shape, 2):
            a = unpack(a)
        if e.dtype.kind not in "fc" or a.shape != e.shape or q.shape != e.shape:
            continue
        diff, rel, share = _errors(e, a, result.atol, result.rtol)
        edge = _moved(e, q)
        ordinary = ~edge & np.isfinite(e)
        o.edges = EdgeSplit(
            elements=int(edge.sum()),
            max_tol=float(np.max(share[edge], initial=0.0)),
            not_finite=int((edge & ~np.isfinite(e)).sum()),
            ordinary_max_rel=float(np.max(rel[ordinary], initial=0.0)),
            ordinary_max_tol=float(np.max(share[ordinary], initial=0.0)),
        )


def _judge_failures(
    result: ValidationResult,
    original: onnx.ModelProto,
    inputs: dict[str, np.ndarray],
    actual: list[np.ndarray],
    deadline: Deadline,
) -> None:
    """Judges failed outputs again against the original run in float64, when it
    computes in a narrower float type (see `validate`)."""
    wide = upcast(original)
    if wide is None:
        return
    feeds = _wide_feeds(inputs)
    try:
        with deadline.stage("the reference evaluator, in float64"):
            truth = run_reference(wide, feeds, deadline.left())
    except ValidationTimeout:
        raise
    except DecomplexError:
        return  # the float64 reading cannot run: the failure stands as it is

    @functools.cache
    def floors() -> list[np.ndarray] | None:
        try:
            with deadline.stage("the reference evaluator, perturbed at float32's roundoff"):
                return noise.floors(wide, feeds, truth, timeout=deadline.left())
        except ValidationTimeout:
            raise
        except Exception:
            return None  # a node the perturbation cannot run: no floor excuses anything

    for i, (o, e, a, t) in enumerate(
        zip(result.outputs, result.expected, actual, truth, strict=True)
    ):
        if o.passed or e.dtype.kind not in "fc":
            continue
        o, e, a, t, keep, left_out = _leave_out_breakdown(
            o, e, a, np.asarray(t), result.atol, result.rtol
        )
        # A note means shapes or infinities differ: no rounding explains those.
        if not o.passed and not o.note:
            floor = functools.partial(_kept, floors, i, keep)
            o = _judge_precision(o, e, a, t, floor, result.atol, result.rtol)
        if left_out:
            o.note = f"{o.note}; {left_out}" if o.note else left_out
        result.outputs[i] = o


def _kept(floors: Callable, i: int, keep: np.ndarray | None) -> np.ndarray | None:
    """Output `i`'s floor, at the elements `keep` holds (all for None)."""
    every = floors()
    if every is None:
        return None
    floor = every[i]
    return floor if keep is None or floor.shape != keep.shape else floor[keep]


def _leave_out_breakdown(
    result: OutputResult,
    expected: np.ndarray,
    actual: np.ndarray,
    truth: np.ndarray,
    atol: float,
    rtol: float,
) -> tuple[OutputResult, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, str]:
    """Leaves out the elements where the model's own precision breaks down (the
    float64 run's value lies beyond its range, or its reference is further from that
    value than the tolerance: an overflow or underflow on the way, as edge values
    make) and the rewrite's does too (not finite), or the rewrite is within the
    tolerance of the float64 value. Where neither holds a number, inf against NaN
    says nothing of the rewrite.

    Returns the output compared again on the other elements; those elements (flat)
    of the reference, the rewrite (packed) and the float64 run; where they are (None
    for all), and a note of what was left out ("" for nothing).
    """
    complex_ = is_complex_np(expected.dtype)
    values = unpack(actual) if complex_ else actual
    if truth.shape != expected.shape or values.shape != expected.shape:
        return result, expected, actual, truth, None, ""
    with np.errstate(all="ignore"):
        wide = truth.astype(np.complex128 if complex_ else np.float64)
        tol = atol + rtol * np.abs(wide)
        top = np.finfo(np.real(expected.reshape(-1)[:0]).dtype).max
        parts = (wide.real, wide.imag) if complex_ else (wide,)
        beyond = np.logical_or.reduce([~(np.abs(p) <= top) for p in parts])
        broke = beyond | ~(np.abs(expected - wide) <= tol)  # NaN distances count too
        excused = broke & (~np.isfinite(values) | (np.abs(values - wide) <= tol))
    if not np.any(excused):
        return result, expected, actual, truth, None, ""
    keep = ~excused
    e, a, t = expected[keep], values[keep], truth[keep]
    a = cmath.pack(a) if complex_ else a
    precision = str(np.real(expected.reshape(-1)[:0]).dtype)
    note = (
        f"{int(excused.sum())} of {excused.size} elements left out: {precision} overflows "
        f"or underflows there, in the reference and the rewrite alike"
    )
    return _compare(result.name, e, a, atol, rtol), e, a, t, keep, note
