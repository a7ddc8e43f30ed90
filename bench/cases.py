"""Benchmark cases: a complex model for the tool, and hand-written real baselines.

Each case gives the complex model, feeds for the rewritten (packed) model, and one
or more real-valued graphs a person would write by hand for the same job, with
their feeds. Every baseline computes the same numbers as the rewrite; the harness
checks that before it times anything.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
F32, C64 = TensorProto.FLOAT, TensorProto.COMPLEX64


# The RoPE builder and freqs_cis table are the fixtures' own, at Llama sizes.
sys.path.insert(0, str(ROOT / "fixtures"))
import make_fixtures as FIXTURES  # noqa: E402

from onnx_decomplex import decomplex  # noqa: E402


@dataclass
class Baseline:
    name: str
    model: onnx.ModelProto
    feeds: dict[str, np.ndarray]
    goal: float | None = None  # the largest tool / baseline ratio the issue accepts


@dataclass
class Case:
    name: str
    model: onnx.ModelProto  # the complex model the tool rewrites
    feeds: dict[str, np.ndarray]  # for the rewritten model: complex inputs packed
    baselines: list[Baseline] = field(default_factory=list)
    mul_strategy: str = "auto"
    target_opset: int | None = None  # the tool's --target-opset
    target: str = "onnx"  # the tool's --target
    # Untimed runs of the same session before each timed one. With 4, its weights are in
    # the cache, as in a loop over one model, not evicted by the other session's run
    # (measured at x[1, 1024] @ W: the time stops falling from 2 on).
    warm_runs: int = 0


def _model(nodes, inputs, outputs, inits=(), opset=18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "bench", inputs, outputs, list(inits))
    ir = 11 if opset >= 23 else 8
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _init(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def _crandn(rng, shape) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def _pack(z: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.stack([z.real, z.imag], -1).astype(np.float32))


def _n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


# ---- RoPE -----------------------------------------------------------------------------


def _rope_exporter(b, s, h, d, table_input: bool) -> onnx.ModelProto:
    """The PyTorch exporter's real lowering of view_as_real(view_as_complex(x) * f):
    Slice x4, Mul x4, Sub, Add, Concat (plus the two Reshapes of the layout)."""
    half = d // 2
    seq = "seq" if table_input else s
    one, zero, two = np.array([1]), np.array([0]), np.array([2])
    last = np.array([-1])
    nodes = [
        _n("Reshape", ["xq", "pairs"], ["xp"]),
        _n("Slice", ["xp", "zero", "one", "last"], ["xr"]),
        _n("Slice", ["xp", "one", "two", "last"], ["xi"]),
        _n("Slice", ["f", "zero", "one", "last"], ["fr"]),
        _n("Slice", ["f", "one", "two", "last"], ["fi"]),
        _n("Mul", ["xr", "fr"], ["a"]),
        _n("Mul", ["xi", "fi"], ["b"]),
        _n("Mul", ["xr", "fi"], ["c"]),
        _n("Mul", ["xi", "fr"], ["e"]),
        _n("Sub", ["a", "b"], ["re"]),
        _n("Add", ["c", "e"], ["im"]),
        _n("Concat", ["re", "im"], ["yp"], axis=-1),
        _n("Reshape", ["yp", "flat"], ["xq_out"]),
    ]
    inits = [_init("pairs", [0, 0, 0, -1, 2]), _init("flat", [0, 0, 0, -1]), _init("zero", zero),
             _init("one", one), _init("two", two), _init("last", last)]  # fmt: skip
    inputs = [_vi("xq", F32, ["batch", seq, h, d])]
    if table_input:
        inputs.append(_vi("freqs", F32, [seq, half, 2]))
        nodes.insert(0, _n("Reshape", ["freqs", "fshape"], ["f"]))
        inits.append(_init("fshape", [1, -1, 1, half, 2]))
    else:
        table = FIXTURES.freqs_cis(s, d)
        inits.append(_init("f", _pack(table).reshape(1, s, 1, half, 2)))
    return _model(nodes, inputs, [_vi("xq_out", F32, ["batch", seq, h, d])], inits)


def _rope_rotary23(b, s, h, d) -> onnx.ModelProto:
    """One opset-23 RotaryEmbedding node, on the [B, S, H*D] layout, with its caches."""
    table = FIXTURES.freqs_cis(s, d)
    nodes = [
        _n("Reshape", ["xq", "to3"], ["x3"]),
        _n("RotaryEmbedding", ["x3", "cos", "sin", "pos"], ["y3"], interleaved=1, num_heads=h),
        _n("Reshape", ["y3", "to4"], ["xq_out"]),
    ]
    inits = [_init("to3", [0, 0, -1]), _init("to4", [0, 0, h, d]),
             _init("cos", table.real.astype(np.float32)), _init("sin", table.imag.astype(np.float32)),
             _init("pos", np.tile(np.arange(s, dtype=np.int64), (b, 1)))]  # fmt: skip
    return _model(nodes, [_vi("xq", F32, [b, s, h, d])], [_vi("xq_out", F32, [b, s, h, d])],
                  inits, opset=23)  # fmt: skip


def _rope_contrib(b, s, h, d, flat: bool = False) -> onnx.ModelProto:
    """onnxruntime's com.microsoft.RotaryEmbedding alone, on [B, S, H*D], at opset 18:
    reshaped from and to [B, S, H, D], or with `flat` I/O [B, S, H*D] as it is."""
    table = FIXTURES.freqs_cis(s, d)
    x, y = ("xq", "xq_out") if flat else ("x3", "y3")
    nodes = [
        helper.make_node(
            "RotaryEmbedding",
            [x, "pos", "cos", "sin"],
            [y],
            domain="com.microsoft",
            interleaved=1,
            num_heads=h,
        ),  # fmt: skip
    ]
    inits = [_init("pos", [0]), _init("cos", table.real.astype(np.float32)),
             _init("sin", table.imag.astype(np.float32))]  # fmt: skip
    shape = [b, s, h * d] if flat else [b, s, h, d]
    if not flat:
        nodes = [
            _n("Reshape", ["xq", "to3"], ["x3"]),
            *nodes,
            _n("Reshape", ["y3", "to4"], ["xq_out"]),
        ]
        inits += [_init("to3", [0, 0, -1]), _init("to4", [0, 0, h, d])]
    model = _model(nodes, [_vi("xq", F32, shape)], [_vi("xq_out", F32, shape)], inits)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model


def rope_llama(rng, b=1, s=1024, h=32, d=128, target_opset=None, target="onnx") -> Case:
    """Llama RoPE with a constant table; with `target_opset` 23 (or the onnxruntime
    target), against the node itself."""
    x = rng.standard_normal((b, s, h, d)).astype(np.float32)
    feeds = {"xq": x}
    exporter = _rope_exporter(b, s, h, d, False)
    if target == "onnxruntime":
        baselines = [Baseline("exporter lowering", exporter, feeds, goal=0.2),
                     Baseline("com.microsoft.RotaryEmbedding", _rope_contrib(b, s, h, d), feeds, goal=1.3)]  # fmt: skip
    elif target_opset is None:
        baselines = [Baseline("exporter lowering", exporter, feeds, goal=1.0)]
    else:
        baselines = [Baseline("RotaryEmbedding-23", _rope_rotary23(b, s, h, d), feeds, goal=1.3),
                     Baseline("exporter lowering", exporter, feeds)]  # fmt: skip
    name = "rope_llama" + (f" (--target-opset {target_opset})" if target_opset else "")
    return Case(
        name + (f" (--target {target})" if target != "onnx" else ""),
        FIXTURES.rope(freqs_as_input=False, seq_len=s, heads=h, head_dim=d),
        feeds,
        baselines,
        target_opset=target_opset,
        target=target,
    )


def rope_flat(rng, b=1, s=1024, h=32, d=128) -> Case:
    """Llama RoPE on flat I/O [B, S, H*D] (the heads split and merged inside the graph),
    with `--target onnxruntime`, against the contrib node alone on the same layout."""
    model = FIXTURES.rope_flat(seq_len=s, heads=h, head_dim=d, batch=b)
    feeds = {"xq": rng.standard_normal((b, s, h * d)).astype(np.float32)}
    node = _rope_contrib(b, s, h, d, flat=True)
    baselines = [Baseline("com.microsoft.RotaryEmbedding", node, feeds, goal=1.1)]
    return Case("rope_flat (--target onnxruntime)", model, feeds, baselines, target="onnxruntime")


def _rope_jax2onnx(b, s, h, d) -> onnx.ModelProto:
    """Llama's `apply_rotary_emb` as jax2onnx exports it (opset 23): strided Slices of x
    into even and odd halves stacked as a complex value's parts, the complex product by
    freqs_cis written on parts (Gather, four Mul, Sub, Add), each part taken again as a
    complex value's real part (times 0 for its imaginary one, Concat, Gather, Identity),
    and the pairs stacked back and reshaped."""
    table = FIXTURES.freqs_cis(s, d).reshape(1, s, 1, d // 2)
    last, pair = 3, [4]
    nodes = [
        _n("Slice", ["xq", "starts0", "limits", "axes", "steps"], ["even"]),
        _n("Slice", ["xq", "starts1", "limits", "axes", "steps"], ["odd"]),
        _n("Unsqueeze", ["even", "pair"], ["even1"]),
        _n("Unsqueeze", ["odd", "pair"], ["odd1"]),
        _n("Concat", ["even1", "odd1"], ["z"], axis=4),
        _n("Gather", ["z", "i0"], ["ar"], axis=4),
        _n("Gather", ["z", "i1"], ["ai"], axis=4),
        _n("Gather", ["table", "i0"], ["br"], axis=4),
        _n("Gather", ["table", "i1"], ["bi"], axis=4),
        _n("Mul", ["ar", "br"], ["arbr"]),
        _n("Mul", ["ai", "bi"], ["aibi"]),
        _n("Sub", ["arbr", "aibi"], ["re"]),
        _n("Mul", ["ar", "bi"], ["arbi"]),
        _n("Mul", ["ai", "br"], ["aibr"]),
        _n("Add", ["arbi", "aibr"], ["im"]),
        _n("Unsqueeze", ["re", "pair"], ["re1"]),
        _n("Unsqueeze", ["im", "pair"], ["im1"]),
        _n("Concat", ["re1", "im1"], ["w"], axis=4),
    ]
    for k, part in enumerate(("real", "imag")):
        nodes += [
            _n("Mul", ["w", "zero"], [f"{part}_zero"]),
            _n("Unsqueeze", ["w", "pair"], [f"{part}_w"]),
            _n("Unsqueeze", [f"{part}_zero", "pair"], [f"{part}_z"]),
            _n("Concat", [f"{part}_w", f"{part}_z"], [f"{part}_pack"], axis=4),
            _n("Gather", [f"{part}_pack", f"i{k}"], [f"{part}_got"], axis=4),
            _n("Identity", [f"{part}_got"], [f"{part}_out"]),
        ]
    nodes += [
        _n("Unsqueeze", ["real_out", "pair"], ["r1"]),
        _n("Unsqueeze", ["imag_out", "pair"], ["i1_"]),
        _n("Concat", ["r1", "i1_"], ["stacked"], axis=4),
        _n("Reshape", ["stacked", "shape"], ["y"]),
    ]
    inits = [_init("starts0", [0, 0, 0, 0]), _init("starts1", [0, 0, 0, 1]),
             _init("limits", [b, s, h, d]), _init("axes", [0, 1, 2, last]),
             _init("steps", [1, 1, 1, 2]), _init("pair", pair),
             _init("i0", np.array(0, np.int64)), _init("i1", np.array(1, np.int64)),
             _init("table", table.astype(np.complex64)), _init("zero", np.array(0, np.float32)),
             _init("shape", [b, s, h, d])]  # fmt: skip
    return _model(nodes, [_vi("xq", F32, [b, s, h, d])], [_vi("y", F32, [b, s, h, d])], inits,
                  opset=23)  # fmt: skip


def rope_jax2onnx(rng, b=1, s=1024, h=32, d=128, target="onnx") -> Case:
    """Llama RoPE as jax2onnx writes it on real parts (`_rope_jax2onnx`): against the
    contrib node with `--target onnxruntime`, and torchlib's lowering at the default."""
    x = rng.standard_normal((b, s, h, d)).astype(np.float32)
    feeds = {"xq": x}
    model = _rope_jax2onnx(b, s, h, d)
    if target == "onnxruntime":
        baselines = [Baseline("com.microsoft.RotaryEmbedding", _rope_contrib(b, s, h, d), feeds,
                              goal=1.3)]  # fmt: skip
    else:
        baselines = [Baseline("exporter lowering", _rope_exporter(b, s, h, d, False), feeds,
                              goal=1.0)]  # fmt: skip
    suffix = f" (--target {target})" if target != "onnx" else ""
    return Case(f"rope_jax2onnx{suffix}", model, feeds, baselines, target=target)


