"""Time each whole model of the corpus in its own framework against its rewrite in
onnxruntime, one thread on both sides.

For each NAME.onnx in fixtures/models/<exporter>/, this rebuilds the function or module
that the folder's make_models.py exported, with the same weights, and compiles it:

- jax2onnx: `jax.jit` on XLA's CPU backend, with XLA_FLAGS
  "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1";
- tf2onnx: `tf.function` with make_models' input signature (graph mode, no XLA), one
  intra-op and one inter-op thread;
- torch: `torch.compile` (default mode, inductor) with torch.set_num_threads(1), or
  eager under `--torch-eager`; under torch.inference_mode in both.

It checks the framework's outputs on NAME.npz against NAME.expected.npz, rewrites the
model with onnx_decomplex for both targets (`onnx` and `onnxruntime`), checks each
rewrite's outputs too (rtol 1e-4, atol 1e-5, as tests/test_models.py), then times the
three interleaved run by run, after a warm-up: the framework call on inputs already
held as its own arrays (JAX waits for the result), and onnxruntime's
InferenceSession.run on inputs already packed (complex arrays as float pairs), one
intra-op and one inter-op thread. The calls run in another order each run, so that
none always follows the same other call (a call of a few microseconds timed always
right after the framework's took up to twice its time). Each result is the median seconds per
call, and each ratio the rewrite's median over the framework's. The process is pinned to one
CPU core, so that no library's thread pool can use another.

Where `floors.py` holds a graph written by hand for the model (the fastest known in
standard ops), it is checked against NAME.expected.npz and timed in the same
interleaving: "over floor" is each rewrite's time over the floor's (default target,
onnxruntime target).

With `--profile`, each rewrite slower than its framework is then run again under
onnxruntime's profiler, and the time its nodes took is summed by node type.

Models marked minimal are the corpus's minimal cases, a few dozen numbers in and out:
their times are per-call overhead, not arithmetic.

Runs in an exporter's environment, with onnx_decomplex installed there
(`pip install -e '.[cpu]'`), never under the test suite:

    <exporter venv>/bin/python bench/frameworks.py --exporter jax2onnx|tf2onnx|torch
        [--models NAME ...] [--runs N] [--warmup N] [--torch-eager] [--profile]
        [--out DIR]

writes DIR/frameworks-<exporter>.json (default bench/results) and prints a table.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from floors import FLOORS  # noqa: E402
from timing import interleaved_medians, session_options  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "models"
TARGETS = ("onnx", "onnxruntime")
RTOL, ATOL = 1e-4, 1e-5
MINIMAL = {
    "lru_minimal", "fno_modes_minimal", "rope_heads_minimal", "magnitude_mask_minimal",
    "magnitude_mask_batch3", "squares_native", "angle_zeros",
}  # fmt: skip
"""The corpus's minimal cases: a few dozen numbers in and out, so per-call overhead."""

Call = Callable[[], list[np.ndarray]]
"""One compiled call of a model on its inputs, returning its outputs as numpy arrays."""


def pin_to_one_core() -> None:
    """Pins this process to one CPU, and tells XLA to use one thread, before any
    framework starts its thread pools."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")


def make_models(exporter: str):
    """The exporter's make_models.py, imported from its folder."""
    sys.path.insert(0, str(CORPUS / exporter))
    return importlib.import_module("make_models")


def jax_calls(names: list[str], inputs: dict[str, list[np.ndarray]]) -> tuple[dict, str]:
    import jax

    models = make_models("jax2onnx")
    calls = {}
    for name in names:
        jitted = jax.jit(models.CASES[name][0])
        args = [jax.device_put(a) for a in inputs[name]]

        def call(jitted=jitted, args=args) -> list[np.ndarray]:
            out = jax.block_until_ready(jitted(*args))
            return list(out) if isinstance(out, tuple | list) else [out]

        calls[name] = call
    return calls, f"jax {jax.__version__}, jax.jit (XLA CPU)"


def tf_calls(names: list[str], inputs: dict[str, list[np.ndarray]]) -> tuple[dict, str]:
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    models = make_models("tf2onnx")  # builds Keras models: after the thread settings
    calls = {}
    for name in names:
        fn, specs = models.CASES[name]
        function = tf.function(fn, input_signature=specs)
        args = [tf.constant(a) for a in inputs[name]]

        def call(function=function, args=args) -> list[np.ndarray]:
            out = function(*args)
            return list(out) if isinstance(out, tuple | list) else [out]

        calls[name] = call
    return calls, f"tensorflow {tf.__version__}, tf.function (graph, no XLA)"


def torch_calls(
    names: list[str], inputs: dict[str, list[np.ndarray]], eager: bool
) -> tuple[dict, str]:
    import torch

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    models = make_models("torch")
    calls = {}
    for name in names:
        torch.manual_seed(models.SEED)  # as make_torch.export_module builds it
        module = models.MODELS[name][0]().eval()
        run = module if eager else torch.compile(module)
        args = [torch.from_numpy(a.copy()) for a in inputs[name]]

        def call(run=run, args=args) -> list[np.ndarray]:
            with torch.inference_mode():
                out = run(*args)
            return list(out) if isinstance(out, tuple) else [out]

        calls[name] = call
    how = "eager" if eager else "torch.compile (inductor)"
    return calls, f"torch {torch.__version__}, {how}"


