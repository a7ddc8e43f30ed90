"""A Llama-like decoder stack whose RoPE goes through a complex `freqs_cis`: the
rewrite's cost on a large graph, against one onnx-graphsurgeon round trip.

The graph's size is what is measured, not its weights: every dim is small, so a
37k-node model is a few MB. Each layer is what a PyTorch export of Llama's
attention and MLP holds:

    h = x + o(attn(rope(q(rms(x))), rope(k(rms(x))), v(rms(x))))
    y = h + down(silu(gate(rms(h))) * up(rms(h)))

and RoPE is `view_as_real(view_as_complex(x) * freqs_cis)` as the fixtures build it
(`make_fixtures.rope`): interleaved pairs read as re + i*im by two Casts to complex,
multiplied by the complex64 table reshaped for broadcasting, read back by Casts to
real. So every layer holds two complex products the tool rewrites, and the rest is
real graph it must carry through unchanged.

Each side runs in its own fresh process, alternately, and the medians are
reported (see `measure`).
"""

from __future__ import annotations

import compileall
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))
import make_fixtures as FIXTURES  # noqa: E402

F32, C64 = TensorProto.FLOAT, TensorProto.COMPLEX64
HIDDEN, HEADS, MLP, SEQ = 32, 2, 64, 8
HEAD_DIM = HIDDEN // HEADS

GS_ROUND_TRIP = """
import sys, time, onnx, onnx_graphsurgeon as gs
start = time.perf_counter()
graph = gs.import_onnx(onnx.load(sys.argv[1]))
graph.cleanup()
graph.toposort()
onnx.save(gs.export_onnx(graph), sys.argv[2])
print(time.perf_counter() - start)
"""

LIBRARY = """
import sys, time, onnx
from onnx_decomplex.pipeline import decomplex
from onnx_decomplex.files.save import save_model
start = time.perf_counter()
out, _ = decomplex(onnx.load(sys.argv[1]))
save_model(out, sys.argv[2])
print(time.perf_counter() - start)
"""

CLI = [sys.executable, "-m", "onnx_decomplex.cli.main"]


def _n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def _rope(p: str, x: str, out: str) -> list[onnx.NodeProto]:
    """`out = view_as_real(view_as_complex(x) * freqs_cis)`, on x [B, S, H, D]."""
    j = numpy_helper.from_array(np.array(1j, np.complex64))
    mj = numpy_helper.from_array(np.array(-1j, np.complex64))
    return [
        _n("Reshape", [x, "pairs_shape"], [f"{p}pairs"]),
        _n("Gather", [f"{p}pairs", "i0"], [f"{p}re"], axis=-1),
        _n("Gather", [f"{p}pairs", "i1"], [f"{p}im"], axis=-1),
        _n("Cast", [f"{p}re"], [f"{p}re_c"], to=C64),
        _n("Cast", [f"{p}im"], [f"{p}im_c"], to=C64),
        _n("Constant", [], [f"{p}j"], value=j),
        _n("Mul", [f"{p}im_c", f"{p}j"], [f"{p}im_j"]),
        _n("Add", [f"{p}re_c", f"{p}im_j"], [f"{p}c"]),
        _n("Reshape", ["freqs_cis", "bcast_shape"], [f"{p}freqs"]),
        _n("Mul", [f"{p}c", f"{p}freqs"], [f"{p}rot"]),
        _n("Cast", [f"{p}rot"], [f"{p}out_re"], to=F32),
        _n("Constant", [], [f"{p}mj"], value=mj),
        _n("Mul", [f"{p}rot", f"{p}mj"], [f"{p}rot_mj"]),
        _n("Cast", [f"{p}rot_mj"], [f"{p}out_im"], to=F32),
        _n("Unsqueeze", [f"{p}out_re", "last"], [f"{p}re_u"]),
        _n("Unsqueeze", [f"{p}out_im", "last"], [f"{p}im_u"]),
        _n("Concat", [f"{p}re_u", f"{p}im_u"], [f"{p}cat"], axis=-1),
        _n("Reshape", [f"{p}cat", "heads_shape"], [out]),
    ]


