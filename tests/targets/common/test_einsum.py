"""An Einsum of two operands as one MatMul (`targets.common.einsum.plan`, the onnxruntime and
TensorRT targets): the nodes emitted, and the numbers against numpy's einsum, for the
equations exporters write and for random ones."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import init, make_model, op_types, run_ort, vi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper

from onnx_decomplex import decomplex
from onnx_decomplex.targets.common.einsum import plan


def einsum_model(equation, x_shape, w=None, w_shape=None, w_first=False, x_dims=None):
    """Einsum(x, w) (or (w, x)); w a constant where given, else a second input."""
    inputs = [vi("x", np.float32, x_dims or x_shape)]
    inits = [init("w", w)] if w is not None else []
    if w is None:
        inputs.append(vi("w", np.float32, w_shape))
    names = ["w", "x"] if w_first else ["x", "w"]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    terms, out = equation.split("->")
    shapes = [x_dims or x_shape, w_shape if w is None else w.shape]
    letters, sizes = "".join(terms.split(",")), [*shapes[w_first], *shapes[not w_first]]
    dims = dict(zip(letters, sizes, strict=True))
    return make_model([node], inputs, [vi("y", np.float32, [dims[c] for c in out])], inits)


def lowered(model, feeds, equation, operands, target="onnxruntime"):
    """The rewrite's ops, after checking its numbers against np.einsum."""
    out, _ = decomplex(model, target=target)
    onnx.checker.check_model(out, full_check=True)
    (y,) = run_ort(out, feeds)
    np.testing.assert_allclose(y, np.einsum(equation, *operands), rtol=1e-4, atol=1e-4)
    return op_types(out)


@pytest.mark.parametrize(
    ("equation", "a", "b", "ops"),
    [
        ("ij,jk->ik", [3, 4], [4, 5], ["MatMul"]),
        ("bij,jk->bik", [2, 3, 4], [4, 5], ["MatMul"]),
        ("bhij,hjk->bhik", [2, 3, 4, 5], [3, 5, 6], ["MatMul"]),
        ("ij,kj->ik", [3, 4], [5, 4], ["MatMul"]),  # a constant written transposed
        ("bij,bkj->bik", [2, 3, 4], [2, 5, 4], ["MatMul"]),
        ("bix,io->box", [2, 8, 16], [8, 6], ["MatMul"]),  # the weight on the left
        ("bixy,io->boxy", [1, 8, 16, 16], [8, 8], ["MatMul", "Reshape", "Reshape"]),
        ("ij,jk->ki", [3, 4], [4, 5], ["MatMul", "Transpose"]),  # the product transposed
        ("ij,j->i", [3, 4], [4], ["MatMul", "Reshape"]),  # a vector: w as a column
        # FNO's mixing of its kept modes, the complex product table folded into w
        (
            "bixya,ioxyad->boxyd",
            [1, 8, 4, 4, 2],
            [8, 8, 4, 4, 2, 2],
            ["MatMul", "Reshape", "Reshape", "Transpose", "Transpose"],
        ),
        ("ii,ij->ij", [3, 3], [3, 4], ["Einsum"]),  # a diagonal
        ("ij,jk->i", [3, 4], [4, 5], ["Einsum"]),  # k summed alone
    ],
)
def test_an_einsum_with_a_constant_is_one_matmul(equation, a, b, ops):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(a).astype(np.float32), rng.standard_normal(b).astype(np.float32)
    assert lowered(einsum_model(equation, a, w), {"x": x}, equation, [x, w]) == sorted(ops)


def test_a_constant_first_operand_is_arranged_at_rewrite_time():
    """jax2onnx's DFT along a middle axis, the product table folded: w (first) is
    transposed in numpy, x on both sides of the MatMul by a Transpose each."""
    equation, rng = "khde,bchwd->bckwe", np.random.default_rng(1)
    w = rng.standard_normal((16, 16, 2, 2)).astype(np.float32)
    x = rng.standard_normal((1, 8, 16, 9, 2)).astype(np.float32)
    model = einsum_model(equation, x.shape, w, w_first=True)
    ops = lowered(model, {"x": x}, equation, [w, x])
    assert ops == sorted(["Transpose", "Reshape", "MatMul", "Reshape", "Transpose"])


def test_two_runtime_operands_are_arranged_by_nodes():
    equation, rng = "ij,kj->ik", np.random.default_rng(2)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    model = einsum_model(equation, [3, 4], w_shape=[5, 4])
    assert lowered(model, {"x": x, "w": w}, equation, [x, w]) == ["MatMul", "Transpose"]


@pytest.mark.parametrize("batch", [3, 0])
def test_a_symbolic_batch_is_copied_not_inferred(batch):
    """A Reshape copies a symbolic dim by 0, so that an empty batch still runs."""
    equation, rng = "bixy,io->boxy", np.random.default_rng(3)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    x = rng.standard_normal((batch, 8, 5, 6)).astype(np.float32)
    model = einsum_model(equation, None, w, x_dims=["b", 8, 5, 6])
    assert lowered(model, {"x": x}, equation, [x, w]) == ["MatMul", "Reshape", "Reshape"]