def rope_symbolic_seq(rng, b=1, s=1024, h=32, d=128) -> Case:
    x = rng.standard_normal((b, s, h, d)).astype(np.float32)
    table = FIXTURES.freqs_cis(s, d)
    feeds = {"xq": x, "freqs_cis": _pack(table)}
    return Case(
        "rope_symbolic_seq",
        FIXTURES.rope(freqs_as_input=True, seq_len=s, heads=h, head_dim=d),
        feeds,
        [
            Baseline(
                "exporter lowering",
                _rope_exporter(b, s, h, d, True),
                {"xq": x, "freqs": _pack(table)},
                goal=1.0,
            )
        ],  # fmt: skip
    )


# ---- elementwise ----------------------------------------------------------------------


def _pair_graph(n: int, body) -> onnx.ModelProto:
    """Packed a, b in; Split each into [..., 1] parts; `body` makes the result parts
    from (ar, ai, br, bi); one Concat out. What a person writes by hand."""
    nodes = [
        _n("Split", ["a"], ["ar", "ai"], axis=-1, num_outputs=2),
        _n("Split", ["b"], ["br", "bi"], axis=-1, num_outputs=2),
    ]
    re, im = body(nodes, "ar", "ai", "br", "bi")
    nodes.append(_n("Concat", [re, im], ["y"], axis=-1))
    return _model(nodes, [_vi("a", F32, [n, 2]), _vi("b", F32, [n, 2])], [_vi("y", F32, [n, 2])])


