"""The engine path: the checks made before any work, and real builds where TensorRT is.

Tests marked `gpu` need an NVIDIA GPU (and TensorRT, for engines); elsewhere they
skip and say why. `make test-gpu` runs them alone.
"""

from __future__ import annotations

import enum
import importlib.metadata
import importlib.util
import shlex
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex.trt import engine
from onnx_decomplex.trt.engine import EngineError, EngineOptions, preflight

HAS_TENSORRT = importlib.util.find_spec("tensorrt") is not None


def _gpu_reason() -> str | None:
    """Why engine tests cannot run here, or None when they can."""
    if not HAS_TENSORRT:
        return f"TensorRT is not installed ({engine.INSTALL_HINT})"
    try:
        engine.gpu_count()
    except EngineError as e:
        return str(e)
    return None


needs_engine = pytest.mark.skipif(bool(_gpu_reason()), reason=_gpu_reason() or "")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "onnx_decomplex.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


# --- Without TensorRT: these run everywhere, on the real (missing) library ----------------


@pytest.mark.skipif(HAS_TENSORRT, reason="TensorRT is installed here")
def test_import_error_is_one_clear_line():
    with pytest.raises(EngineError) as e:
        engine.import_tensorrt()
    text = str(e.value)
    assert text.startswith("TensorRT is not available (No module named 'tensorrt')")
    assert engine.INSTALL_HINT in text and "\n" not in text


def test_install_hint_names_the_trt_extra_and_its_index():
    # The hint is typed wherever the tool is installed, from a clone or not: it names the
    # `trt` extra's TensorRT and CUDA requirements, quoted for the shell, and their index.
    extra = [r.split(";")[0].strip() for r in importlib.metadata.requires("onnx-decomplex")
             if r.replace(" ", "").endswith('extra=="trt"')]  # fmt: skip
    wanted = [r for r in extra if r.startswith(("tensorrt", "cuda-bindings"))]
    assert len(wanted) == 2, extra
    hint = engine.INSTALL_HINT
    command = hint.split(" (")[0]
    assert command.startswith("pip install ") and " -e " not in command
    assert sorted(shlex.split(command)[2:4]) == sorted(wanted)
    assert command.endswith(" --extra-index-url https://pypi.nvidia.com")
    assert "NVIDIA GPU and driver" in hint and "'tensorrt-cu12>=10'" in hint