def _rms(p: str, x: str, weight: str, out: str) -> list[onnx.NodeProto]:
    """`out = x / sqrt(mean(x^2) + eps) * weight`, as the exporter spells it."""
    return [
        _n("Pow", [x, "two"], [f"{p}sq"]),
        _n("ReduceMean", [f"{p}sq", "last"], [f"{p}ms"], keepdims=1),
        _n("Add", [f"{p}ms", "eps"], [f"{p}mse"]),
        _n("Sqrt", [f"{p}mse"], [f"{p}rms"]),
        _n("Reciprocal", [f"{p}rms"], [f"{p}inv"]),
        _n("Mul", [x, f"{p}inv"], [f"{p}normed"]),
        _n("Mul", [f"{p}normed", weight], [out]),
    ]


def _layer(i: int, x: str, rng) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto], str]:
    p = f"l{i}_"
    shapes = {"wq": (HIDDEN, HIDDEN), "wk": (HIDDEN, HIDDEN), "wv": (HIDDEN, HIDDEN),
              "wo": (HIDDEN, HIDDEN), "wg": (HIDDEN, MLP), "wu": (HIDDEN, MLP),
              "wd": (MLP, HIDDEN), "n1": (HIDDEN,), "n2": (HIDDEN,)}  # fmt: skip
    inits = [
        numpy_helper.from_array(
            (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32), f"{p}{name}"
        )
        for name, s in shapes.items()
    ]
    nodes = _rms(f"{p}n1_", x, f"{p}n1", f"{p}h")
    for w in "qkv":
        nodes += [
            _n("MatMul", [f"{p}h", f"{p}w{w}"], [f"{p}{w}"]),
            _n("Reshape", [f"{p}{w}", "heads_shape"], [f"{p}{w}4"]),
        ]
    nodes += _rope(f"{p}q_", f"{p}q4", f"{p}qr")
    nodes += _rope(f"{p}k_", f"{p}k4", f"{p}kr")
    nodes += [
        _n("Transpose", [f"{p}qr"], [f"{p}qt"], perm=[0, 2, 1, 3]),
        _n("Transpose", [f"{p}kr"], [f"{p}kt"], perm=[0, 2, 3, 1]),
        _n("Transpose", [f"{p}v4"], [f"{p}vt"], perm=[0, 2, 1, 3]),
        _n("MatMul", [f"{p}qt", f"{p}kt"], [f"{p}scores"]),
        _n("Mul", [f"{p}scores", "scale"], [f"{p}scaled"]),
        _n("Add", [f"{p}scaled", "mask"], [f"{p}masked"]),
        _n("Softmax", [f"{p}masked"], [f"{p}probs"], axis=-1),
        _n("MatMul", [f"{p}probs", f"{p}vt"], [f"{p}ctx"]),
        _n("Transpose", [f"{p}ctx"], [f"{p}ctx_t"], perm=[0, 2, 1, 3]),
        _n("Reshape", [f"{p}ctx_t", "hidden_shape"], [f"{p}ctx_f"]),
        _n("MatMul", [f"{p}ctx_f", f"{p}wo"], [f"{p}attn"]),
        _n("Add", [x, f"{p}attn"], [f"{p}res1"]),
    ]
    nodes += _rms(f"{p}n2_", f"{p}res1", f"{p}n2", f"{p}h2")
    nodes += [
        _n("MatMul", [f"{p}h2", f"{p}wg"], [f"{p}gate"]),
        _n("Sigmoid", [f"{p}gate"], [f"{p}sig"]),
        _n("Mul", [f"{p}gate", f"{p}sig"], [f"{p}silu"]),
        _n("MatMul", [f"{p}h2", f"{p}wu"], [f"{p}up"]),
        _n("Mul", [f"{p}silu", f"{p}up"], [f"{p}gated"]),
        _n("MatMul", [f"{p}gated", f"{p}wd"], [f"{p}down"]),
        _n("Add", [f"{p}res1", f"{p}down"], [f"{p}out"]),
    ]
    return nodes, inits, f"{p}out"


NODES_PER_LAYER = 75
"""Nodes of one layer (`_layer`); the model adds one Identity around them."""


def layers_for(nodes: int) -> int:
    """The layer count that gives about `nodes` nodes."""
    return max(1, round(nodes / NODES_PER_LAYER))