class _Ops:
    """Names fresh tensors for hand-written pair-form bodies."""

    def __init__(self, nodes):
        self.nodes, self.i = nodes, 0

    def __call__(self, op, *ins):
        self.i += 1
        out = f"t{self.i}"
        self.nodes.append(_n(op, list(ins), [out]))
        return out

    def mul(self, ar, ai, br, bi):
        return (self("Sub", self("Mul", ar, br), self("Mul", ai, bi)),
                self("Add", self("Mul", ar, bi), self("Mul", ai, br)))  # fmt: skip


def _complex_model(nodes, n, names=("a", "b")) -> onnx.ModelProto:
    return _model(nodes, [_vi(x, C64, [n]) for x in names], [_vi("y", C64, [n])])


def elementwise_mul(rng, n=4 * 2**20, strategy="four") -> Case:
    a, b = _crandn(rng, n), _crandn(rng, n)
    feeds = {"a": _pack(a), "b": _pack(b)}
    hand = _pair_graph(n, lambda nodes, *p: _Ops(nodes).mul(*p))
    return Case(
        f"elementwise_mul_4M ({strategy})",
        _complex_model([_n("Mul", ["a", "b"], ["y"])], n),
        feeds,
        # The goal is the default's (four, for elementwise Mul); Gauss is measured beside it.
        [Baseline("hand-written pairs", hand, feeds, goal=1.0 if strategy == "four" else None)],
        mul_strategy=strategy,
    )


