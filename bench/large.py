"""The rewrite's own cost on a large model, against a plain onnx.load + onnx.save.

The model is generated, not committed: a chain of real MatMuls holding most of the
bytes (1 GiB by default), then a complex table (32 MiB) that multiplies the result,
all stored as external data. Each side runs in its own process, so that its peak
memory (the process's max RSS) is its own, and both sides pay the same start-up.

The tool runs with --no-validate: validation runs the model in the reference
evaluator, which needs every weight in memory, and measures something else.
"""

from __future__ import annotations

import contextlib
import hashlib
import resource
import signal
import subprocess
import sys
import tempfile
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

CLI = [sys.executable, "-m", "onnx_decomplex.cli.main"]

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


MODELS = {"1.8": (0.8, 1.0), "2.1": (1.1, 1.0), "3.2": (2.2, 1.0)}
"""Named sizes, in GiB: (complex64 table used in the Mul, real weights never touched).
In 3.2 the table alone is past protobuf's 2 GiB."""

CHUNK = 1 << 24  # bytes generated at a time: generating a model of any size takes 16 MiB


def _write_external(data, name: str, dims: list[int], elem: int, fill) -> onnx.TensorProto:
    """Writes a tensor's bytes to the open file `data`, CHUNK at a time, from `fill(n)`
    (n values of its numpy type); returns the initializer that points at them."""
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    offset, left = data.tell(), int(np.prod(dims))
    while left:
        n = min(left, CHUNK // dtype.itemsize)
        data.write(np.ascontiguousarray(fill(n), dtype).tobytes())
        left -= n
    tensor = onnx.TensorProto(name=name, dims=dims, data_type=elem)
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", Path(data.name).name), ("offset", offset),
                       ("length", data.tell() - offset)):  # fmt: skip
        entry = tensor.external_data.add()
        entry.key, entry.value = key, str(value)
    return tensor


def make_large(folder: Path, weights_mib: float = 1024, table_mib: float = 32) -> Path:
    """Writes large.onnx and large.onnx.data into `folder`; returns the model's path.

    A chain of real MatMuls of [side, side] weights (`weights_mib` in all), then a
    complex64 table [rows, side] (`table_mib`) that multiplies the result cast to
    complex, summed over rows: y = sum_r Cast(x W0 W1 ...) * table[r]. The bytes are
    written as they are generated, so that a model of many GiB takes little memory.
    """
    side = 2048 if weights_mib >= 64 else 256
    layers = max(1, round(weights_mib * 2**20 / (side * side * 4)))
    rows = max(1, round(table_mib * 2**20 / (side * 8)))
    rng = np.random.default_rng(0)
    scale = np.float32(1 / np.sqrt(side))

    def weight(n):
        return rng.standard_normal(n, dtype=np.float32) * scale

    def phase(n):
        return np.exp(1j * rng.uniform(-np.pi, np.pi, n))

    path = folder / "large.onnx"
    inits, nodes, prev = [], [], "x"
    with open(folder / "large.onnx.data", "wb") as data:
        for i in range(layers):
            inits.append(_write_external(data, f"w{i}", [side, side], TensorProto.FLOAT, weight))
            nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"]))
            prev = f"h{i}"
        inits.append(_write_external(data, "table", [rows, side], TensorProto.COMPLEX64, phase))
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
    onnx.save(model, str(path))
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


def _cap(limit: int):
    """A preexec_fn that caps the child's address space at `limit` bytes, so that a
    blow-up fails fast with a MemoryError instead of swapping."""

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_capped(argv: list[str], cap_bytes: int | None = None, timeout: float = 900) -> dict:
    """Runs `argv` in a child capped at `cap_bytes` of address space.

    Returns its wall seconds, peak RSS in MiB (the kernel's VmHWM, read while it
    runs: a child killed at the cap still has one), exit status, and the tail of
    its output when it failed.
    """
    start = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                preexec_fn=_cap(cap_bytes) if cap_bytes else None)  # fmt: skip
        peak = 0
        status = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            with contextlib.suppress(OSError, StopIteration):
                text = status.read_text()
                line = next(x for x in text.splitlines() if x.startswith("VmHWM"))
                peak = max(peak, int(line.split()[1]))
            if time.perf_counter() - start > timeout:
                proc.kill()
            time.sleep(0.05)
        wall = time.perf_counter() - start
        log.seek(0)
        tail = log.read().decode(errors="replace").strip().splitlines()[-30:]
    rc = proc.returncode
    if rc and rc < 0:
        tail.insert(0, f"killed by {signal.Signals(-rc).name}")
    return {"seconds": wall, "peak_mib": peak / 1024, "rc": rc,
            "error": "\n".join(tail) if rc else ""}  # fmt: skip


def digest(paths: list[Path]) -> str:
    """A hash of the files' bytes, read CHUNK at a time."""
    h = hashlib.blake2b(digest_size=16)
    for p in paths:
        with open(p, "rb") as f:
            while block := f.read(CHUNK):
                h.update(block)
    return h.hexdigest()