@pytest.mark.skipif(HAS_TENSORRT, reason="TensorRT is installed here")
def test_cli_fails_before_any_work(tmp_path, root):
    out, plan = tmp_path / "out.onnx", tmp_path / "out.plan"
    run = cli(str(root / "fixtures" / "fnet_block.onnx"), str(out), "--build-engine", str(plan),
              "--trt-opt-shapes", "x:2x8x16", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "TensorRT is not available" in run.stderr
    assert "fnet_block.onnx" in run.stderr
    assert not out.exists() and not plan.exists()  # nothing was done
    assert list(tmp_path.iterdir()) == []


def test_engine_options_need_build_engine(tmp_path, root):
    run = cli(str(root / "fixtures" / "fnet_block.onnx"), str(tmp_path / "o.onnx"), "--fp16",
              cwd=tmp_path)  # fmt: skip
    assert run.returncode == 2 and "--fp16: only with --build-engine" in run.stderr


def test_cuda_bindings_report_a_missing_gpu_or_count_it():
    """Real cuda-bindings: on a machine without a driver, cudaGetDeviceCount fails and
    the error says so; with one, it counts at least one GPU."""
    pytest.importorskip("cuda.bindings.runtime", reason="cuda-bindings is not installed")
    try:
        assert engine.gpu_count() >= 1
    except EngineError as e:
        assert "cudaGetDeviceCount returned cudaError" in str(e) or "no CUDA GPU" in str(e)


# --- The order of the checks, with stand-ins for the libraries ----------------------------
# These replace `tensorrt` and cuda-bindings with small fakes that fail in the ways the
# real ones do (a driver error 35; a builder that raises TypeError), to check which
# message comes first. They prove nothing about TensorRT itself.


class _Err(enum.IntEnum):
    cudaSuccess = 0
    cudaErrorInsufficientDriver = 35


def _fake_cuda(monkeypatch, status=_Err.cudaSuccess, count=1):
    runtime = types.ModuleType("cuda.bindings.runtime")
    runtime.cudaGetDeviceCount = lambda: (status, count)
    bindings = types.ModuleType("cuda.bindings")
    bindings.runtime = runtime
    cuda = types.ModuleType("cuda")
    cuda.bindings = bindings
    for name, module in (("cuda", cuda), ("cuda.bindings", bindings),
                         ("cuda.bindings.runtime", runtime)):  # fmt: skip
        monkeypatch.setitem(sys.modules, name, module)


def _fake_tensorrt(monkeypatch, version="10.9.0", builder_fails=False, fp16=True):
    trt = types.ModuleType("tensorrt")
    trt.__version__ = version

    class ILogger:
        class Severity(enum.IntEnum):
            INTERNAL_ERROR, ERROR, WARNING, INFO, VERBOSE = range(5)

        def __init__(self):
            pass

    def builder(logger):
        if builder_fails:
            logger.log(ILogger.Severity.ERROR, "CUDA initialization failure with error: 35")
            raise TypeError("pybind11::init(): factory function returned nullptr")
        return object()

    trt.ILogger, trt.Builder = ILogger, builder
    trt.BuilderFlag = types.SimpleNamespace(**({"FP16": 1} if fp16 else {}))
    monkeypatch.setitem(sys.modules, "tensorrt", trt)


def test_order_gpu_after_import(monkeypatch):
    _fake_tensorrt(monkeypatch)
    _fake_cuda(monkeypatch, _Err.cudaErrorInsufficientDriver, 0)
    with pytest.raises(EngineError, match=r"cudaErrorInsufficientDriver \(35\)"):
        preflight()


def test_order_no_device(monkeypatch):
    _fake_tensorrt(monkeypatch)
    _fake_cuda(monkeypatch, count=0)
    with pytest.raises(EngineError, match="no CUDA GPU found"):
        preflight()


def test_order_builder_after_gpu(monkeypatch):
    _fake_tensorrt(monkeypatch, builder_fails=True)
    _fake_cuda(monkeypatch)
    with pytest.raises(EngineError) as e:
        preflight()
    assert "could not create a builder (CUDA initialization failure with error: 35)" in str(e.value)


def test_fp16_fails_clearly_on_tensorrt_11(monkeypatch):
    _fake_tensorrt(monkeypatch, version="11.0.0", fp16=False)
    _fake_cuda(monkeypatch)
    assert preflight().version == "11.0.0"
    with pytest.raises(EngineError, match="--fp16 needs TensorRT 10"):
        preflight(fp16=True)
    _fake_tensorrt(monkeypatch, version="10.9.0")
    assert preflight(fp16=True).version == "10.9.0"


def test_too_old(monkeypatch):
    _fake_tensorrt(monkeypatch, version="8.6.1")
    with pytest.raises(EngineError, match="older than 10"):
        preflight()


def test_parser_errors_name_nodes_and_ops():
    class E:
        def __init__(self, node, op, desc):
            self.node_name, self.node_operator, self.desc = (
                (lambda: node),
                (lambda: op),
                (lambda: desc),
            )

    parser = types.SimpleNamespace(
        num_errors=2,
        get_error=[
            E("dft_0", "DFT", "No importer registered for op: DFT"),
            E("", "", "Failed to parse"),
        ].__getitem__,  # fmt: skip
    )
    error = engine.parser_errors(parser)
    assert (error.node, error.op_type) == ("dft_0", "DFT")
    assert str(error) == (
        "node 'dft_0' (DFT): TensorRT's ONNX parser rejected the model: node 'dft_0' (DFT): "
        "No importer registered for op: DFT; Failed to parse"
    )


# --- On a GPU -----------------------------------------------------------------------------


@pytest.mark.gpu
def test_device_buffers_round_trip():
    """The buffers engines run on: upload, download, free (cuda-bindings, no TensorRT)."""
    runtime = pytest.importorskip("cuda.bindings.runtime", reason="cuda-bindings is not installed")
    try:
        engine.gpu_count()
    except EngineError as e:
        pytest.skip(str(e))
    buffers = engine.DeviceBuffers(runtime)
    host = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    back = np.empty_like(host)
    try:
        buffers.download(buffers.upload(host), back)
        empty = np.empty((0, 2), np.float32)
        buffers.download(buffers.upload(empty), np.empty_like(empty))
    finally:
        buffers.free()
    np.testing.assert_array_equal(back, host)
    assert buffers.pointers == []


@pytest.mark.gpu
@needs_engine
def test_build_and_run_engine(tmp_path, root):
    out, plan, cache = tmp_path / "fnet.onnx", tmp_path / "fnet.plan", tmp_path / "fnet.cache"
    run = cli(str(root / "fixtures" / "fnet_block.onnx"), str(out), "--build-engine", str(plan),
              "--trt-opt-shapes", "x:2x8x16", "--timing-cache", str(cache),
              "--pool-limit", "workspace:1G", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert plan.stat().st_size > 0 and cache.stat().st_size > 0
    assert run.stdout.count("PASSED") == 2  # onnxruntime, then the engine
    assert "TensorRT" in run.stdout


@pytest.mark.gpu
@needs_engine
def test_parser_error_leaves_no_plan(tmp_path, root):
    from onnx_decomplex.pipeline import convert_file
    from onnx_decomplex.trt.engine import EngineOptions, build_engine
    from onnx_decomplex.trt.profiles import Profile

    out, plan = tmp_path / "dft.onnx", tmp_path / "dft.plan"
    convert_file(root / "fixtures" / "fnet_block.onnx", out)  # DFT left in: no lowering
    with pytest.raises(EngineError) as e:
        build_engine(out, EngineOptions(plan=plan), Profile(), preflight())
    assert e.value.op_type == "DFT"
    assert not plan.exists()


@pytest.mark.parametrize(
    "where, message",
    [
        ("in", "the input is never overwritten"),
        ("out", "the engine plan is the output too"),
        ("folder", "the output folder"),
    ],
)
def test_bad_plan_paths_are_refused_first(tmp_path, root, where, message):
    """Refused before the TensorRT checks, so on any machine; nothing is written."""
    src = tmp_path / "m.onnx"
    src.write_bytes((root / "fixtures" / "fnet_block.onnx").read_bytes())
    out = tmp_path / "out.onnx"
    plan = {"in": src, "out": out, "folder": tmp_path / "missing" / "m.plan"}[where]
    run = cli(str(src), str(out), "--build-engine", str(plan), cwd=tmp_path)
    assert run.returncode == 1 and run.stderr.count("\n") == 1
    assert message in run.stderr and "TensorRT is not available" not in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


def test_a_model_with_nothing_to_rewrite_is_still_checked_against_its_engine(tmp_path, monkeypatch):
    """The engine's outputs are compared with the reference even when the model held
    no complex value (TensorRT itself stood in for: this checks the comparison)."""
    import onnx_decomplex.pipeline as pipeline
    from onnx_decomplex.passes import engine, profile
    from onnx_decomplex.trt.engine import EngineResult

    class Toolkit:
        version = "stand-in"

    plan = tmp_path / "m.plan"
    monkeypatch.setattr(profile, "preflight", lambda fp16=False: Toolkit())
    monkeypatch.setattr(engine, "build_engine",
                        lambda dst, options, profile, toolkit, transaction:
                        EngineResult(transaction.write(options.plan, b"plan"), 4, 0.0, "stand-in"))  # fmt: skip
    monkeypatch.setattr(engine, "run_engine", lambda p, feeds, toolkit: {"y": np.abs(feeds["x"])})
    src = tmp_path / "m.onnx"
    model = make_model([helper.make_node("Abs", ["x"], ["y"])], [vi("x", np.float32, [2, 3])],
                       [vi("y", np.float32, [2, 3])])  # fmt: skip
    onnx.save(model, src)
    result = pipeline.convert_file(src, tmp_path / "o.onnx", engine=EngineOptions(plan=plan))
    assert not result.report.changed
    assert (
        result.engine_validation.passed and result.engine_validation.runtime == "TensorRT stand-in"
    )
    assert result.engine.plan == plan and plan.read_bytes() == b"plan"  # written once it passed


# --- EngineSession: complex arrays in and out of an engine -------------------------------


@pytest.mark.skipif(HAS_TENSORRT, reason="TensorRT is installed here")
def test_engine_session_says_what_is_missing(root):
    from onnx_decomplex.trt.runner import EngineSession

    with pytest.raises(EngineError, match="TensorRT is not available"):
        EngineSession("m.plan", root / "fixtures" / "fnet_block.onnx")


def test_engine_session_packs_and_unpacks_by_the_contract(tmp_path, monkeypatch):
    """The packing around the engine (TensorRT itself stood in for by numpy on the
    packed arrays: this checks the contract's use, not an engine)."""
    from onnx_decomplex import decomplex
    from onnx_decomplex.trt import runner

    model = make_model([helper.make_node("Mul", ["x", "x"], ["y"])],
                       [vi("x", np.complex128, [3])], [vi("y", np.complex128, [3])])  # fmt: skip
    out, report = decomplex(model, target="tensorrt")  # narrowed: float32 in the engine
    path = tmp_path / "out.onnx"
    onnx.save(out, path)

    def run_engine(plan, feeds, toolkit):
        x = feeds["x"]
        assert x.dtype == np.float32 and x.shape == (3, 2)
        re, im = x[..., 0], x[..., 1]
        return {"y": np.stack([re * re - im * im, 2 * re * im], -1)}

    monkeypatch.setattr(runner, "preflight", lambda: None)
    monkeypatch.setattr(runner, "run_engine", run_engine)
    z = np.array([1 + 2j, -0.5j, 3], np.complex128)
    (y,) = runner.EngineSession(tmp_path / "m.plan", path).run(None, {"x": z})
    assert y.dtype == np.complex128
    np.testing.assert_allclose(y, z * z, rtol=1e-6)


@pytest.mark.gpu
@needs_engine
def test_engine_session_runs_a_built_engine(tmp_path, root):
    from onnx_decomplex.reference import evaluator
    from onnx_decomplex.trt.runner import EngineSession
    from onnx_decomplex.validate import random_inputs

    src = root / "fixtures" / "complex_io.onnx"  # z: complex64[batch, 8, 6] in and out
    out, plan = tmp_path / "io.onnx", tmp_path / "io.plan"
    run = cli(str(src), str(out), "--build-engine", str(plan), "--trt-opt-shapes", "z:2x8x6",
              cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    model = onnx.load(src)
    feeds = random_inputs(model, {"z": (2, 8, 6)}, seed=1, edges=False)
    feeds["z"] = np.asfortranarray(feeds["z"])  # any layout
    got = EngineSession(plan, out).run(None, feeds)
    expected = evaluator(model).run(None, {"z": np.ascontiguousarray(feeds["z"])})
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-3)