CHAIN = ["Mul", "Add", "Mul", "Sub", "Mul", "Add", "Mul", "Sub", "Mul", "Add"]


def chain10(rng, n=2**20) -> Case:
    """y = (((a*b + b)*b - b)*b + ...): ten complex ops on runtime values."""
    a, b = _crandn(rng, n), _crandn(rng, n)
    feeds = {"a": _pack(a), "b": _pack(b)}
    nodes, prev = [], "a"
    for i, op in enumerate(CHAIN):
        out = "y" if i == len(CHAIN) - 1 else f"c{i}"
        nodes.append(_n(op, [prev, "b"], [out]))
        prev = out

    def body(nodes, ar, ai, br, bi):
        ops = _Ops(nodes)
        re, im = ar, ai
        for op in CHAIN:
            if op == "Mul":
                re, im = ops.mul(re, im, br, bi)
            else:
                re, im = ops(op, re, br), ops(op, im, bi)
        return re, im

    return Case(
        "chain_of_10",
        _complex_model(nodes, n),
        feeds,
        [Baseline("hand-written pairs", _pair_graph(n, body), feeds, goal=1.2)],
    )


def elementwise_div(rng, n=2**20) -> Case:
    """a / b on runtime values, against the textbook formula, which overflows where
    |b|^2 does (|b| near 1e19 in complex64): the price of scaling b by its larger part."""
    a, b = _crandn(rng, n), _crandn(rng, n)
    feeds = {"a": _pack(a), "b": _pack(b)}

    def body(nodes, ar, ai, br, bi):
        ops = _Ops(nodes)
        den = ops("Add", ops("Mul", br, br), ops("Mul", bi, bi))
        re = ops("Add", ops("Mul", ar, br), ops("Mul", ai, bi))
        im = ops("Sub", ops("Mul", ai, br), ops("Mul", ar, bi))
        return ops("Div", re, den), ops("Div", im, den)

    return Case(
        "elementwise_div_1M",
        _complex_model([_n("Div", ["a", "b"], ["y"])], n),
        feeds,
        [Baseline("textbook formula on pairs", _pair_graph(n, body), feeds)],
    )


