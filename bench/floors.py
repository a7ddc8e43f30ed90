"""Real-valued graphs written by hand for four whole models of fixtures/models/jax2onnx,
the fastest this project knows how to write each in standard ops: the floor that
`frameworks.py` holds a rewrite against (converted / floor).

Each is built from the weights make_models.py exported the model with, takes the
model's inputs packed (a complex input as float pairs) and gives its outputs:

- `fno1d`: FNO-1D with channels last throughout (no Transpose): the lifting layer as a
  product by its weight and a constant grid term; each Fourier layer as the forward
  transform restricted to its 8 kept modes ([2m, N] cos and -sin rows), the complex mode
  mix as one product by a block matrix (the four real products of each mode's weights),
  the irfft restricted the same way ([N, 2m]), and the pointwise mix beside it; tanh GELU
  as onnxruntime's fused node.
- `lru`: the linear recurrent unit unrolled over its 16 steps is a causal convolution
  over time, y_t = sum_s Re(C lam^(t-s) B) u_s + D u_t: one product by its block-Toeplitz
  matrix [L H, L H].
- `llama_rope_heads_first`: Llama's rotary embedding on q and k [B, H, S, D] by a
  complex freqs_cis [S, D/2] given at run time: its parts split off as the cos and sin
  caches of two standard RotaryEmbedding nodes (opset 23).
- `beamformer_mvdr`: the MVDR beamformer on 8 x 8 block matrices B(X) = [[Xr, -Xi],
  [Xi, Xr]] throughout, as an expert who reads the whole graph writes it: B(R) as one
  Gemm of B(x) (built from x's pairs by a sign and a swap) by itself, the 1/n and the
  diagonal loading its alpha and C; |R|_1 = |R|_inf, R being Hermitian, from B(R)'s first
  columns in float32; X0 = B(R)^T s / s^2, as the export divides by s + 0i (its s^2
  overflows from s = 1.8e19, at inputs 4e4 times the fixture's, and the power is inf,
  where JAX's is not); the 12 Newton-Schulz steps as a Gemm and a MatMul each;
  Re(a^H X a) for the 16 angles as one product by a constant. It gives the model's
  outputs at any scale and with inf or NaN anywhere in x (NaN power, both ways), but
  leaves out the export's special-value arithmetic (a part times 0, the modulus's guard
  for an infinite part, the second norm): no output showed it on 3,000 random inputs, as
  a non-finite part anywhere in R makes every power NaN; a rewrite that judges node by
  node cannot know that, and keeps it.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 23


def _model(nodes, inputs, outputs, constants: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "floor",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model, full_check=True)
    return model


def _restricted_transforms(n: int, modes: int) -> tuple[np.ndarray, np.ndarray]:
    """The rfft of length n restricted to its first `modes` bins, [2m, n] (real parts,
    then imaginary), and the irfft of a spectrum zero past them, [n, 2m]: irfft counts
    each bin but the first twice, and drops the first bin's imaginary part."""
    k, t = np.arange(modes)[:, None], np.arange(n)[None, :]
    angle = 2 * np.pi * k * t / n
    forward = np.concatenate([np.cos(angle), -np.sin(angle)])
    twice = np.where(k == 0, 1.0, 2.0) / n
    inverse = np.concatenate([twice * np.cos(angle), -twice * np.sin(angle)]).T
    return forward.astype(np.float32), inverse.astype(np.float32)


def _mode_mix(weights: np.ndarray) -> np.ndarray:
    """W [I, O, m] complex as the product on [2m, I] rows (real parts, then imaginary)
    onto [2m, O]: each mode's four real products."""
    i, o, m = weights.shape
    block = np.zeros((2, m, i, 2, m, o), np.float32)
    for k in range(m):
        wr, wi = weights[:, :, k].real, weights[:, :, k].imag
        block[0, k, :, 0, k], block[1, k, :, 0, k] = wr, -wi
        block[0, k, :, 1, k], block[1, k, :, 1, k] = wi, wr
    return block.reshape(2 * m * i, 2 * m * o)


