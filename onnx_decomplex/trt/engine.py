"""Build a TensorRT engine with the Python builder, and run it.

`tensorrt` and `cuda-bindings` are imported here only, and only when asked for.
`preflight` checks, in order, that TensorRT imports, that CUDA sees a GPU, and
that a builder can be made, so that a missing piece is reported before any work
is done. Targets TensorRT 10 and 11: the network is created with no flags (explicit
batch is the only mode in both), and `--fp16` exists only in 10, since 11 builds
strongly typed networks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DecomplexError
from ..files.transaction import Transaction
from ..options import EngineOptions
from .profiles import Profile

INDEX_URL = "https://pypi.nvidia.com"
"""NVIDIA's package index, where TensorRT's pip packages take their libraries from."""

INSTALL_HINT = (
    f"pip install 'tensorrt>=10' 'cuda-bindings>=12' --extra-index-url {INDEX_URL} "
    "(CUDA 13 builds, for an NVIDIA driver 580 or newer; for a CUDA 12 driver, 535 or newer: "
    "'tensorrt-cu12>=10' 'cuda-bindings>=12,<13'); an engine build needs an NVIDIA GPU and driver"
)
MIN_MAJOR = 10


class EngineError(DecomplexError):
    """TensorRT is missing or unusable, or it could not parse, build or run the model."""


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def import_tensorrt():
    """The `tensorrt` module, version 10 or newer.

    Raises:
        EngineError: It is not installed, its libraries do not load, or it is too old.
    """
    try:
        import tensorrt as trt
    except (ImportError, OSError) as e:
        raise EngineError(f"TensorRT is not available ({_first_line(e)}): {INSTALL_HINT}") from None
    if major_version(trt) < MIN_MAJOR:
        raise EngineError(
            f"TensorRT {trt.__version__} is older than {MIN_MAJOR}, the oldest supported: "
            f"{INSTALL_HINT}"
        )
    return trt


def major_version(trt) -> int:
    return int(str(trt.__version__).split(".")[0])


def import_cudart():
    """cuda-bindings' runtime module (`cuda.bindings.runtime`, or `cuda.cudart` before 12.6)."""
    try:
        from cuda.bindings import runtime
    except ImportError:
        try:
            from cuda import cudart as runtime
        except ImportError:
            raise EngineError(f"cuda-bindings is not installed: {INSTALL_HINT}") from None
    return runtime


def _cuda_error(err) -> str:
    return f"{getattr(err, 'name', str(err))} ({int(err)})"