# ---- MatMul ---------------------------------------------------------------------------


def _four_matmul(rows, k, m, weight: np.ndarray | None) -> onnx.ModelProto:
    """x (packed) @ W with four real MatMuls; W constant parts, or a packed input."""
    nodes = [_n("Split", ["x"], ["xr3", "xi3"], axis=-1, num_outputs=2),
             _n("Squeeze", ["xr3", "last"], ["xr"]), _n("Squeeze", ["xi3", "last"], ["xi"])]  # fmt: skip
    inits = [_init("last", [-1])]
    inputs = [_vi("x", F32, [rows, k, 2])]
    if weight is None:
        inputs.append(_vi("w", F32, [k, m, 2]))
        nodes += [_n("Split", ["w"], ["wr3", "wi3"], axis=-1, num_outputs=2),
                  _n("Squeeze", ["wr3", "last"], ["wr"]), _n("Squeeze", ["wi3", "last"], ["wi"])]  # fmt: skip
    else:
        inits += [
            _init("wr", weight.real.astype(np.float32)),
            _init("wi", weight.imag.astype(np.float32)),
        ]
    nodes += [
        _n("MatMul", ["xr", "wr"], ["a"]), _n("MatMul", ["xi", "wi"], ["b"]),
        _n("MatMul", ["xr", "wi"], ["c"]), _n("MatMul", ["xi", "wr"], ["e"]),
        _n("Sub", ["a", "b"], ["re"]), _n("Add", ["c", "e"], ["im"]),
        _n("Unsqueeze", ["re", "last"], ["re3"]), _n("Unsqueeze", ["im", "last"], ["im3"]),
        _n("Concat", ["re3", "im3"], ["y"], axis=-1),
    ]  # fmt: skip
    return _model(nodes, inputs, [_vi("y", F32, [rows, m, 2])], inits)


