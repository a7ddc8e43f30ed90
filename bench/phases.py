"""Where the rewrite of one model spends its time: every whole-graph step counted,
timed and traced to the line of ours that asked for it.

    python bench/phases.py MODEL.onnx [--cprofile OUT.prof] [--no-gc] [--memory]

runs what `onnx-decomplex MODEL OUT --no-validate` runs (`convert_file` without
validation), once, in this process, with the library's own functions wrapped by
timers. Two tables come out:

- steps: graphsurgeon import, toposort, cleanup and export, onnx shape inference
  (whole model and node by node), the checker, serialization, and folding by the
  reference evaluator; each by the call site in onnx_decomplex that made it (the
  innermost frame of ours on the stack), with its count and seconds. A step is
  counted once however deep it recurses (a toposort of subgraphs is one toposort).
- stages: the pipeline's passes, inclusive of the steps above.

Wall seconds, not a profiler's: the timers cost microseconds a call, and only
node-by-node inference is called often enough for that to show.

With --memory, every wrapped call also prints, as it enters and as it returns, the
process's resident memory and the peak it reached inside the call (the kernel's
high-water mark, reset at each entry through /proc/self/clear_refs), with the
arrays that numpy_helper decodes and the tensors external data loads: a trace that
still says where it was when a capped run dies.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from pathlib import Path

import onnx_graphsurgeon as gs

OURS = ("onnx_decomplex/", "/cli/")

# (table, name) -> (call site -> [count, seconds])
TIMES: dict[tuple[str, str], dict[str, list]] = defaultdict(lambda: defaultdict(lambda: [0, 0.0]))
_DEPTH: dict[str, int] = defaultdict(int)
MEMORY = False
_PEAKS: list[float] = []  # the peak so far of each call being traced, outermost first
_BEFORE: list[float] = []  # the memory at each one's entry
QUIET = {"numpy_helper.to_array", "numpy_helper.from_array", "helper.make_tensor",
         "load_external_data", "infer_node_outputs (one node)", "rewrite._fold (ReferenceEvaluator)"}  # fmt: skip
"""Called once per tensor: traced only where one grew the memory by QUIET_MIB or more."""
QUIET_MIB = 16


def _status(key: str) -> float:
    """A /proc/self/status size (VmRSS, VmHWM) in MiB."""
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith(key))
    return int(line.split()[1]) / 1024


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _enter(name: str, site: str) -> None:
    if _PEAKS:  # what the caller reached so far, before the reset loses it
        _PEAKS[-1] = max(_PEAKS[-1], _status("VmHWM"))
    _reset_peak()
    rss = _status("VmRSS")
    _PEAKS.append(rss)
    _BEFORE.append(rss)
    if name not in QUIET:
        print(f"{'  ' * (len(_PEAKS) - 1)}> {name} {site} rss {rss:.0f} MiB", flush=True)


def _leave(name: str, seconds: float, site: str) -> None:
    peak = max(_PEAKS.pop(), _status("VmHWM"))
    before = _BEFORE.pop()
    if _PEAKS:
        _PEAKS[-1] = max(_PEAKS[-1], peak)
    _reset_peak()
    rss = _status("VmRSS")
    if name in QUIET and peak - before < QUIET_MIB:
        return
    print(f"{'  ' * len(_PEAKS)}< {name} {site if name in QUIET else ''}rss {rss:.0f} MiB, "
          f"peak {peak:.0f} MiB, {seconds:.2f} s", flush=True)  # fmt: skip


def _site() -> str:
    """The innermost frame of ours on the stack, as file:line (function)."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        path = frame.filename.replace("\\", "/")
        if any(part in path for part in OURS):
            short = path[path.rindex("onnx_decomplex/") :] if "onnx_decomplex/" in path else path
            return f"{short}:{frame.lineno} ({frame.name})"
    return "?"


