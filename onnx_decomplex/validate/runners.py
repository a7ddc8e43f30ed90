"""The two runs: the original in the reference evaluator, the rewrite in a runtime
(onnxruntime or OpenVINO, `RUNTIMES`), within one time limit (`Deadline`).

The reference evaluator checks its deadline between nodes; an onnxruntime run is
stopped by one watchdog thread, which sets the run's `terminate` flag past its
deadline, and an OpenVINO run is waited for until its deadline, then cancelled. A
provider asked for that does not load is an error, never a quiet fallback to the CPU.
A runtime is imported when validation first needs it: the rewrite itself needs none.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import onnx
from onnx.external_data_helper import uses_external_data

from ..errors import DecomplexError, OptionError, ValidationTimeout
from ..files.transaction import terminated
from ..graphs import graphs_in
from ..reference import evaluator, quietly

DEFAULT_TIMEOUT = 600.0
"""Seconds one `validate` call may take, reference and runtime together; None for
no limit."""

RUNTIME_HINT = "pip install 'onnx-decomplex[cpu]', or 'onnx-decomplex[gpu]' for CUDA"
"""How to get a runtime for validation; the rewrite itself needs none."""

OPENVINO_HINT = "pip install 'onnx-decomplex[cpu,openvino]'"
"""How to get OpenVINO's runtime."""

RUNTIMES = ("onnxruntime", "openvino")
"""The runtimes a rewrite is validated in: onnxruntime (its CPU provider unless
`providers` says otherwise), or OpenVINO (its CPU plugin, in f32)."""

OPENVINO_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
"""OpenVINO's CPU plugin computes in bf16 where the CPU has it unless told otherwise."""

PROVIDERS = {
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
    "dml": "DmlExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
}
"""Short names of onnxruntime's execution providers (Polygraphy's spelling)."""

_ORT_FLOATS = {"tensor(float)": np.float32, "tensor(double)": np.float64}


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


def run_openvino(
    model: onnx.ModelProto | str | Path | bytes,
    feeds: dict[str, np.ndarray],
    timeout: float | None = None,
) -> list[np.ndarray]:
    """Runs `model` in OpenVINO's CPU plugin, in f32 (`OPENVINO_CONFIG`); outputs in
    graph order. A path lets OpenVINO find the model's external data beside it; a model
    that keeps none is read from its bytes, as OpenVINO 2026.4 reads some Loops only so
    (docs/openvino.md).

    Raises:
        ValidationTimeout: The run went past `timeout` seconds; it is cancelled.
        DecomplexError: OpenVINO is not installed, or could not read, compile or run it.
    """
    ov = import_openvino()
    proto, source = openvino_source(model)
    names = [o.name for o in proto.graph.output]
    try:
        core = ov.Core()
        compiled = core.compile_model(core.read_model(source), "CPU", OPENVINO_CONFIG)
        request = compiled.create_infer_request()
        # Held until the run ends: OpenVINO reads the arrays in place, as it runs.
        inputs = openvino_inputs(compiled, feeds)
        request.start_async(inputs)
        if timeout is None:
            request.wait()
        elif not request.wait_for(max(int(timeout * 1000), 1)):
            request.cancel()
            raise ValidationTimeout(
                f"validation ran past its time limit of {timeout:g} s in OpenVINO"
            )
        results = {port: request.get_tensor(port).data.copy() for port in compiled.outputs}
        return openvino_outputs(compiled, names, results)
    except DecomplexError:
        raise
    except Exception as e:
        raise DecomplexError(f"OpenVINO could not run the rewritten model: {e}") from e


def openvino_source(
    model: onnx.ModelProto | str | Path | bytes,
) -> tuple[onnx.ModelProto, str | bytes]:
    """The model (its weights on disk left there) and what OpenVINO reads it from: its
    path where it keeps external data, so that OpenVINO finds them beside it; else its
    bytes, as OpenVINO 2026.4 reads some Loops only so (docs/openvino.md)."""
    if isinstance(model, bytes):
        return onnx.load_from_string(model), model
    if isinstance(model, onnx.ModelProto):
        return model, model.SerializeToString()
    proto = onnx.load(str(model), load_external_data=False)
    if any(uses_external_data(t) for g in graphs_in(proto.graph) for t in g.initializer):
        return proto, str(model)
    return proto, Path(model).read_bytes()


def openvino_inputs(compiled, feeds: dict[str, np.ndarray]) -> dict[int, np.ndarray]:
    """The feeds of an OpenVINO compiled model, by input index, each in its declared float
    type. A port answers to every name its tensor has (OpenVINO's fusions add more than
    the graph input's own).

    Raises:
        DecomplexError: An input is given no value.
    """
    inputs = {}
    for i, port in enumerate(compiled.inputs):
        name = next((n for n in port.get_names() if n in feeds), None)
        if name is None:
            raise DecomplexError(f"no value is given for input '{port.get_any_name()}'")
        inputs[i] = _in_type(np.asarray(feeds[name]), port.get_element_type().to_dtype())
    return inputs


def openvino_outputs(compiled, names: list[str], results) -> list[np.ndarray]:
    """The outputs called `names`, from an OpenVINO run's `results` (by port)."""
    by_name = {n: port for port in compiled.outputs for n in port.get_names()}
    return [np.asarray(results[by_name[n]]) for n in names]


def _in_type(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A float feed in the float type its input declares."""
    cast = value.dtype.kind == "f" and dtype.kind == "f" and value.dtype != dtype
    return value.astype(dtype) if cast else value


def import_openvino():
    """The `openvino` module, imported when validation first needs it.

    Raises:
        DecomplexError: It is not installed (or does not load): one line naming the
            extra that installs it.
    """
    try:
        import openvino
    except ImportError as e:
        raise DecomplexError(
            f"validation in OpenVINO needs its runtime, which is not installed ({e}): "
            f"{OPENVINO_HINT}"
        ) from None
    return openvino


def has_openvino() -> bool:
    """Whether OpenVINO's runtime imports here."""
    try:
        import_openvino()
    except DecomplexError:
        return False
    return True


def choose_runtime(asked: str | None, target_runtime: str) -> tuple[str, str | None]:
    """The runtime a validation runs in, and a note where it is not the one the target
    runs on: `asked` where given; else the target's, but onnxruntime where that is
    OpenVINO and OpenVINO is not installed."""
    if asked is not None:
        return asked, None
    if target_runtime == "openvino" and not has_openvino():
        return "onnxruntime", (
            f"validated in onnxruntime: OpenVINO, which the target is for, is not installed "
            f"({OPENVINO_HINT})"
        )
    return target_runtime, None


def import_runtime(asked: str | None, target_runtime: str = "onnxruntime") -> None:
    """Imports the runtime `choose_runtime` takes, before any work: a missing runtime is
    one line (`import_onnxruntime`, `import_openvino`)."""
    if choose_runtime(asked, target_runtime)[0] == "openvino":
        import_openvino()
    else:
        import_onnxruntime()


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


def _as_declared(session, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Float feeds in the float type each input declares: a model narrowed to float32
    (for TensorRT) takes float32 where the original took float64."""
    declared = {i.name: _ORT_FLOATS.get(i.type) for i in session.get_inputs()}
    return {
        name: value if declared.get(name) is None else _in_type(value, np.dtype(declared[name]))
        for name, value in feeds.items()
    }


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