def fno1d(models) -> onnx.ModelProto:
    p, modes = models.FNO1D, models.FNO_MODES
    b, n = models.FNO_B, models.FNO_N
    width = p["w0"][0].shape[0]
    forward, inverse = _restricted_transforms(n, modes)
    (w_in, b_in), (w1, b1), (w2, b2) = p["fc0"], p["fc1"], p["fc2"]
    grid = np.linspace(0, 1, n, dtype=np.float32)[:, None]
    constants = {
        "lift": w_in[:1], "lift_grid": grid * w_in[1:] + b_in,
        "forward": forward, "inverse": inverse,
        "rows": np.array([0, 2 * modes * width], np.int64),
        "modes": np.array([0, 2 * modes, width], np.int64),
        "fc1": w1, "fc1_bias": b1, "fc2": w2, "fc2_bias": b2,
    }  # fmt: skip
    nodes = [
        helper.make_node("MatMul", ["a", "lift"], ["lifted"]),
        helper.make_node("Add", ["lifted", "lift_grid"], ["x0"]),
    ]
    for layer in range(2):
        x, w = f"x{layer}", p[f"w{layer}"]
        constants |= {f"mix{layer}": _mode_mix(p[f"spectral{layer}"]),
                      f"w{layer}": w[0], f"b{layer}": w[1]}  # fmt: skip
        nodes += [
            helper.make_node("MatMul", ["forward", x], [f"spectrum{layer}"]),
            helper.make_node("Reshape", [f"spectrum{layer}", "rows"], [f"flat{layer}"]),
            helper.make_node("MatMul", [f"flat{layer}", f"mix{layer}"], [f"mixed{layer}"]),
            helper.make_node("Reshape", [f"mixed{layer}", "modes"], [f"kept{layer}"]),
            helper.make_node("MatMul", ["inverse", f"kept{layer}"], [f"spectral{layer}"]),
            helper.make_node("MatMul", [x, f"w{layer}"], [f"pointwise{layer}"]),
            helper.make_node("Add", [f"pointwise{layer}", f"b{layer}"], [f"biased{layer}"]),
            helper.make_node("Add", [f"spectral{layer}", f"biased{layer}"], [f"sum{layer}"]),
            helper.make_node("Gelu", [f"sum{layer}"], [f"x{layer + 1}"], approximate="tanh"),
        ]
    nodes += [
        helper.make_node("MatMul", ["x2", "fc1"], ["h"]),
        helper.make_node("Add", ["h", "fc1_bias"], ["h_biased"]),
        helper.make_node("Gelu", ["h_biased"], ["g"], approximate="tanh"),
        helper.make_node("MatMul", ["g", "fc2"], ["out"]),
        helper.make_node("Add", ["out", "fc2_bias"], ["u"]),
    ]
    return _model(nodes, [("a", [b, n, 1])], [("u", [b, n, 1])], constants)


def lru(models) -> onnx.ModelProto:
    p, steps, h = models.LRU, models.LRU_L, models.LRU_H
    lam = np.exp(-np.exp(p["nu_log"].astype(np.float64)) + 1j * np.exp(p["theta_log"]))
    b = (p["B_re"] + 1j * p["B_im"]) * np.exp(p["gamma_log"])[:, None]
    c = p["C_re"] + 1j * p["C_im"]
    taps = [(c * lam**d @ b).real for d in range(steps)]  # [H, H] at each lag
    m = np.zeros((steps, h, steps, h))
    for t in range(steps):
        for s in range(t + 1):
            m[t, :, s, :] = taps[t - s]
        m[t, :, t, :] += np.diag(p["D"])
    constants = {
        "map": m.reshape(steps * h, steps * h).T.astype(np.float32),
        "row": np.array([1, steps * h], np.int64),
        "shape": np.array([steps, h], np.int64),
    }
    nodes = [
        helper.make_node("Reshape", ["u", "row"], ["flat"]),
        helper.make_node("MatMul", ["flat", "map"], ["mapped"]),
        helper.make_node("Reshape", ["mapped", "shape"], ["y"]),
    ]
    return _model(nodes, [("u", [steps, h])], [("y", [steps, h])], constants)


