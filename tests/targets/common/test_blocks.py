"""Complex matrix products written on their parts, and sums of their parts, as products
and sums of real block matrices (`common.blocks`); big products left as written."""

import numpy as np
import onnx
import pytest
from helpers import Ops, init, make_model, op_counts, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.targets.common.blocks import blocks

F32 = np.float32


class _Parts:
    """A graph on real parts: each complex value is two names, (re, im)."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def node(self, op: str, ins: list[str]) -> str:
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out]))
        return out

    def product(self, a, c):
        """(Ar Cr - Ai Ci, Ar Ci + Ai Cr), as an exporter without complex types writes it."""
        (ar, ai), (cr, ci) = a, c
        mm = [self.node("MatMul", pair) for pair in ([ar, cr], [ai, ci], [ar, ci], [ai, cr])]
        return self.node("Sub", mm[:2]), self.node("Add", mm[2:])

    def sub(self, a, b):
        return tuple(self.node("Sub", [x, y]) for x, y in zip(a, b, strict=True))

    def constant(self, stem: str, value: np.ndarray) -> str:
        self.inits.append(init(stem, value))
        return stem


def _newton_schulz(n: int, steps: int, outside: bool = False) -> onnx.ModelProto:
    """X <- X (2I - R X) on parts, from R and X0 given: `steps` steps, two products and
    one sum each. With `outside`, the first product's real part is an output too."""
    g = _Parts()
    two = (
        g.constant("two_re", 2 * np.eye(n, dtype=F32)),
        g.constant("two_im", np.zeros((n, n), F32)),
    )
    r, x = ("r_re", "r_im"), ("x_re", "x_im")
    first = None
    for _ in range(steps):
        rx = g.product(r, x)
        first = first or rx
        x = g.product(x, g.sub(two, rx))
    g.nodes += [helper.make_node("Identity", [x[0]], ["y_re"]),
                helper.make_node("Identity", [x[1]], ["y_im"])]  # fmt: skip
    outputs = [vi("y_re", F32, [n, n]), vi("y_im", F32, [n, n])]
    if outside:
        g.nodes.append(helper.make_node("Identity", [first[0]], ["rx_re"]))
        outputs.append(vi("rx_re", F32, [n, n]))
    inputs = [vi(name, F32, [n, n]) for name in ("r_re", "r_im", "x_re", "x_im")]
    return make_model(g.nodes, inputs, outputs, g.inits)