def _doubled_matmul(rows, k, m, weight) -> onnx.ModelProto:
    """A plain real MatMul of the doubled size, [rows, 2k] @ [2k, 2m], on interleaved
    (re, im) columns: the weight holds [[wr, wi], [-wi, wr]] for each complex entry."""
    big = np.empty((k, 2, m, 2), np.float32)
    big[:, 0, :, 0], big[:, 0, :, 1] = weight.real, weight.imag
    big[:, 1, :, 0], big[:, 1, :, 1] = -weight.imag, weight.real
    return _model([_n("MatMul", ["x", "w"], ["y"])], [_vi("x", F32, [rows, 2 * k])],
                  [_vi("y", F32, [rows, 2 * m])], [_init("w", big.reshape(2 * k, 2 * m))])  # fmt: skip


def matmul_constant(rng, rows=256, k=1024, m=1024, target="onnx", goal=0.6, warm=False) -> Case:
    """x W, W a constant complex weight; on the onnxruntime target, by the regime of x's
    row count (stacked rows or three products). `warm` times each run with W in the
    cache (see Case.warm_runs)."""
    x, w = _crandn(rng, (rows, k)), _crandn(rng, (k, m)) / np.float32(np.sqrt(k))
    feeds = {"x": _pack(x)}
    model = _model([_n("MatMul", ["x", "w"], ["y"])], [_vi("x", C64, [rows, k])],
                   [_vi("y", C64, [rows, m])], [_init("w", w)])  # fmt: skip
    doubled = _doubled_matmul(rows, k, m, w)
    x2 = feeds["x"].reshape(rows, 2 * k)
    name = (
        "matmul_constant_1024"
        if target == "onnx"
        else f"matmul_constant_1024_rows{rows}_{target}_target"
    ) + (" (weights in cache)" if warm else "")
    return Case(
        name,
        model,
        feeds,
        [
            Baseline("four MatMuls", _four_matmul(rows, k, m, w), feeds, goal=goal),
            Baseline("real MatMul, doubled", doubled, {"x": x2}, goal=1.2),
        ],
        target=target,
        warm_runs=4 if warm else 0,
    )


def matmul_runtime(rng, rows=256, k=1024, m=1024, strategy="gauss") -> Case:
    x, w = _crandn(rng, (rows, k)), _crandn(rng, (k, m)) / np.float32(np.sqrt(k))
    feeds = {"x": _pack(x), "w": _pack(w)}
    model = _model([_n("MatMul", ["x", "w"], ["y"])], [_vi("x", C64, [rows, k]), _vi("w", C64, [k, m])],
                   [_vi("y", C64, [rows, m])])  # fmt: skip
    return Case(
        f"matmul_runtime_1024 ({strategy})",
        model,
        feeds,
        [Baseline("four MatMuls", _four_matmul(rows, k, m, None), feeds)],
        mul_strategy=strategy,
    )


# ---- FNet -----------------------------------------------------------------------------


def fnet(rng, b=8, s=128, d=256, target="onnx") -> Case:
    """FNet mixing: Re(DFT_seq(DFT_hidden(x))), from a real input.

    With target "tensorrt" or "onnxruntime" the DFTs become MatMuls by DFT matrices:
    this measures what that costs (or saves) against onnxruntime's own DFT, on the same
    CPU.
    """
    x = rng.standard_normal((b, s, d)).astype(np.float32)
    complex_model = _model(
        [
            _n("Cast", ["x"], ["xc"], to=C64),
            _n("DFT", ["xc"], ["f1"], axis=2),
            _n("DFT", ["f1"], ["f2"], axis=1),
            _n("Cast", ["f2"], ["y"], to=F32),
        ],
        [_vi("x", F32, [b, s, d])],
        [_vi("y", F32, [b, s, d])],
        opset=17,
    )
    hand = _model(
        [
            _n("Unsqueeze", ["x", "last"], ["x1"]),  # a real signal: [..., 1]
            _n("DFT", ["x1"], ["f1"], axis=2),
            _n("DFT", ["f1"], ["f2"], axis=1),
            _n("Gather", ["f2", "zero"], ["y"], axis=-1),
        ],
        [_vi("x", F32, [b, s, d])],
        [_vi("y", F32, [b, s, d])],
        [_init("last", [-1]), _init("zero", np.array(0, np.int64))],
        opset=17,
    )
    feeds = {"x": x}
    if target != "onnx":
        baselines = [Baseline("hand-written DFTs (onnxruntime's DFT)", hand, feeds)]
        return Case(f"fnet_dft_{target}_target", complex_model, feeds, baselines, target=target)
    return Case(
        "fnet_dft", complex_model, feeds, [Baseline("hand-written DFTs", hand, feeds, goal=1.0)]
    )


