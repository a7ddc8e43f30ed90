"""Compare the rewrite, run in onnxruntime, with the original run by the reference evaluator.

The reference evaluator (`onnx.reference`) runs complex graphs in numpy; what it
computes is what the original model means.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from . import cmath
from .dtypes import is_complex_np, np_of
from .errors import DecomplexError
from .reference import evaluator

DEFAULT_DIM = 2
"""Value of a symbolic dim that no --input-shapes entry fixes. Not 1, which would
hide a broadcasting mistake."""

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-4


@dataclass
class OutputResult:
    """The comparison of one graph output.

    Attributes:
        name: The output name.
        passed: Every element within atol + rtol * |expected| (NaN matching NaN).
        max_abs: The largest |expected - actual|, complex modulus for complex outputs.
        max_rel: The largest |expected - actual| / |expected|.
        note: Why it failed, when the shapes or dtypes differ.
    """

    name: str
    passed: bool
    max_abs: float
    max_rel: float
    note: str = ""


@dataclass
class ValidationResult:
    """Per-output comparisons, what the rewrite was compared with ("onnx.reference"
    or "saved outputs") and what ran it, how long each side took, and the expected
    outputs themselves (for a second runtime to be compared with)."""

    outputs: list[OutputResult] = field(default_factory=list)
    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    reference: str = "onnx.reference"
    runtime: str = "onnxruntime"
    reference_seconds: float = 0.0
    runtime_seconds: float = 0.0
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    expected: list[np.ndarray] | None = field(default=None, repr=False)

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in inits]


def resolve_shapes(
    model: onnx.ModelProto, overrides: dict[str, tuple[int, ...]] | None = None
) -> dict[str, tuple[int, ...]]:
    """Concrete shapes for the original model's inputs.

    A dim name fixed by an override applies to every input that uses it; other
    symbolic dims are DEFAULT_DIM.

    Raises:
        DecomplexError: An override names no input, or has the wrong rank.
    """
    overrides = dict(overrides or {})
    inputs = _graph_inputs(model)
    names = {v.name for v in inputs}
    for name in overrides:
        if name not in names:
            raise DecomplexError(
                f"--input-shapes names '{name}', which is not an input; inputs: {', '.join(sorted(names))}"
            )
    symbols: dict[str, int] = {}
    for v in inputs:
        if v.name in overrides:
            dims = v.type.tensor_type.shape.dim
            if len(dims) != len(overrides[v.name]):
                raise DecomplexError(
                    f"--input-shapes gives {len(overrides[v.name])} dims for '{v.name}', "
                    f"which has {len(dims)}",
                    tensor=v.name,
                )
            for d, value in zip(dims, overrides[v.name], strict=True):
                if d.dim_param:
                    symbols.setdefault(d.dim_param, value)
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
                shape.append(symbols.get(d.dim_param, DEFAULT_DIM))
        shapes[v.name] = tuple(shape)
    return shapes


def random_inputs(
    model: onnx.ModelProto, shapes: dict[str, tuple[int, ...]], seed: int = 0
) -> dict[str, np.ndarray]:
    """Seeded random inputs for the original model.

    Floats and both parts of complex values are standard normal; integers are in
    [0, 4); booleans are fair coin flips.
    """
    rng = np.random.default_rng(seed)
    feeds = {}
    for v in _graph_inputs(model):
        dtype = np.dtype(np_of(v.type.tensor_type.elem_type))
        shape = shapes[v.name]
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
        feeds[v.name] = np.asarray(value).astype(dtype)
    return feeds


EXPECTED = "expected"
"""Key of saved outputs in an inputs file: `expected` for a model with one output,
or `expected:NAME` for each output by name."""


def _read_npz(path, what: str) -> dict[str, np.ndarray]:
    """Every array of an .npz file, by name."""
    try:
        with np.load(path) as data:
            return {k: data[k] for k in data.files}
    except Exception as e:
        raise DecomplexError(f"cannot read {what}: {e}", file=str(path)) from e


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
        value = arrays[v.name]
        dtype = np.dtype(np_of(v.type.tensor_type.elem_type))
        if dtype.kind == "c" and value.dtype.kind != "c" and value.shape[-1:] == (2,):
            value = cmath.unpack(value)
        elif dtype.kind == "f" and value.dtype.kind == "c":
            # An exporter that packs complex inputs itself takes this one packed.
            value = cmath.pack(value)
        feeds[v.name] = value.astype(dtype)
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
        actual = cmath.unpack(actual)
    elif actual.shape != expected.shape:
        return OutputResult(
            name, False, np.inf, np.inf, f"shape {actual.shape}, expected {expected.shape}"
        )
    if expected.dtype.kind in "biu" or expected.dtype.kind not in "fc":
        equal = np.array_equal(expected, actual)
        return OutputResult(name, equal, 0.0 if equal else np.inf, 0.0 if equal else np.inf)
    # Infinities and NaNs must be matched exactly, part by part: inf - x is inf, and
    # inf <= atol + rtol * inf would let any value through.
    odd = ~np.isfinite(expected)
    if np.any(odd) and not _same_non_finite(expected[odd], actual[odd], atol, rtol):
        return OutputResult(name, False, np.inf, np.inf, "infinities or NaNs differ")
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.where(odd, 0.0, np.abs(expected.astype(np.complex128) - actual))
        scale = np.where(odd, 0.0, np.abs(expected))
        rel = np.where(diff == 0, 0.0, diff / scale)
    ok = bool(np.all(diff <= atol + rtol * scale))
    if diff.size == 0:
        return OutputResult(name, ok, 0.0, 0.0)
    return OutputResult(name, ok, float(np.max(diff)), float(np.max(rel)))


def run_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Runs `model` with the reference evaluator; outputs in graph order."""
    try:
        with warnings.catch_warnings():
            # numpy warns when a Cast to real drops the imaginary part: that is the meaning.
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return [np.asarray(o) for o in evaluator(model).run(None, feeds)]
    except Exception as e:
        raise DecomplexError(
            f"the reference evaluator could not run the original model: {e}"
        ) from e