def _feeds(n: int) -> dict[str, np.ndarray]:
    """A well-conditioned R and the first iterate of its inverse, so the steps converge."""
    rng = np.random.default_rng(0)
    r = np.eye(n) + 0.1 * (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    x = r.conj().T / (np.abs(r).sum(0).max() * np.abs(r).sum(1).max())
    return {"r_re": r.real, "r_im": r.imag, "x_re": x.real, "x_im": x.imag}


def _checked(model: onnx.ModelProto, out: onnx.ModelProto, n: int) -> None:
    onnx.checker.check_model(out, full_check=True)
    feeds = {k: v.astype(F32) for k, v in _feeds(n).items()}
    assert validate(model, out, inputs=feeds).passed


def test_a_run_of_products_is_one_matmul_a_product():
    model = _newton_schulz(8, 3)
    out, report = decomplex(model, target="onnxruntime")
    # R and X0 enter by a Neg and three Concats each; 2I is folded, and each 2I - R X is
    # one Gemm (`common.gemm`); y leaves by two Slices.
    assert op_counts(out) == Ops(MatMul=3, Gemm=3, Neg=2, Concat=6, Slice=2, Identity=2), (
        report.lowering_notes
    )
    assert any("6 complex products on parts" in note for note in report.lowering_notes)
    _checked(model, out, 8)


def test_the_iteration_converges_to_the_inverse():
    """The block form computes what the parts did: R X tends to I."""
    model = _newton_schulz(8, 8)
    out, _ = decomplex(model, target="onnxruntime")
    import onnxruntime as ort

    feeds = _feeds(8)
    session = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    y_re, y_im = session.run(None, {k: v.astype(F32) for k, v in feeds.items()})
    r = feeds["r_re"] + 1j * feeds["r_im"]
    np.testing.assert_allclose(r @ (y_re + 1j * y_im), np.eye(8), atol=1e-4)


def test_a_part_read_outside_the_run_is_sliced_from_its_block():
    model = _newton_schulz(8, 2, outside=True)
    out, _ = decomplex(model, target="onnxruntime")
    counts = op_counts(out)
    assert counts["Slice"] == 3 and counts["MatMul"] + counts["Gemm"] == 4
    _checked(model, out, 8)


def test_big_products_stay_four():
    """At 64 x 64 the doubled multiply-adds cost more than the nodes they save (each
    real part's difference of products is one Gemm)."""
    model = _newton_schulz(64, 1)
    out, report = decomplex(model, target="onnxruntime")
    assert op_counts(out)["MatMul"] + op_counts(out)["Gemm"] == 8
    assert not [note for note in report.lowering_notes if "block" in note]


def test_one_product_of_runtime_parts_stays():
    """Eight nodes to enter and two to leave cost more than the five one product saves."""
    g = _Parts()
    z = g.product(("a_re", "a_im"), ("c_re", "c_im"))
    g.nodes += [
        helper.make_node("Identity", [part], [name])
        for part, name in zip(z, ("y_re", "y_im"), strict=True)
    ]
    inputs = [vi(name, F32, [4, 4]) for name in ("a_re", "a_im", "c_re", "c_im")]
    model = make_model(g.nodes, inputs, [vi("y_re", F32, [4, 4]), vi("y_im", F32, [4, 4])])
    assert blocks(model) == []


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_a_complex_matrix_power_runs_as_block_products(target):
    """A native complex model: small complex MatMuls take four real products (not
    Gauss's three), which the target reads as block products."""
    n = 6
    nodes = [helper.make_node("MatMul", ["a", "a"], ["a2"]),
             helper.make_node("MatMul", ["a2", "a"], ["a3"]),
             helper.make_node("MatMul", ["a3", "a"], ["y"])]  # fmt: skip
    model = make_model(nodes, [vi("a", np.complex64, [n, n])], [vi("y", np.complex64, [n, n])])
    out, report = decomplex(model, target=target)
    assert op_counts(out)["MatMul"] == 3, report.lowering_notes
    onnx.checker.check_model(out, full_check=True)
    assert validate(model, out).passed


def test_a_long_chain_before_a_run_is_walked_without_recursion():
    """Whether a run's parts are constants is asked of 400 Sins before it (no affine
    chain to fuse first): no RecursionError, and the run still becomes block products."""
    g = _Parts()
    part = "r_re"
    for _ in range(400):
        part = g.node("Sin", [part])
    x = ("x_re", "x_im")
    for _ in range(3):
        x = g.product((part, "r_im"), x)
    g.nodes += [helper.make_node("Identity", [x[0]], ["y_re"]),
                helper.make_node("Identity", [x[1]], ["y_im"])]  # fmt: skip
    inputs = [vi(name, F32, [8, 8]) for name in ("r_re", "r_im", "x_re", "x_im")]
    model = make_model(g.nodes, inputs, [vi("y_re", F32, [8, 8]), vi("y_im", F32, [8, 8])])
    out, report = decomplex(model, target="onnxruntime")
    assert op_counts(out)["MatMul"] == 3, report.lowering_notes
    _checked(model, out, 8)


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_a_product_read_inside_a_branch_leaves_the_run_for_it(target):
    """A complex product that an If's branches read (a sum with it in one, a product in
    the other): the branches' nodes join no run, and no node a branch reads is dropped
    as unread (found by the fuzzer: a KeyError, then a branch reading a removed value)."""
    c64 = np.complex64
    then = helper.make_graph([helper.make_node("Mul", ["x", "p"], ["t"])], "then", [],
                             [vi("t", c64, [1, 2])])  # fmt: skip
    other = helper.make_graph([helper.make_node("Add", ["p", "x"], ["e"])], "else", [],
                              [vi("e", c64, [1, 2])])  # fmt: skip
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["p"]),
         helper.make_node("If", ["flag"], ["y"], then_branch=then, else_branch=other)],
        [vi("x", c64, [1, 1]), vi("w", c64, [1, 2]), vi("flag", np.bool_, [])],
        [vi("y", c64, [1, 2])],
    )  # fmt: skip
    out, _ = decomplex(model, target=target)
    rng = np.random.default_rng(5)
    for flag in (False, True):
        feeds = {"x": (rng.standard_normal((1, 1)) + 1j).astype(c64),
                 "w": (rng.standard_normal((1, 2)) - 1j).astype(c64), "flag": np.array(flag)}  # fmt: skip
        assert validate(model, out, feeds).passed