def spectral_filter(rng, b=64, c=64, n=128) -> Case:
    """A spectral filter (a Fourier Neural Operator layer's mixing, one weight per
    frequency and channel): y = Re(IDFT(DFT(x) * w)) along the last axis of a real
    [batch, channels, length] input, as `torch.fft` runs over a signal's last dim. The tool's onnxruntime target, whose DFTs are MatMuls, against the same
    block rewritten with onnxruntime's DFT nodes (the onnx target)."""
    x = rng.standard_normal((b, c, n)).astype(np.float32)
    w = _crandn(rng, (c, n)).astype(np.complex64)
    complex_model = _model(
        [
            _n("Cast", ["x"], ["xc"], to=C64),
            _n("DFT", ["xc"], ["f"], axis=2),
            _n("Mul", ["f", "w"], ["g"]),
            _n("DFT", ["g"], ["h"], axis=2, inverse=1),
            _n("Cast", ["h"], ["y"], to=F32),
        ],
        [_vi("x", F32, [b, c, n])],
        [_vi("y", F32, [b, c, n])],
        [_init("w", w)],
        opset=17,
    )
    with_dft_nodes, _ = decomplex(complex_model)
    feeds = {"x": x}
    baselines = [Baseline("the same block with DFT nodes", with_dft_nodes, feeds, goal=0.6)]
    return Case("spectral_filter_onnxruntime_target", complex_model, feeds, baselines,
                target="onnxruntime")  # fmt: skip


def spectral_filter_half(rng, b=8, c=64, n=128, modes=None, goal=0.6) -> Case:
    """A spectral filter as exporters spell rfft and irfft (the fixtures'
    `half_spectrum_filter`):
    every bin weighted, or with `modes` only the lowest ones (a Fourier Neural Operator
    layer's), with `--target onnxruntime`, against the same block with DFT nodes."""
    kept = modes or n // 2 + 1
    model = FIXTURES.half_spectrum_filter([b, c, n], _crandn(rng, (c, kept)))
    with_dft_nodes, _ = decomplex(model)
    feeds = {"x": rng.standard_normal((b, c, n)).astype(np.float32)}
    name = f"{'fno_modes' if modes else 'spectral_filter_half'}_b{b}c{c}n{n}" + (
        f"m{modes}" if modes else ""
    )
    baselines = [Baseline("the same block with DFT nodes", with_dft_nodes, feeds, goal=goal)]
    return Case(f"{name}_onnxruntime_target", model, feeds, baselines, target="onnxruntime")


def einsum_modes(rng, b=8, c=32, m=16) -> Case:
    """A 2-D Fourier layer's mixing of its kept modes as jax2onnx writes it, one complex
    Einsum by constant weights (`bixy,ioxy->boxy`): the onnxruntime target's MatMul form
    against the default target's Einsum."""
    x, w = _crandn(rng, (b, c, m, m)), _crandn(rng, (c, c, m, m)) / np.float32(np.sqrt(c))
    model = _model([_n("Einsum", ["x", "w"], ["y"], equation="bixy,ioxy->boxy")],
                   [_vi("x", C64, [b, c, m, m])], [_vi("y", C64, [b, c, m, m])], [_init("w", w)])  # fmt: skip
    feeds = {"x": _pack(x)}
    default, _ = decomplex(model)
    return Case(f"einsum_modes_b{b}c{c}m{m}_onnxruntime_target", model, feeds,
                [Baseline("the default target's Einsum", default, feeds)], target="onnxruntime")  # fmt: skip