def test_two_symbolic_dims_to_flatten_take_transposes_instead():
    """Two sizes to infer in one Reshape: a Transpose on each side instead."""
    found = plan("bixy,io->boxy", 0, [None, 8, None, None], [8, 8])
    assert found.x_perm == (0, 2, 3, 1) and found.y_perm == (0, 3, 1, 2)
    assert found.x_shape is None and found.y_shape is None


def test_the_tensorrt_target_takes_the_same_form():
    equation, rng = "bixy,io->boxy", np.random.default_rng(4)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    x = rng.standard_normal((2, 8, 5, 6)).astype(np.float32)
    ops = lowered(einsum_model(equation, x.shape, w), {"x": x}, equation, [x, w], "tensorrt")
    assert ops == ["MatMul", "Reshape", "Reshape"]


@st.composite
def equations(draw):
    """Two terms over up to 6 letters, each letter kept, summed, or held by one side."""
    letters = "abcdef"[: draw(st.integers(1, 6))]
    a, b, out = [], [], []
    for letter in letters:
        where = draw(st.sampled_from(["both", "both_out", "a_out", "b_out"]))
        if where != "b_out":
            a.append(letter)
        if where != "a_out":
            b.append(letter)
        if where != "both":
            out.append(letter)
    if not a or not b:
        return draw(equations())
    a, b, out = (draw(st.permutations(t)) for t in (a, b, out))
    sizes = {letter: draw(st.integers(1, 4)) for letter in letters}
    return "".join(a), "".join(b), "".join(out), sizes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(equations(), st.booleans(), st.booleans())
def test_random_einsums_match_numpy(terms, w_first, w_runtime):
    a, b, out, sizes = terms
    equation = f"{a},{b}->{out}"
    rng = np.random.default_rng(5)
    x = rng.standard_normal([sizes[c] for c in a]).astype(np.float32)
    w = rng.standard_normal([sizes[c] for c in b]).astype(np.float32)
    if w_first:
        equation = f"{b},{a}->{out}"
    operands = [w, x] if w_first else [x, w]
    if w_runtime:
        model = einsum_model(equation, x.shape, w_shape=w.shape, w_first=w_first)
        feeds = {"x": x, "w": w}
    else:
        model = einsum_model(equation, x.shape, w, w_first=w_first)
        feeds = {"x": x}
    ops = lowered(model, feeds, equation, operands)
    assert "Einsum" not in ops  # no letter repeats or is summed alone: always a plan


def test_the_constants_of_a_longer_einsum_are_contracted_first():
    """A beamformer's a^H R a with the sign tensor of a complex product: three constants,
    one of them computed by a node, contracted in numpy into one, then one MatMul."""
    rng = np.random.default_rng(3)
    equation = "amb,mnc,and,bcde->ae"
    steer, signs = (
        rng.standard_normal((5, 4, 2)).astype(np.float32),
        rng.standard_normal((2, 2, 2, 2)),
    )
    nodes = [helper.make_node("Neg", ["s"], ["minus_s"]),
             helper.make_node("Einsum", ["minus_s", "x", "s", "t"], ["y"], equation=equation)]  # fmt: skip
    model = make_model(
        nodes,
        [vi("x", np.float32, [4, 4, 2])],
        [vi("y", np.float32, [5, 2])],
        [init("s", steer), init("t", signs.astype(np.float32))],
    )
    x = rng.standard_normal((4, 4, 2)).astype(np.float32)
    operands = [-steer, x, steer, signs.astype(np.float32)]
    ops = lowered(model, {"x": x}, equation, operands)
    assert "Einsum" not in ops and ops.count("MatMul") == 1


def test_a_longer_einsum_of_two_runtime_operands_stays():
    nodes = [helper.make_node("Einsum", ["x", "w", "c"], ["y"], equation="ab,bc,cd->ad")]
    model = make_model(
        nodes,
        [vi("x", np.float32, [2, 3]), vi("w", np.float32, [3, 4])],
        [vi("y", np.float32, [2, 5])],
        [init("c", np.ones((4, 5), np.float32))],
    )
    out, _ = decomplex(model, target="onnxruntime")
    assert op_types(out) == ["Einsum"]


def test_two_longer_einsums_of_one_operand_keep_their_own_constants():
    """Each folded constant has a name of its own: two Einsums of the same x and letters
    over other constants must not share one."""
    rng = np.random.default_rng(5)
    a, b, c, d = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(4))
    nodes = [helper.make_node("Einsum", ["x", "a", "b"], ["y1"], equation="ij,jk,kl->il"),
             helper.make_node("Einsum", ["x", "c", "d"], ["y2"], equation="ij,jk,kl->il")]  # fmt: skip
    model = make_model(
        nodes,
        [vi("x", np.float32, [3, 4])],
        [vi("y1", np.float32, [3, 4]), vi("y2", np.float32, [3, 4])],
        [init("a", a), init("b", b), init("c", c), init("d", d)],
    )
    x = rng.standard_normal((3, 4)).astype(np.float32)
    out, _ = decomplex(model, target="onnxruntime")
    y1, y2 = run_ort(out, {"x": x})
    np.testing.assert_allclose(y1, x @ a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y2, x @ c @ d, rtol=1e-4, atol=1e-4)
