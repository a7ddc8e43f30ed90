"""`make bench`: time each rewritten model against hand-written real baselines.

Every number is a ratio, tool / baseline, measured in the same process with the
two sessions interleaved run by run, so that the machine's drift hits both alike.
So each run finds its weights evicted by the other session's; cases marked "(weights
in cache)" time each run after untimed ones of the same session, as in a loop over one
model, the regime where a product bound by the bytes of its weights reads them fastest.
onnxruntime runs on the CPU with one intra-op thread (`--threads 0`: all of them).
Before timing, the rewrite's
outputs are checked against each baseline's: a ratio of graphs that compute
different things would mean nothing.

    python bench/run.py [--quick] [--runs N] [--threads N] [--only TEXT] [--out bench/results]
                        [--large-graph NODES ...] [--large-model SIZE ...] [--no-large] [--no-cases]

writes results.json (every median, ratio, goal and the numerical differences) and
results.png (the ratios against their goals).

Besides the runtime cases, it measures the rewrite itself:

- a large graph (`stack.py`): the CLI on a Llama-like decoder stack of about
  18k nodes, against one onnx-graphsurgeon round trip of the same model, each in
  its own process, medians of 3 (`--large-graph 4500 9000 18000` for several
  sizes, which also checks that the cost per node stays flat);
- a large model (`large.py`): the CLI on 1 GiB of real weights and a complex
  table, time and peak memory against onnx.load + onnx.save;
- with `--large-model 2.1` (1.8, 3.2, or COMPLEX+REAL in GiB), a model past
  2 GB under a 6 GiB address-space cap: time, peak memory against the 2 GiB goal,
  and the error when it fails. Minutes each, so never by default.
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import Case, all_cases  # noqa: E402
from large import measure, measure_capped  # noqa: E402
from stack import measure as measure_stack  # noqa: E402
from timing import interleaved_medians, session_options  # noqa: E402

from onnx_decomplex import decomplex  # noqa: E402

THREADS = 1
"""Intra-op threads of every session; 0 lets onnxruntime use every core."""


def session(model: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(
        model.SerializeToString(), session_options(THREADS), providers=["CPUExecutionProvider"]
    )


def _close(x: np.ndarray, y: np.ndarray) -> float:
    """The largest difference, relative to the largest magnitude."""
    scale = max(float(np.max(np.abs(y))), 1e-30)
    return float(np.max(np.abs(x - y))) / scale


def run_case(case: Case, warmup: int, runs: int) -> dict:
    start = time.perf_counter()
    out, report = decomplex(
        case.model,
        mul_strategy=case.mul_strategy,
        target_opset=case.target_opset,
        target=case.target,
    )
    rewrite_s = time.perf_counter() - start
    tool = session(out)
    (tool_y,) = tool.run(None, case.feeds)
    result = {
        "case": case.name,
        "mul_strategy": case.mul_strategy,
        "rewrite_seconds": rewrite_s,
        "ops": dict(sorted(report.ops_after.items())),
        "baselines": [],
    }
    for b in case.baselines:
        base = session(b.model)
        (base_y,) = base.run(None, b.feeds)
        diff = _close(tool_y.reshape(base_y.shape), base_y)
        if diff > 1e-3:
            raise SystemExit(f"{case.name}: the rewrite and '{b.name}' differ by {diff:.2g}")
        calls = [
            functools.partial(tool.run, None, case.feeds),
            functools.partial(base.run, None, b.feeds),
        ]
        t_tool, t_base = interleaved_medians(calls, warmup, runs, case.warm_runs)
        result["baselines"].append(
            {
                "baseline": b.name,
                "unit": "ms",
                "tool_value": t_tool * 1e3,
                "baseline_value": t_base * 1e3,
                "ratio": t_tool / t_base,
                "goal": b.goal,
                "met": None if b.goal is None else t_tool / t_base <= b.goal,
                "max_rel_diff": diff,
            }
        )
    return result


def large_model_results(quick: bool) -> list[dict]:
    """The rewrite of a generated model against onnx.load + onnx.save: time and memory."""
    import tempfile

    weights, table = (16, 1) if quick else (1024, 32)
    with tempfile.TemporaryDirectory(prefix="bench-large-") as folder:
        m = measure(Path(folder), weights, table, repeats=1 if quick else 3)
    name = f"rewrite, {m['model_mib']:.0f} MiB model"
    base = "onnx.load + onnx.save"
    return [
        {"case": f"{name} (wall time)", "baselines": [
            {"baseline": base, "tool_value": m["tool_s"] * 1e3, "baseline_value": m["base_s"] * 1e3,
             "ratio": m["tool_s"] / m["base_s"], "goal": 1.5,
             "met": m["tool_s"] / m["base_s"] <= 1.5, "max_rel_diff": 0.0, "unit": "ms"}]},
        {"case": f"{name} (peak memory)", "baselines": [
            {"baseline": base, "tool_value": m["tool_mib"], "baseline_value": m["base_mib"],
             "ratio": m["tool_mib"] / m["base_mib"], "goal": 0.5,
             "met": m["tool_mib"] / m["base_mib"] <= 0.5, "max_rel_diff": 0.0, "unit": "MiB"}]},
    ]  # fmt: skip


def large_graph_results(sizes: list[int], quick: bool) -> list[dict]:
    """The CLI on Llama-like stacks against one graphsurgeon round trip, by size."""
    import tempfile

    results = []
    for nodes in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-stack-") as folder:
            m = measure_stack(Path(folder), nodes, repeats=1 if quick else 3, library=not quick)
        ratio = m["tool_s"] / m["base_s"]
        print(f"  {m['nodes']} nodes: tool {m['tool_s']:.2f} s, graphsurgeon round trip "
              f"{m['base_s']:.2f} s, ratio {ratio:.2f}", flush=True)  # fmt: skip
        results.append(
            {"case": f"rewrite, Llama-like stack of {m['nodes']} nodes (wall time)",
             "nodes": m["nodes"], "s_per_1k_nodes": m["tool_s"] / m["nodes"] * 1e3,
             "library_s": m.get("library_s"), "samples": m["samples"],
             "baselines": [
                {"baseline": "onnx-graphsurgeon round trip", "unit": "s",
                 "tool_value": m["tool_s"], "baseline_value": m["base_s"], "ratio": ratio,
                 "goal": 1.5, "met": ratio <= 1.5, "max_rel_diff": 0.0}]}
        )  # fmt: skip
    return results


LIMIT_MIB = 2048
"""The peak memory the rewrite of a model past 2 GB may take."""


def capped_model_results(sizes: list[str], cap_gib: float = 6) -> list[dict]:
    """The CLI on models past 2 GB under an address-space cap, against onnx.load +
    onnx.save under the same cap: time, peak memory, and the error of a failure."""
    import tempfile

    results = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-large-") as folder:
            m = measure_capped(Path(folder), size, cap_gib)
        tool, base = m["tool"], m["base"]
        print(f"  {size} GiB: tool {tool['seconds']:.1f} s, peak {tool['peak_mib']:.0f} MiB, "
              f"exit {tool['rc']}", flush=True)  # fmt: skip
        name = f"rewrite, {m['model_mib'] / 1024:.1f} GiB model under a {cap_gib:g} GiB cap"
        errors = {"error": tool["error"], "baseline_error": base["error"]}
        ok = tool["rc"] == 0
        rows = [("wall time", "s", tool["seconds"], base["seconds"], None),
                ("peak memory", "MiB", tool["peak_mib"], base["peak_mib"], LIMIT_MIB)]  # fmt: skip
        for what, unit, t, b, limit in rows:
            met = ok if limit is None else ok and t <= limit
            results.append(
                {"case": f"{name} ({what})" + ("" if ok else " [FAILED]"), "rc": tool["rc"],
                 "input_unchanged": m["input_unchanged"], **errors,
                 "baselines": [
                    {"baseline": "onnx.load + onnx.save" + ("" if base["rc"] == 0 else " [FAILED]"),
                     "unit": unit, "tool_value": t, "baseline_value": b, "ratio": t / b,
                     "goal": None, "limit": limit, "met": met, "max_rel_diff": 0.0}]}
            )  # fmt: skip
    return results


def print_table(results: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    threads = (
        "1 thread" if THREADS == 1 else "all threads" if THREADS == 0 else f"{THREADS} threads"
    )
    table = Table(title=f"tool / baseline (median, {threads}, CPU)", title_justify="left")
    for col in ["case", "baseline", "tool", "baseline", "ratio", "goal", "rel diff"]:
        table.add_column(col, justify="left" if col in ("case", "baseline") else "right")
    for r in results:
        for b in r["baselines"]:
            goal = "" if b["goal"] is None else f"<= {b['goal']:g}"
            if b.get("limit") is not None:
                goal = f"tool <= {b['limit']:g} {b['unit']}"
            mark = "" if b["met"] is None else (" [green]met[/]" if b["met"] else " [red]missed[/]")
            unit = b.get("unit", "ms")
            table.add_row(r["case"], b["baseline"], f"{b['tool_value']:.2f} {unit}",
                          f"{b['baseline_value']:.2f} {unit}", f"{b['ratio']:.2f}", goal + mark,
                          f"{b['max_rel_diff']:.1g}")  # fmt: skip
    console = Console(width=140)
    console.print(table)
    for r in results:
        if r.get("error"):
            console.print(f"[red]{r['case']}[/]:\n{r['error']}", markup=True, highlight=False)


def plot(results: list[dict], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install '.[bench]')")
        return False
    rows = [
        (f"{r['case']}\nvs {b['baseline']}", b["ratio"], b["goal"], b["met"])
        for r in results
        for b in r["baselines"]
    ]
    fig, ax = plt.subplots(figsize=(9, 0.5 * len(rows) + 1.5))
    y = np.arange(len(rows))
    # A row with no ratio goal may still fail (a limit, or a run that failed): red too.
    colors = ["tab:gray" if met is None else ("tab:green" if met else "tab:red")
              for _, _, _, met in rows]  # fmt: skip
    ax.barh(y, [v for _, v, _, _ in rows], color=colors)
    for i, (_, v, g, _) in enumerate(rows):
        if g is not None:
            ax.plot([g, g], [i - 0.4, i + 0.4], color="black", linewidth=2)
        ax.text(v, i, f" {v:.2f}", va="center", fontsize=8)
    ax.axvline(1.0, color="gray", linestyle=":")
    ax.set_yticks(y, [label for label, _, _, _ in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(
        "tool / baseline: time, or peak memory where the case says so (lower is better; black bar: goal)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, few runs: a smoke test")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads; 0: all")
    parser.add_argument(
        "--only", help="run the cases whose name holds this text, and no large model"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    parser.add_argument(
        "--large-graph",
        type=int,
        nargs="+",
        metavar="NODES",
        help="stack sizes, in nodes, for the large-graph case (default 18000; quick: 1500)",
    )
    parser.add_argument(
        "--large-model",
        action="append",
        default=[],
        metavar="SIZE",
        help="also a model past 2 GB under a 6 GiB cap: 1.8, 2.1, 3.2, or COMPLEX+REAL (GiB)",
    )
    parser.add_argument(
        "--no-large", action="store_true", help="neither the large graph nor the large model"
    )
    parser.add_argument(
        "--no-cases", action="store_true", help="none of the runtime cases: the rewrite's alone"
    )
    args = parser.parse_args()
    global THREADS
    THREADS = args.threads
    runs = 5 if args.quick else args.runs
    rng = np.random.default_rng(0)
    results = []
    for case in [] if args.no_cases else all_cases(rng, quick=args.quick):
        if args.only and args.only not in case.name:
            continue
        print(f"{case.name} ...", flush=True)
        results.append(run_case(case, args.warmup, runs))
    if not args.only and not args.no_large:
        print("large model ...", flush=True)
        results += large_model_results(args.quick)
    if args.large_graph or not (args.only or args.no_large):
        sizes = args.large_graph or ([1500] if args.quick else [18000])
        print(f"large graph ({', '.join(map(str, sizes))} nodes) ...", flush=True)
        results += large_graph_results(sizes, args.quick)
    if args.large_model:
        print(f"models past 2 GB ({', '.join(args.large_model)} GiB) ...", flush=True)
        results += capped_model_results(args.large_model)
    print_table(results)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"onnxruntime": ort.__version__, "onnx": onnx.__version__, "machine": platform.machine(),
            "processor": platform.processor(), "python": platform.python_version(),
            "runs": runs, "warmup": args.warmup, "quick": args.quick, "threads": THREADS}  # fmt: skip
    (args.out / "results.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    plotted = plot(results, args.out / "results.png")
    print(
        f"wrote {args.out / 'results.json'}"
        + (f" and {args.out / 'results.png'}" if plotted else "")
    )


if __name__ == "__main__":
    main()
