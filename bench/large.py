"""The rewrite's own cost on a large model, against a plain onnx.load + onnx.save.

The model is generated, not committed: a chain of real MatMuls holding most of the
bytes (1 GiB by default), then a complex table (32 MiB) that multiplies the result,
all stored as external data. Each side runs in its own process, so that its peak
memory (the process's max RSS) is its own, and both sides pay the same start-up.

The tool runs with --no-validate: validation runs the model in the reference
evaluator, which needs every weight in memory, and measures something else.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SAVE = """
import sys, onnx
model = onnx.load(sys.argv[1])
onnx.save(model, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True,
          location=sys.argv[2].rsplit("/", 1)[-1] + ".data")
"""

# A child's ru_maxrss starts from its parent's, which here holds the generated model;
# VmHWM is the peak of the child's own address space, reset at exec.
PEAK = """
import atexit, runpy, sys
def report():
    with open("/proc/self/status") as f:
        peak = next(line.split()[1] for line in f if line.startswith("VmHWM"))
    with open(sys.orig_argv[-1], "w") as f:
        f.write(peak)
atexit.register(report)
args = sys.argv[1:-1]
if args[0] == "-m":
    sys.argv = args[1:]
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = ["-c", *args[2:]]
    exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
"""


def make_large(folder: Path, weights_mib: int = 1024, table_mib: int = 32) -> Path:
    """Writes large.onnx and large.onnx.data into `folder`; returns the model's path."""
    side = 2048 if weights_mib >= 64 else 256
    layers = max(1, weights_mib * 2**20 // (side * side * 4))
    rows = max(1, table_mib * 2**20 // (side * 8))
    rng = np.random.default_rng(0)
    inits, nodes, prev = [], [], "x"
    for i in range(layers):
        w = rng.standard_normal((side, side), dtype=np.float32) / np.float32(np.sqrt(side))
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"]))
        prev = f"h{i}"
    angle = rng.uniform(-np.pi, np.pi, (rows, side))
    inits.append(numpy_helper.from_array(np.exp(1j * angle).astype(np.complex64), "table"))
    inits.append(numpy_helper.from_array(np.array([0], np.int64), "axis0"))
    nodes += [
        helper.make_node("Cast", [prev], ["hc"], to=TensorProto.COMPLEX64),
        helper.make_node("Mul", ["hc", "table"], ["spread"]),
        helper.make_node("ReduceSum", ["spread", "axis0"], ["y"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "large",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, side])],
        [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [side])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    path = folder / "large.onnx"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location="large.onnx.data", size_threshold=1024)  # fmt: skip
    return path


def _measured(argv: list[str], folder: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of one child process running `argv`."""
    peak = folder / "peak.txt"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PEAK, *argv, str(peak)], capture_output=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:2]} failed:\n{proc.stderr.decode()}")
    return wall, int(peak.read_text()) / 1024  # KiB


def measure(folder: Path, weights_mib: int = 1024, table_mib: int = 32, repeats: int = 3) -> dict:
    """Times and peak memory of the rewrite and of load + save, on a generated model.

    Each side runs `repeats` times, alternately; the medians are reported.
    """
    folder.mkdir(parents=True, exist_ok=True)
    model = make_large(folder, weights_mib, table_mib)
    size = sum(f.stat().st_size for f in folder.iterdir())
    tool = [
        "-m",
        "onnx_decomplex.cli.main",
        str(model),
        str(folder / "tool.onnx"),
        "--no-validate",
        "-q",
    ]
    base = ["-c", SAVE, str(model), str(folder / "base.onnx")]
    samples: dict[str, list] = {"tool": [], "base": []}
    for _ in range(repeats):
        samples["tool"].append(_measured(tool, folder))
        samples["base"].append(_measured(base, folder))
    (t_wall, t_rss), (b_wall, b_rss) = (
        tuple(float(np.median([s[k] for s in samples[side]])) for k in (0, 1))
        for side in ("tool", "base")
    )
    _check_written(folder / "tool.onnx")
    return {"model_mib": size / 2**20, "tool_s": t_wall, "tool_mib": t_rss,
            "base_s": b_wall, "base_mib": b_rss}  # fmt: skip


def _check_written(path: Path) -> None:
    """The rewrite holds no complex type and keeps its weights in external data."""
    model = onnx.load(str(path), load_external_data=False)
    assert not any(t.data_type == TensorProto.COMPLEX64 for t in model.graph.initializer)
    assert (path.parent / f"{path.name}.data").stat().st_size > 0