def linear_recurrence(rng, steps=16, h=8, n=16) -> Case:
    """LRU's recurrence unrolled by its exporter (`make_fixtures.linear_recurrence`): the
    onnxruntime target's one product by its whole map against the default target's
    unrolled chain."""
    model = FIXTURES.linear_recurrence(steps, h, n)
    feeds = {"u": _pack(_crandn(rng, (steps, h)))}
    default, _ = decomplex(model)
    return Case(f"linear_recurrence_{steps}x{h}_onnxruntime_target", model, feeds,
                [Baseline("the default target's unrolled chain", default, feeds)], target="onnxruntime")  # fmt: skip


def all_cases(rng, quick: bool = False) -> list[Case]:
    """Every case; `quick` shrinks the sizes so that a smoke run takes seconds."""
    if quick:
        return [
            rope_llama(rng, s=64, h=4, d=32), rope_llama(rng, s=64, h=4, d=32, target_opset=23),
            rope_llama(rng, s=64, h=4, d=32, target="onnxruntime"),
            rope_symbolic_seq(rng, s=64, h=4, d=32), rope_jax2onnx(rng, s=64, h=4, d=32),
            rope_jax2onnx(rng, s=64, h=4, d=32, target="onnxruntime"),
            rope_flat(rng, s=64, h=4, d=32),
            elementwise_mul(rng, n=4096), chain10(rng, n=4096), elementwise_div(rng, n=4096),
            matmul_constant(rng, rows=8, k=32, m=32), matmul_runtime(rng, rows=8, k=32, m=32),
            matmul_constant(rng, rows=1, k=32, m=32, target="onnxruntime"),
            matmul_constant(rng, rows=8, k=32, m=32, target="onnxruntime", goal=0.8),
            matmul_constant(rng, rows=1, k=32, m=32, target="onnxruntime", warm=True),
            matmul_runtime(rng, rows=8, k=32, m=32, strategy="four"),
            elementwise_mul(rng, n=4096, strategy="gauss"), fnet(rng, b=2, s=8, d=16),
            fnet(rng, b=2, s=8, d=16, target="tensorrt"),
            fnet(rng, b=2, s=8, d=16, target="onnxruntime"), spectral_filter(rng, b=2, c=4, n=8),
            spectral_filter_half(rng, b=2, c=4, n=16),
            spectral_filter_half(rng, b=2, c=4, n=64, modes=4, goal=0.3),
            einsum_modes(rng, b=2, c=4, m=4), linear_recurrence(rng, steps=4, h=2, n=4),
        ]  # fmt: skip
    return [
        rope_llama(rng), rope_llama(rng, target_opset=23), rope_llama(rng, target="onnxruntime"),
        rope_symbolic_seq(rng), rope_jax2onnx(rng), rope_jax2onnx(rng, target="onnxruntime"),
        rope_flat(rng),
        elementwise_mul(rng),
        chain10(rng), elementwise_div(rng),
        matmul_constant(rng), matmul_runtime(rng, strategy="gauss"),
        matmul_constant(rng, rows=1, target="onnxruntime"),
        matmul_constant(rng, rows=64, target="onnxruntime", goal=0.8),
        matmul_constant(rng, rows=1, target="onnxruntime", warm=True),
        matmul_constant(rng, rows=64, target="onnxruntime", goal=0.8, warm=True),
        matmul_runtime(rng, strategy="four"), elementwise_mul(rng, strategy="gauss"),
        fnet(rng), fnet(rng, target="tensorrt"), fnet(rng, target="onnxruntime"),
        spectral_filter(rng), spectral_filter_half(rng),
        spectral_filter_half(rng, n=1024, modes=16, goal=0.3),
        einsum_modes(rng), linear_recurrence(rng),
    ]  # fmt: skip