def rewrite(path: Path, target: str):
    """The rewrite of `path` for `target`, and its node count by op type."""
    import onnx

    from onnx_decomplex import decomplex

    out, report = decomplex(onnx.load(path), target=target)
    return out.SerializeToString(), dict(sorted(report.ops_after.items()))


def onnx_call(model: bytes, feeds: dict[str, np.ndarray], profile_prefix: str | None = None):
    """The rewrite's session, its outputs on `feeds` by name (complex ones unpacked),
    and a call that runs it on the feeds packed beforehand."""
    from onnx_decomplex import Session
    from onnx_decomplex.runtime import pack_inputs

    session = Session(
        model, sess_options=session_options(1, profile_prefix), providers=["CPUExecutionProvider"]
    )
    names = [o.name for o in session.session.get_outputs()]
    outputs = dict(zip(names, session.run(None, feeds), strict=True))
    packed = pack_inputs(session.contract, feeds)

    def call() -> list[np.ndarray]:
        return session.session.run(None, packed)

    return session, outputs, call


def floor_call(model: bytes, feeds: dict[str, np.ndarray]):
    """A hand-written floor's outputs on `feeds` (its inputs in their order, complex
    ones packed), and a call that runs it on them."""
    import onnxruntime as ort

    from onnx_decomplex.cmath import pack

    session = ort.InferenceSession(model, session_options(1), providers=["CPUExecutionProvider"])
    values = [pack(v) if np.iscomplexobj(v) else v for v in feeds.values()]
    packed = {i.name: v for i, v in zip(session.get_inputs(), values, strict=True)}

    def call() -> list[np.ndarray]:
        return session.run(None, packed)

    return call(), call


def mismatch(outputs: list, expected: dict[str, np.ndarray]) -> dict:
    """The largest absolute difference from the framework's saved outputs, and whether
    every output is within the tolerance."""
    worst, close = 0.0, True
    for got, name in zip(outputs, expected.files, strict=True):
        want = expected[name]
        got = np.asarray(got).reshape(want.shape)
        worst = max(worst, float(np.max(np.abs(got - want), initial=0.0)))
        close = close and bool(np.allclose(got, want, rtol=RTOL, atol=ATOL))
    return {"max_abs_diff": worst, "close": close}


def profile(model: bytes, feeds: dict[str, np.ndarray], warmup: int, runs: int) -> dict:
    """Where a run's time goes, by op type, under onnxruntime's profiler after a warm-up:
    each executed node's median time over `runs` runs, summed by op type. The profiler
    counts whole microseconds and adds its own cost to each node (no node reads under
    2 us), so a node that reads 2 us or less did next to nothing: `floor_nodes` counts
    those. The runs themselves are slowed by the profiler and not kept."""
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as folder:
        session, _, call = onnx_call(model, feeds, str(Path(folder) / "ort"))
        for _ in range(warmup + runs):
            call()
        events = json.loads(Path(session.session.end_profiling()).read_text())
    model_runs = sorted(e["ts"] for e in events if e.get("name") == "model_run")
    since = model_runs[-runs]  # not the check's run in onnx_call, nor the warm-up
    durations: dict[str, list[float]] = defaultdict(list)
    op_type = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= since:
            durations[e["name"]].append(e["dur"])
            op_type[e["name"]] = e["args"]["op_name"]
    medians = {node: float(np.median(us)) for node, us in durations.items()}
    by_type: dict[str, dict] = defaultdict(lambda: {"nodes": 0, "us": 0.0})
    for node, us in medians.items():
        by_type[op_type[node]]["nodes"] += 1
        by_type[op_type[node]]["us"] += us
    node_us = sum(medians.values())
    ops = sorted(by_type.items(), key=lambda item: -item[1]["us"])
    return {
        "runs": runs,
        "nodes": len(medians),
        "floor_nodes": sum(us <= 2 for us in medians.values()),
        "node_us": node_us,
        "ops": {t: {**v, "share": v["us"] / node_us} for t, v in ops},
    }