def make_stack(layers: int, seed: int = 0) -> onnx.ModelProto:
    """A decoder stack of `layers` layers; input x [batch, SEQ, HIDDEN], output y alike."""
    rng = np.random.default_rng(seed)
    mask = np.triu(np.full((SEQ, SEQ), -1e9, np.float32), 1)
    i64 = lambda name, v: numpy_helper.from_array(np.asarray(v, np.int64), name)  # noqa: E731
    inits = [
        numpy_helper.from_array(FIXTURES.freqs_cis(SEQ, HEAD_DIM), "freqs_cis"),
        i64("pairs_shape", [0, 0, 0, -1, 2]),
        i64("bcast_shape", [1, -1, 1, HEAD_DIM // 2]),
        i64("heads_shape", [0, 0, HEADS, HEAD_DIM]),
        i64("hidden_shape", [0, 0, HIDDEN]),
        i64("last", [-1]),
        i64("i0", 0),
        i64("i1", 1),
        numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
        numpy_helper.from_array(np.array(HEAD_DIM**-0.5, np.float32), "scale"),
        numpy_helper.from_array(mask, "mask"),
    ]
    nodes, x = [], "x"
    for i in range(layers):
        layer_nodes, layer_inits, x = _layer(i, x, rng)
        nodes += layer_nodes
        inits += layer_inits
    nodes.append(_n("Identity", [x], ["y"]))
    graph = helper.make_graph(
        nodes,
        "llama_stack",
        [helper.make_tensor_value_info("x", F32, ["batch", SEQ, HIDDEN])],
        [helper.make_tensor_value_info("y", F32, ["batch", SEQ, HIDDEN])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def _timed(argv: list[str], own_clock: bool = False) -> float:
    """Wall seconds of one fresh child process (or the seconds it prints, `own_clock`)."""
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise SystemExit(f"{' '.join(argv[:4])} ... failed:\n{tail}")
    return float(proc.stdout.strip().splitlines()[-1]) if own_clock else wall


def _compiled() -> None:
    """Compiles the tool's modules to bytecode, as pip does when it installs a package
    (onnx and onnx-graphsurgeon came so). A source checkout run with
    PYTHONDONTWRITEBYTECODE would otherwise compile them again at every start (0.1 s),
    which no installed copy does."""
    import onnx_decomplex.cli

    for package in (onnx_decomplex, onnx_decomplex.cli):
        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)


def measure(folder: Path, nodes: int, repeats: int = 3, library: bool = True) -> dict:
    """Seconds of the tool and of one graphsurgeon round trip on a stack of about
    `nodes` nodes, each in its own process, alternately; medians of `repeats`.

    tool_s: `onnx-decomplex IN OUT --no-validate`, the process's wall time.
    base_s: load, import, cleanup, toposort, export, save, the process's wall time.
    library_s: `decomplex` + `save_model` as the process clocks them (no start-up).
    base_inner_s: the round trip as its process clocks it.

    Both sides start from bytecode, as installed packages do (`_compiled`).
    """
    _compiled()
    folder.mkdir(parents=True, exist_ok=True)
    model = make_stack(layers_for(nodes))
    path = folder / f"stack{len(model.graph.node)}.onnx"
    onnx.save(model, str(path))
    tool = [*CLI, str(path), str(folder / "tool.onnx"), "--no-validate", "-q"]
    base = [sys.executable, "-c", GS_ROUND_TRIP, str(path), str(folder / "base.onnx")]
    lib = [sys.executable, "-c", LIBRARY, str(path), str(folder / "library.onnx")]
    samples: dict[str, list[float]] = {"tool": [], "base": [], "library": [], "base_inner": []}
    for _ in range(repeats):
        samples["tool"].append(_timed(tool))
        samples["base"].append(_timed(base))
        if library:
            samples["library"].append(_timed(lib, own_clock=True))
        samples["base_inner"].append(_timed(base, own_clock=True))
    _check_written(folder / "tool.onnx", model)
    med = {f"{k}_s": float(np.median(v)) for k, v in samples.items() if v}
    return {"nodes": len(model.graph.node), "layers": layers_for(nodes),
            "model_mib": path.stat().st_size / 2**20, **med,
            "samples": samples}  # fmt: skip


def _check_written(path: Path, source: onnx.ModelProto) -> None:
    """The rewrite holds no complex type and keeps the real part of the graph."""
    out = onnx.load(str(path))
    assert not any(t.data_type == C64 for t in out.graph.initializer)
    assert not any(a.name == "to" and a.i == C64 for n in out.graph.node for a in n.attribute), (
        "a Cast to complex is left"
    )
    matmuls = sum(n.op_type == "MatMul" for n in source.graph.node)
    assert sum(n.op_type == "MatMul" for n in out.graph.node) >= matmuls


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodes", type=int, nargs="+", help="about this many nodes, per size")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/bench-stack"))
    args = parser.parse_args()
    for n in args.nodes:
        print(json.dumps(measure(args.folder, n, args.repeats)), flush=True)