def _cuda(result):
    """Unpacks a cuda-bindings call's (error, value...) tuple, raising on an error."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise EngineError(f"CUDA call failed: {_cuda_error(err)}")
    return rest[0] if len(rest) == 1 else rest


def gpu_count() -> int:
    """How many GPUs CUDA sees.

    Raises:
        EngineError: cuda-bindings is missing, the driver cannot be reached, or there
            is no GPU.
    """
    cudart = import_cudart()
    err, count = cudart.cudaGetDeviceCount()
    if int(err) != 0:
        raise EngineError(
            f"no usable CUDA GPU: cudaGetDeviceCount returned {_cuda_error(err)}; "
            "the engine path needs an NVIDIA GPU and driver"
        )
    if count == 0:
        raise EngineError("no CUDA GPU found; the engine path needs an NVIDIA GPU and driver")
    return int(count)


def _logger(trt):
    """A TensorRT logger that keeps warnings and errors, to put them in our errors."""

    class Logger(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.messages: list[str] = []

        def log(self, severity, msg):
            if severity <= trt.ILogger.Severity.WARNING:
                self.messages.append(str(msg).strip())

        def errors(self) -> str:
            return "; ".join(self.messages[-3:]) or "no message from TensorRT"

    return Logger()


@dataclass
class Toolkit:
    """What preflight found: the module, a logger and a builder."""

    trt: object
    logger: object
    builder: object

    @property
    def version(self) -> str:
        return str(self.trt.__version__)


def preflight(fp16: bool = False) -> Toolkit:
    """Checks that an engine can be built here, before any work is done.

    In order: `import tensorrt`, `cudaGetDeviceCount`, `trt.Builder`. Each failure
    is one line that says what is missing and how to get it.

    Raises:
        EngineError: The first check that failed; or `fp16` on TensorRT 11, which
            has no FP16 builder flag.
    """
    trt = import_tensorrt()
    gpu_count()
    logger = _logger(trt)
    try:
        builder = trt.Builder(logger)
    except TypeError:  # the bindings raise on the null builder a failed CUDA init gives
        builder = None
    if builder is None:
        raise EngineError(
            f"TensorRT {trt.__version__} could not create a builder ({logger.errors()}): "
            "the NVIDIA driver may be missing, or too old for this TensorRT"
        )
    if fp16 and (major_version(trt) >= 11 or not hasattr(trt.BuilderFlag, "FP16")):
        raise EngineError(
            f"--fp16 needs TensorRT 10; TensorRT {trt.__version__} builds strongly typed "
            "networks, so convert the model's weights and inputs to float16 instead"
        )
    return Toolkit(trt, logger, builder)


@dataclass
class EngineResult:
    """A built engine: where, its size, and how long the build took."""

    plan: Path
    bytes: int
    seconds: float
    version: str


def parser_errors(parser) -> EngineError:
    """One error for everything the ONNX parser reported, naming each node and op."""
    errors = [parser.get_error(i) for i in range(parser.num_errors)]
    parts = []
    for e in errors:
        where = f"node '{e.node_name()}' ({e.node_operator()}): " if e.node_name() else ""
        parts.append(f"{where}{e.desc()}")
    first = errors[0] if errors else None
    return EngineError(
        f"TensorRT's ONNX parser rejected the model: {'; '.join(parts) or 'no error given'}",
        node=(first.node_name() or None) if first else None,
        op_type=(first.node_operator() or None) if first else None,
    )


def build_engine(
    onnx_path: str | Path,
    options: EngineOptions,
    profile: Profile,
    toolkit: Toolkit,
    transaction: Transaction | None = None,
) -> EngineResult:
    """Parses the model from its path (so external weights resolve), builds, and
    writes the plan and the timing cache atomically: a failed build leaves no plan
    file. With `transaction`, both are staged in it instead (the result's plan is then
    the staged file, which `run_engine` can load), and written when it commits.

    Raises:
        EngineError: The parser rejected the model, or the build failed.
    """
    trt, builder, logger = toolkit.trt, toolkit.builder, toolkit.logger
    start = time.perf_counter()
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        raise parser_errors(parser)
    config = builder.create_builder_config()
    for pool, size in options.pool_limit.items():
        config.set_memory_pool_limit(getattr(trt.MemoryPoolType, pool), size)
    if options.builder_optimization_level is not None:
        config.builder_optimization_level = options.builder_optimization_level
    if options.fp16:
        config.set_flag(trt.BuilderFlag.FP16)
    if profile.shapes:
        p = builder.create_optimization_profile()
        for name, (low, mid, high) in profile.shapes.items():
            p.set_shape(name, low, mid, high)
        config.add_optimization_profile(p)
    cache_path = options.timing_cache
    if cache_path is not None:
        data = cache_path.read_bytes() if cache_path.exists() else b""
        config.set_timing_cache(config.create_timing_cache(data), ignore_mismatch=False)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise EngineError(f"TensorRT could not build the engine: {logger.errors()}")
    plan = bytes(serialized)
    with Transaction() as own:
        t = transaction or own
        written = t.write(options.plan, plan)
        if cache_path is not None:
            t.write(cache_path, bytes(config.get_timing_cache().serialize()))
        if transaction is None:
            t.commit()
            written = options.plan
    return EngineResult(written, len(plan), time.perf_counter() - start, toolkit.version)


def run_engine(
    plan: str | Path, feeds: dict[str, np.ndarray], toolkit: Toolkit
) -> dict[str, np.ndarray]:
    """Runs a serialized engine once on `feeds` (packed inputs, by name).

    Returns:
        Every output, by name.

    Raises:
        EngineError: The engine does not load, an output shape depends on the data,
            or a CUDA call fails.
    """
    trt, logger = toolkit.trt, toolkit.logger
    cudart = import_cudart()
    engine = trt.Runtime(logger).deserialize_cuda_engine(Path(plan).read_bytes())
    if engine is None:
        raise EngineError(f"TensorRT could not load the engine: {logger.errors()}")
    context = engine.create_execution_context()
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    is_input = {n: engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT for n in names}
    buffers = DeviceBuffers(cudart)
    outputs = {}
    try:
        for name in (n for n in names if is_input[n]):
            dtype = np.dtype(trt.nptype(engine.get_tensor_dtype(name)))
            host = np.ascontiguousarray(feeds[name], dtype=dtype)
            context.set_input_shape(name, host.shape)
            context.set_tensor_address(name, buffers.upload(host))
        for name in (n for n in names if not is_input[n]):
            shape = tuple(context.get_tensor_shape(name))
            if any(d < 0 for d in shape):
                raise EngineError(f"output '{name}' has a data-dependent shape {shape}")
            host = np.empty(shape, np.dtype(trt.nptype(engine.get_tensor_dtype(name))))
            outputs[name] = (host, buffers.alloc(host.nbytes))
            context.set_tensor_address(name, outputs[name][1])
        stream = _cuda(cudart.cudaStreamCreate())
        try:
            if not context.execute_async_v3(int(stream)):
                raise EngineError(f"TensorRT could not run the engine: {logger.errors()}")
            _cuda(cudart.cudaStreamSynchronize(stream))
        finally:
            _cuda(cudart.cudaStreamDestroy(stream))
        for host, device in outputs.values():
            buffers.download(device, host)
    finally:
        buffers.free()
    return {name: host for name, (host, _) in outputs.items()}


class DeviceBuffers:
    """GPU memory for one run, through cuda-bindings; `free` releases all of it."""

    def __init__(self, cudart):
        self.cudart = cudart
        self.pointers: list[int] = []

    def alloc(self, nbytes: int) -> int:
        pointer = _cuda(self.cudart.cudaMalloc(max(nbytes, 1)))  # 0 bytes gives no pointer
        self.pointers.append(pointer)
        return int(pointer)

    def upload(self, host: np.ndarray) -> int:
        """A device copy of a C-contiguous `host`; its pointer."""
        pointer = self.alloc(host.nbytes)
        kind = self.cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
        _cuda(self.cudart.cudaMemcpy(pointer, host.ctypes.data, host.nbytes, kind))
        return pointer

    def download(self, pointer: int, host: np.ndarray) -> None:
        """Fills the C-contiguous `host` from the device."""
        kind = self.cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost
        _cuda(self.cudart.cudaMemcpy(host.ctypes.data, pointer, host.nbytes, kind))

    def free(self) -> None:
        for pointer in self.pointers:
            self.cudart.cudaFree(pointer)
        self.pointers.clear()