def check_table(src: Path, out: Path) -> None:
    """The rewritten model holds no complex type, and holds the input's complex64
    table, packed ([rows, side, 2]) or as its real and imaginary parts (two [rows,
    side]), compared with it slice by slice, CHUNK at a time."""
    model = onnx.load(str(out), load_external_data=False)
    left = find_complex_types(model)
    assert not left, f"complex types remain: {left}"
    source = onnx.load(str(src), load_external_data=False)
    table = next(t for t in source.graph.initializer if t.name == "table")
    rows, side = table.dims
    packed = [t for t in model.graph.initializer if list(t.dims) == [rows, side, 2]]
    parts = [t for t in model.graph.initializer if list(t.dims) == [rows, side]]
    assert packed or len(parts) == 2, "the table is neither packed nor in two parts"
    step = max(1, CHUNK // (side * 8))
    for start in range(0, rows, step):
        n = min(step, rows - start)
        z = _rows(table, src.parent, start, n, np.complex64)
        if packed:
            got = _rows(packed[0], out.parent, start, n, np.float32, 2)
            assert np.array_equal(got.view(np.complex64)[..., 0], z), f"rows from {start} differ"
            continue
        got = [_rows(t, out.parent, start, n, np.float32) for t in parts]
        same = {(a, b) for a in range(2) for b in range(2)
                if np.array_equal(got[a], (z.real, z.imag)[b])}  # fmt: skip
        assert {(0, 0), (1, 1)} <= same or {(0, 1), (1, 0)} <= same, f"rows from {start} differ"


def _rows(t: onnx.TensorProto, folder: Path, start: int, n: int, dtype, last: int = 1):
    """Rows [start, start + n) of a 2-D (or, with `last`, 3-D) external tensor."""
    path, offset, _ = _extent(t, folder)
    row = t.dims[1] * last * np.dtype(dtype).itemsize
    with open(path, "rb") as f:
        f.seek(offset + start * row)
        flat = np.frombuffer(f.read(n * row), dtype)
    return flat.reshape(n, t.dims[1], last) if last > 1 else flat.reshape(n, t.dims[1])


def _extent(t: onnx.TensorProto, folder: Path) -> tuple[Path, int, int]:
    info = {e.key: e.value for e in t.external_data}
    offset = int(info.get("offset", 0))
    path = folder / info["location"]
    return path, offset, int(info.get("length", path.stat().st_size - offset))


def find_complex_types(model: onnx.ModelProto) -> list[str]:
    found = [t.name for t in model.graph.initializer if t.data_type == TensorProto.COMPLEX64]
    values = [*model.graph.input, *model.graph.output, *model.graph.value_info]
    found += [v.name for v in values if v.type.tensor_type.elem_type == TensorProto.COMPLEX64]
    return found


def measure_capped(folder: Path, size: str, cap_gib: float = 6, repeats: int = 1) -> dict:
    """The tool on a named model size (`MODELS`, or "COMPLEX+REAL" in GiB) under an
    address-space cap, against onnx.load + onnx.save under the same cap.

    Each side runs `repeats` times, alternately, in its own process; the run with
    the median time is reported, with its peak RSS and, when it failed, its error.
    """
    table_gib, weights_gib = MODELS[size] if size in MODELS else map(float, size.split("+"))
    folder.mkdir(parents=True, exist_ok=True)
    model = make_large(folder, weights_gib * 1024, table_gib * 1024)
    inputs = [model, folder / "large.onnx.data"]
    before = digest(inputs)
    cap = int(cap_gib * 2**30)
    out = folder / "out" / "tool.onnx"
    out.parent.mkdir(exist_ok=True)
    # faulthandler: a native crash at the cap still says where it was.
    tool = [
        sys.executable,
        "-X",
        "faulthandler",
        *CLI[1:],
        str(model),
        str(out),
        "--no-validate",
        "-q",
    ]
    base = [sys.executable, "-c", SAVE, str(model), str(folder / "out" / "base.onnx")]
    runs: dict[str, list] = {"tool": [], "base": []}
    for _ in range(repeats):
        runs["tool"].append(run_capped(tool, cap))
        runs["base"].append(run_capped(base, cap))
    result = {"size": size, "model_mib": sum(p.stat().st_size for p in inputs) / 2**20,
              "table_gib": table_gib, "weights_gib": weights_gib, "cap_gib": cap_gib}  # fmt: skip
    for side, samples in runs.items():
        samples.sort(key=lambda r: r["seconds"])
        result[side] = samples[len(samples) // 2]
    result["input_unchanged"] = digest(inputs) == before
    if result["tool"]["rc"] == 0:
        check_table(model, out)
    for f in (folder / "out").iterdir():
        f.unlink()
    return result


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


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="+", help=f"{', '.join(MODELS)} or COMPLEX+REAL in GiB")
    parser.add_argument("--cap", type=float, default=6, help="address-space cap, GiB")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "bench-large")
    args = parser.parse_args()
    for size in args.sizes:
        folder = args.folder / f"model-{size}"
        try:
            print(json.dumps(measure_capped(folder, size, args.cap, args.repeats)), flush=True)
        finally:
            for f in folder.glob("large.onnx*"):
                f.unlink()