def run_onnxruntime(
    model: onnx.ModelProto | str | Path,
    feeds: dict[str, np.ndarray],
    providers: list[str] | None = None,
) -> list[np.ndarray]:
    """Runs `model` in onnxruntime (CPU unless `providers` says otherwise).

    A path lets onnxruntime find the model's external data beside it.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    # Failures come back as the exception below; the log would repeat them on stderr.
    options.log_severity_level = 4
    try:
        source = str(model) if isinstance(model, str | Path) else model.SerializeToString()
        session = ort.InferenceSession(
            source, options, providers=providers or ["CPUExecutionProvider"]
        )
        return session.run(None, _as_declared(session, feeds))
    except Exception as e:
        raise DecomplexError(f"onnxruntime could not run the rewritten model: {e}") from e


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


def validate(
    original: onnx.ModelProto,
    rewritten: onnx.ModelProto | str | Path,
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
) -> ValidationResult:
    """Runs both models on the same inputs and compares every output.

    Args:
        original: The complex model, run by `onnx.reference.ReferenceEvaluator`.
        rewritten: The packed-real model, run by onnxruntime on packed inputs; or
            the path it was saved to.
        inputs: Inputs for the original model (complex arrays for complex inputs).
            Random, seeded inputs are made when None.
        input_shapes: Shapes for inputs with symbolic dims, by input name.
        seed: Seed for random inputs.
        atol: Absolute tolerance.
        rtol: Relative tolerance, against |expected|.
        providers: onnxruntime execution providers; CPU by default.
        expected: The original's outputs, saved by the framework that made it; the
            reference evaluator runs when None.
        runner: Runs the rewrite on packed inputs instead of onnxruntime (a TensorRT
            engine, say), returning its outputs in the original's output order.
        runtime: What `runner` is, for the report.
        reference: Where `expected` came from, for the report, when not from the
            framework that made the model.

    Returns:
        PASSED/FAILED per output with the max absolute and relative error.
    """
    if inputs is None:
        shapes = resolve_shapes(original, input_shapes)
        inputs = random_inputs(original, shapes, seed)
    shapes = {k: tuple(v.shape) for k, v in inputs.items()}
    packed = {k: cmath.pack(v) if is_complex_np(v.dtype) else v for k, v in inputs.items()}

    start = time.perf_counter()
    reference = reference or ("onnx.reference" if expected is None else "saved outputs")
    if expected is None:
        expected = run_reference(original, inputs)
    middle = time.perf_counter()
    actual = runner(packed) if runner else run_onnxruntime(rewritten, packed, providers)
    end = time.perf_counter()

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
    )
    for name, e, a in zip(names, expected, actual, strict=True):
        result.outputs.append(_compare(name, e, np.asarray(a), atol, rtol))
    return result