def _timed(table: str, name: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _DEPTH[name]:  # a step inside itself: counted once, at the outermost call
            return fn(*args, **kwargs)
        site = _site() + " " if table == "step" else ""
        if MEMORY:
            _enter(name, site)
        _DEPTH[name] += 1
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _DEPTH[name] -= 1
            entry = TIMES[(table, name)][site]
            entry[0] += 1
            entry[1] += time.perf_counter() - start
            if MEMORY:
                _leave(name, time.perf_counter() - start, site)

    return wrapper


def _patch(owner, attr: str, table: str, name: str | None = None) -> None:
    setattr(owner, attr, _timed(table, name or attr, getattr(owner, attr)))


def instrument(memory: bool = False) -> None:
    """Wraps the whole-graph steps and the pipeline's passes with timers (and, with
    `memory`, the memory trace)."""
    import onnx.external_data_helper as external
    import onnx.numpy_helper

    import onnx_decomplex.files.load as load
    import onnx_decomplex.files.save as save
    import onnx_decomplex.files.stream as stream
    import onnx_decomplex.normalize as normalize
    import onnx_decomplex.pipeline as pipeline
    import onnx_decomplex.rewrite as rewrite
    from onnx_decomplex.passes import analyze

    global MEMORY
    MEMORY = memory
    if memory:
        # Called for every constant: only worth a line where the arrays are large.
        _patch(onnx.numpy_helper, "to_array", "step", "numpy_helper.to_array")
        _patch(onnx.numpy_helper, "from_array", "step", "numpy_helper.from_array")
        _patch(onnx.helper, "make_tensor", "step", "helper.make_tensor")
        for module in (external, load, analyze):
            _patch(module, "load_external_data_for_tensor", "step", "load_external_data")
        _patch(save, "_write_data", "stage", "save._write_data")
        _patch(stream.Streamed, "parts", "step", "stream: parts split on disk")

    _patch(gs, "import_onnx", "step", "gs.import_onnx")
    _patch(gs, "export_onnx", "step", "gs.export_onnx")
    _patch(gs.Graph, "toposort", "step", "Graph.toposort")
    _patch(gs.Graph, "cleanup", "step", "Graph.cleanup")
    _patch(onnx.shape_inference, "infer_shapes", "step", "infer_shapes (whole model)")
    _patch(onnx.shape_inference, "infer_node_outputs", "step", "infer_node_outputs (one node)")
    _patch(onnx.checker, "check_model", "step", "checker.check_model")
    _patch(onnx, "save_model", "step", "onnx.save_model")
    _patch(onnx, "load", "step", "onnx.load")
    _patch(rewrite, "_fold", "step", "rewrite._fold (ReferenceEvaluator)")
    pipeline.PASSES = tuple(
        dataclasses.replace(p, run=_timed("stage", f"pass {p.name}", p.run))
        for p in pipeline.PASSES
    )
    _patch(normalize.Walk, "__init__", "stage", "normalize: one reading (Walk)")
    _patch(normalize.Walk, "export", "stage", "normalize: export")


def run(model: Path, out: Path, profile: Path | None = None) -> float:
    """Converts `model` to `out` as `--no-validate` does; returns the wall seconds."""
    from onnx_decomplex.pipeline import convert_file

    profiler = None
    if profile is not None:
        import cProfile

        profiler = cProfile.Profile()
    start = time.perf_counter()
    with profiler or contextlib.nullcontext():
        convert_file(model, out, validate=False)
    wall = time.perf_counter() - start
    if profiler is not None:
        profiler.dump_stats(str(profile))
    return wall


def print_tables(wall: float, out=sys.stdout) -> None:
    print(f"convert_file, no validation: {wall:.2f} s wall", file=out)
    for table, title in (("step", "steps, by call site"), ("stage", "pipeline passes")):
        print(f"\n{title}:", file=out)
        rows = []
        for (t, name), sites in TIMES.items():
            if t != table:
                continue
            total_n = sum(n for n, _ in sites.values())
            total_s = sum(s for _, s in sites.values())
            rows.append((total_s, name, total_n, sites))
        for total_s, name, total_n, sites in sorted(rows, reverse=True):
            print(f"  {total_s:7.2f} s  {total_n:6d} x  {name}", file=out)
            if table == "step":
                for site, (n, s) in sorted(sites.items(), key=lambda kv: -kv[1][1]):
                    print(f"      {s:7.2f} s  {n:6d} x  {site}", file=out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", type=Path)
    parser.add_argument("--cprofile", type=Path, help="also write a cProfile dump here")
    parser.add_argument(
        "--no-gc", action="store_true", help="with Python's cyclic garbage collector off"
    )
    parser.add_argument(
        "--memory", action="store_true", help="print a memory trace of every step as it runs"
    )
    args = parser.parse_args()
    if args.no_gc:
        import gc

        gc.disable()
    instrument(args.memory)
    with tempfile.TemporaryDirectory(prefix="phases-") as folder:
        wall = run(args.model, Path(folder) / "out.onnx", args.cprofile)
    print_tables(wall)


if __name__ == "__main__":
    main()