def measure(exporter: str, names: list[str], args: argparse.Namespace) -> dict:
    folder = CORPUS / exporter
    feeds = {n: dict(np.load(folder / f"{n}.npz")) for n in names}
    inputs = {n: list(feeds[n].values()) for n in names}
    if exporter == "jax2onnx":
        calls, framework = jax_calls(names, inputs)
    elif exporter == "tf2onnx":
        calls, framework = tf_calls(names, inputs)
    else:
        calls, framework = torch_calls(names, inputs, args.torch_eager)
    results = []
    for name in names:
        print(f"{exporter}/{name} ...", flush=True)
        expected = np.load(folder / f"{name}.expected.npz")
        start = time.perf_counter()
        framework_out = calls[name]()  # compiles
        result = {
            "model": name,
            "minimal": name in MINIMAL,
            "framework_compile_s": time.perf_counter() - start,
            "framework_vs_expected": mismatch(framework_out, expected),
            "targets": {},
        }
        timed = [calls[name]]
        models = {}
        for target in TARGETS:
            models[target], ops = rewrite(folder / f"{name}.onnx", target)
            _, outputs, call = onnx_call(models[target], feeds[name])
            in_order = [outputs[n] for n in expected.files]
            result["targets"][target] = {"ops": ops, "vs_expected": mismatch(in_order, expected)}
            timed.append(call)
        floor = FLOORS.get(exporter, {}).get(name)
        if floor is not None:
            graph = floor(make_models(exporter))
            outputs, call = floor_call(graph.SerializeToString(), feeds[name])
            result["floor"] = {
                "nodes": len(graph.graph.node),
                "vs_expected": mismatch(outputs, expected),
            }
            timed.append(call)
        framework_s, *onnx_s = interleaved_medians(timed, args.warmup, args.runs, shuffled=True)
        result["framework_ms"] = framework_s * 1e3
        if floor is not None:
            floor_s = onnx_s.pop()
            result["floor"]["ms"] = floor_s * 1e3
        for target, seconds in zip(TARGETS, onnx_s, strict=True):
            entry = result["targets"][target]
            entry["ms"] = seconds * 1e3
            entry["ratio"] = seconds / framework_s
            if floor is not None:
                entry["vs_floor"] = seconds / floor_s
            if args.profile and entry["ratio"] > 1.0:
                entry["profile"] = profile(models[target], feeds[name], args.warmup, args.runs)
        results.append(result)
    return {"framework": framework, "results": results}


def print_table(exporter: str, measured: dict, runs: int) -> None:
    from rich.console import Console
    from rich.table import Table

    title = (
        f"{exporter}: {measured['framework']} against onnxruntime CPU "
        f"(median of {runs} interleaved runs, 1 thread)"
    )
    table = Table(title=title, title_justify="left")
    columns = ["model", "framework", "onnx", "ratio", "onnxruntime", "ratio", "floor",
               "over floor", "matches"]  # fmt: skip
    for col in columns:
        table.add_column(col, justify="left" if col in ("model", "matches") else "right")
    for r in measured["results"]:
        onnx_t, ort_t = (r["targets"][t] for t in TARGETS)
        floor = r.get("floor")
        checks = [r["framework_vs_expected"], onnx_t["vs_expected"], ort_t["vs_expected"]]
        checks += [floor["vs_expected"]] if floor else []
        matches = "yes" if all(c["close"] for c in checks) else "[red]NO[/]"
        table.add_row(
            r["model"] + (" (minimal)" if r["minimal"] else ""),
            f"{r['framework_ms']:.3f} ms",
            f"{onnx_t['ms']:.3f} ms",
            f"{onnx_t['ratio']:.2f}",
            f"{ort_t['ms']:.3f} ms",
            f"{ort_t['ratio']:.2f}",
            f"{floor['ms']:.3f} ms" if floor else "",
            f"{onnx_t['vs_floor']:.2f}, {ort_t['vs_floor']:.2f}" if floor else "",
            matches,
        )
    console = Console(width=140)
    console.print(table)
    for r in measured["results"]:
        for target in TARGETS:
            entry = r["targets"][target]
            if "profile" not in entry:
                continue
            prof = entry["profile"]
            top = ", ".join(
                f"{op} {v['share']:.0%} ({v['nodes']} x {v['us'] / v['nodes']:.1f} us)"
                for op, v in list(prof["ops"].items())[:5]
            )
            console.print(
                f"{r['model']} ({target}, {entry['ms'] * 1e3:.0f} us a call): {prof['nodes']} "
                f"nodes run, {prof['floor_nodes']} at the profiler's floor; node time "
                f"{prof['node_us']:.0f} us: {top}",
                highlight=False,
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--exporter", required=True, choices=["jax2onnx", "tf2onnx", "torch"])
    parser.add_argument("--models", nargs="+", metavar="NAME", help="default: all of them")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--torch-eager", action="store_true", help="torch: eager, not compiled")
    parser.add_argument(
        "--profile", action="store_true", help="profile each rewrite slower than its framework"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    pin_to_one_core()
    names = args.models or sorted(p.stem for p in (CORPUS / args.exporter).glob("*.onnx"))
    measured = measure(args.exporter, names, args)
    print_table(args.exporter, measured, args.runs)

    import onnxruntime as ort

    meta = {"exporter": args.exporter, "framework": measured["framework"],
            "onnxruntime": ort.__version__, "machine": platform.machine(),
            "python": platform.python_version(), "cpu": sorted(os.sched_getaffinity(0)),
            "runs": args.runs, "warmup": args.warmup, "threads": 1}  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"frameworks-{args.exporter}.json"
    path.write_text(json.dumps({"meta": meta, "results": measured["results"]}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