def llama_rope_heads_first(models) -> onnx.ModelProto:
    b, heads, s, d = models.LL_B, models.LL_HEADS, models.LL_S, models.LL_HEAD_DIM
    constants = {
        "positions": np.broadcast_to(np.arange(s), (b, s)).astype(np.int64),
        "last": np.array([-1], np.int64),
    }
    nodes = [
        helper.make_node("Split", ["freqs"], ["re", "im"], axis=-1, num_outputs=2),
        helper.make_node("Squeeze", ["re", "last"], ["cos"]),
        helper.make_node("Squeeze", ["im", "last"], ["sin"]),
        *(
            helper.make_node(
                "RotaryEmbedding", [x, "cos", "sin", "positions"], [f"{x}_out"], interleaved=1
            )  # fmt: skip
            for x in ("q", "k")
        ),
    ]
    shape = [b, heads, s, d]
    inputs = [("q", shape), ("k", shape), ("freqs", [s, d // 2, 2])]
    return _model(nodes, inputs, [("q_out", shape), ("k_out", shape)], constants)


def beamformer_mvdr(models) -> onnx.ModelProto:
    m, n = models.BF_M, models.BF_N
    steering = models.STEERING.astype(np.complex128)
    # Re(a^H X a) = sum over (j, k) of X's block [j, k] times the block of a a^H's parts
    outer = np.einsum("am,an->amn", steering.conj(), steering)  # a_m^* a_n: Re, -Im
    quad = np.zeros((2 * m, 2 * m, len(steering)))
    quad[:m, :m] = outer.real.transpose(1, 2, 0)
    quad[m:, :m] = -outer.imag.transpose(1, 2, 0)
    eye = np.eye(m)
    constants = {
        "flat": np.array([m, 2 * n], np.int64),
        "signs": np.tile([1.0, -1.0], n).astype(np.float32),
        "swap": np.array([[0, 1], [1, 0]], np.float32),
        "loading": np.kron(np.eye(2), 1e-2 * eye).astype(np.float32),
        "two": np.kron(np.eye(2), 2 * eye).astype(np.float32),
        "starts": np.array([0], np.int64),
        "ends": np.array([m], np.int64),
        "axes": np.array([-1], np.int64),
        "halves": np.array([2, m, m], np.int64),
        "zero": np.array([0], np.int64),
        "one": np.array([1], np.int64),
        "whole": np.array([-1], np.int64),
        "quad": quad.reshape(4 * m * m, -1).astype(np.float32),
    }
    nodes = [
        # B(x) = [[xr, -xi], [xi, xr]] with its columns in (sample, part) order: the top
        # rows are x's pairs with the imaginary parts negated, the bottom ones swapped
        helper.make_node("Reshape", ["x", "flat"], ["pairs"]),
        helper.make_node("Mul", ["pairs", "signs"], ["top"]),
        helper.make_node("MatMul", ["x", "swap"], ["swapped"]),
        helper.make_node("Reshape", ["swapped", "flat"], ["bottom"]),
        helper.make_node("Concat", ["top", "bottom"], ["bx"], axis=0),
        # B(R) = B(x) B(x)^T / n + B(1e-2 I)
        helper.make_node("Gemm", ["bx", "bx", "loading"], ["r"], transB=1, alpha=1 / n),
        # |R|: R's parts are B(R)'s first m columns; R is Hermitian, so |R|_1 = |R|_inf
        helper.make_node("Slice", ["r", "starts", "ends", "axes"], ["parts"]),
        helper.make_node("Mul", ["parts", "parts"], ["squares"]),
        helper.make_node("Reshape", ["squares", "halves"], ["stacked"]),
        helper.make_node("ReduceSum", ["stacked", "zero"], ["square"], keepdims=0),
        helper.make_node("Sqrt", ["square"], ["modulus"]),
        helper.make_node("ReduceSum", ["modulus", "one"], ["rows"], keepdims=0),
        helper.make_node("ReduceMax", ["rows"], ["norm"], keepdims=0),
        helper.make_node("Mul", ["norm", "norm"], ["scale"]),
        # X0 = R^H / (|R|_1 |R|_inf), and B(R^H) = B(R)^T; divided as the export divides
        # by a complex s + 0i, (x s) / s^2, whose s^2 overflows to inf from s = 1.8e19
        helper.make_node("Transpose", ["r"], ["rt"], perm=[1, 0]),
        helper.make_node("Mul", ["rt", "scale"], ["scaled"]),
        helper.make_node("Mul", ["scale", "scale"], ["square_scale"]),
        helper.make_node("Div", ["scaled", "square_scale"], ["x0"]),
    ]
    for k in range(12):  # X <- X (2I - R X)
        nodes += [
            helper.make_node("Gemm", ["r", f"x{k}", "two"], [f"t{k}"], alpha=-1.0),
            helper.make_node("MatMul", [f"x{k}", f"t{k}"], [f"x{k + 1}"]),
        ]
    nodes += [
        helper.make_node("Reshape", ["x12", "whole"], ["x_flat"]),
        helper.make_node("MatMul", ["x_flat", "quad"], ["power"]),
        helper.make_node("Reciprocal", ["power"], ["p"]),
    ]
    return _model(nodes, [("x", [m, n, 2])], [("p", [len(steering)])], constants)


FLOORS = {
    "jax2onnx": {
        "fno1d": fno1d,
        "lru": lru,
        "llama_rope_heads_first": llama_rope_heads_first,
        "beamformer_mvdr": beamformer_mvdr,
    }
}
"""The floors by exporter and model: each builds the graph from the exporter's
make_models module."""
