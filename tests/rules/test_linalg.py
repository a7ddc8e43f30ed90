"""MatMul, Gemm, Einsum, Conv and ConvTranspose with complex operands."""

import numpy as np
import pytest
from helpers import (
    PACK,
    UNPACK,
    Ops,
    assert_ops,
    assert_rewrites,
    crandn,
    init,
    make_model,
    on_parts,
    run_ort,
    single,
    vi,
)
from onnx import helper

from onnx_decomplex import decomplex
from onnx_decomplex.cmath import pack, unpack
from onnx_decomplex.rules import linalg

RNG = np.random.default_rng(3)
STRATEGY = pytest.mark.parametrize("strategy", ["four", "gauss"])


def _gauss(op: str, w_constant: bool = False, matrices: bool = False) -> Ops:
    """Three products: (ar br - ai bi) + i ((ar + ai)(br + bi) - ar br - ai bi), with
    br + bi summed in numpy when b is a constant. Between `matrices` (both of rank 2,
    no size 0), the product only the first difference reads is one Gemm with it
    (`targets.common.gemm`)."""
    if matrices:
        return Ops({op: 2, "Gemm": 1, "Sub": 2, "Add": 1 if w_constant else 2})
    return Ops({op: 3, "Sub": 3, "Add": 1 if w_constant else 2})


def _four(op: str, matrices: bool = False) -> Ops:
    """(ar br - ai bi) + i (ar bi + ai br); between `matrices`, ar br less ai bi is one
    Gemm."""
    if matrices:
        return Ops({op: 3, "Gemm": 1, "Add": 1})
    return Ops({op: 4, "Sub": 1, "Add": 1})


BLOCK = Ops(Reshape=2, MatMul=1)
"""z W for a constant W: [zr zi] [[Wr, Wi], [-Wi, Wr]], z's parts moved beside each
other by one Reshape and the product's moved back by another."""


def _real(cdtype):
    return np.float32 if cdtype == np.complex64 else np.float64


@STRATEGY
@pytest.mark.parametrize("a_shape, b_shape", [((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                                              ((3,), (3, 2)), ((2, 2, 3), (2, 3, 1))])  # fmt: skip
def test_matmul_runtime_operands(opset, cdtype, a_shape, b_shape, strategy):
    m = single("MatMul", cdtype, opset, shape=a_shape, inputs=["a", "b"],
               extra=[vi("b", cdtype, list(b_shape))])  # fmt: skip
    matrices = len(a_shape) == len(b_shape) == 2
    product = (
        _gauss("MatMul", matrices=matrices) if strategy == "gauss" else _four("MatMul", matrices)
    )
    assert_rewrites(m, ops=2 * UNPACK + product + PACK, mul_strategy=strategy)


@pytest.mark.parametrize("a_shape, w_shape", [((2, 3), (3, 4)), ((4, 2, 3), (3, 5)),
                                              ((3,), (3, 2)), ((2, 3), (3,))])  # fmt: skip
def test_matmul_constant_weight_is_one_block_matmul(opset, cdtype, a_shape, w_shape):
    m = single("MatMul", cdtype, opset, shape=a_shape, inputs=["a", "w"],
               inits=[init("w", crandn(RNG, w_shape, cdtype))])  # fmt: skip
    # A vector W has no columns to move back: one Reshape.
    assert_rewrites(m, ops=BLOCK if len(w_shape) > 1 else Ops(Reshape=1, MatMul=1))


@pytest.fixture
def regime_always(monkeypatch):
    """The onnxruntime target's forms of x W for any W, small ones too."""
    monkeypatch.setattr(linalg, "REGIME_FROM_BYTES", 0)


STACKED = Ops(Transpose=1, Reshape=3, MatMul=2, Split=1, Add=1)
"""x W for few rows: [zr; zi] times W's parts interleaved, joined as zr W + i (zi W)."""


@pytest.mark.parametrize(
    "rows, k, n, form",
    [(4, 6, 5, "block"), (1, 64, 64, "block"), (16, 256, 256, "block"), (3, 256, 256, "block"),
     (32, 256, 256, "3M"), (1, 512, 512, "stacked"), (4, 512, 512, "3M"), (None, 8, 8, "block")],
    ids=str,
)  # fmt: skip
def test_the_onnxruntime_forms_of_a_constant_weight_are_taken_where_they_pay(rows, k, n, form):
    """onnxruntime's target takes its forms of x W by a constant W where W's block has
    4 MiB or the product 2M multiply-adds (a row count not static: by W alone); below,
    the block form's one product, which ran 1.2 to 1.5 times faster there."""
    w = crandn(RNG, (k, n), np.complex64)
    m = single("MatMul", np.complex64, shape=("n" if rows is None else rows, k),
               inputs=["a", "w"], inits=[init("w", w)])  # fmt: skip
    out, _ = decomplex(m, target="onnxruntime")
    three = UNPACK + _gauss("MatMul", w_constant=True, matrices=True) + PACK
    assert_ops(out, {"block": BLOCK, "stacked": STACKED, "3M": three}[form])


@pytest.mark.usefixtures("regime_always")
@pytest.mark.parametrize("a_shape", [(1, 6), (2, 6), (3, 6), (3, 1, 6)])
def test_matmul_constant_weight_for_few_rows_reads_it_once(opset, cdtype, a_shape):
    """onnxruntime's target, up to three rows: [zr; zi] times W's parts interleaved, one
    MatMul whose rows are zr W and zi W packed, joined as zr W + i (zi W)."""
    m = single("MatMul", cdtype, opset, shape=a_shape, inputs=["a", "w"],
               inits=[init("w", crandn(RNG, (6, 5), cdtype))])  # fmt: skip
    assert_rewrites(m, ops=STACKED, target="onnxruntime")


@pytest.mark.usefixtures("regime_always")
@pytest.mark.parametrize("a_shape", [(4, 6), (2, 2, 6), ("n", 6)])
def test_matmul_constant_weight_for_many_rows_takes_three_products(opset, cdtype, a_shape):
    """onnxruntime's target, more than three rows or a row count that is not static: the 3M
    method, Wr + Wi made in numpy."""
    m = single("MatMul", cdtype, opset, shape=a_shape, inputs=["a", "w"],
               inits=[init("w", crandn(RNG, (6, 5), cdtype))])  # fmt: skip
    # A row count that is not static leaves C's shape unknown to Gemm's broadcast.
    ops = UNPACK + _gauss("MatMul", w_constant=True, matrices=a_shape == (4, 6)) + PACK
    shapes = {"a": (7, 6)} if "n" in a_shape else None
    assert_rewrites(m, ops=ops, target="onnxruntime", input_shapes=shapes)


@pytest.mark.usefixtures("regime_always")
@pytest.mark.parametrize("a_shape", [(0, 6), (2, 0, 6)])
def test_matmul_constant_weight_for_no_rows_takes_three_products(cdtype, a_shape):
    """No rows is not few: the stacked form's Reshapes would read a 0 size as "copy"."""
    m = single("MatMul", cdtype, shape=a_shape, inputs=["a", "w"],
               inits=[init("w", crandn(RNG, (6, 5), cdtype))])  # fmt: skip
    assert_rewrites(m, ops=UNPACK + _gauss("MatMul", w_constant=True) + PACK, target="onnxruntime")


def test_matmul_constant_on_the_left(cdtype):
    m = single("MatMul", cdtype, shape=(3, 2), inputs=["w", "a"],
               inits=[init("w", crandn(RNG, (4, 3), cdtype))])  # fmt: skip
    assert_rewrites(m, ops=UNPACK + _gauss("MatMul", w_constant=True, matrices=True) + PACK)


@pytest.mark.parametrize("real_first", [False, True])
def test_matmul_with_a_real_operand_against_numpy(cdtype, real_first):
    z, r = crandn(RNG, (2, 3), cdtype), RNG.standard_normal((3, 3)).astype(_real(cdtype))
    m = single("MatMul", cdtype, shape=(2, 3) if not real_first else (3, 3),
               inputs=["r", "a"] if real_first else ["a", "r"],
               extra=[vi("r", _real(cdtype), [3, 3] if not real_first else [2, 3])])  # fmt: skip
    out, _ = decomplex(m)
    assert_ops(out, on_parts({"MatMul": 2}))  # each part times the real operand
    if real_first:
        z, r = crandn(RNG, (3, 3), cdtype), RNG.standard_normal((2, 3)).astype(_real(cdtype))
    (got,) = run_ort(out, {"a": pack(z), "r": r})
    np.testing.assert_allclose(unpack(got), r @ z if real_first else z @ r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("trans", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("c_shape", [None, (4,), (2, 4), (2, 1)])
@pytest.mark.parametrize("constant_b", [False, True])
def test_gemm(opset, cdtype, trans, c_shape, constant_b):
    a_shape = (3, 2) if trans[0] else (2, 3)
    b_shape = (4, 3) if trans[1] else (3, 4)
    names = ["a", "b"] + (["c"] if c_shape else [])
    extra = [] if constant_b else [vi("b", cdtype, list(b_shape))]
    inits = [init("b", crandn(RNG, b_shape, cdtype))] if constant_b else []
    if c_shape:
        extra.append(vi("c", cdtype, list(c_shape)))
    m = single("Gemm", cdtype, opset, shape=a_shape, inputs=names, extra=extra, inits=inits,
               attrs={"transA": trans[0], "transB": trans[1], "alpha": 0.5, "beta": 2.0})  # fmt: skip
    # alpha A B by three Gemms, then beta C added to each part.
    ops = (1 + (not constant_b)) * UNPACK + _gauss("Gemm", constant_b) + PACK
    if c_shape:
        ops += UNPACK + Ops(Mul=2, Add=2)
    assert_rewrites(m, ops=ops)


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
        ("ij->ji", [(2, 3)]),
        ("ii->i", [(3, 3)]),
        ("ij,ij", [(2, 3), (2, 3)]),
        ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 2)]),
        ("i,i->", [(3,), (3,)]),
    ],
)
def test_einsum(cdtype, equation, shapes):
    names = ["a"] + [f"b{i}" for i in range(1, len(shapes))]
    extra = [vi(n, cdtype, list(s)) for n, s in zip(names[1:], shapes[1:], strict=True)]
    m = single("Einsum", cdtype, 18, shape=shapes[0], inputs=names, extra=extra,
               attrs={"equation": equation})  # fmt: skip
    # One more index for the parts of the one complex operand, or the pair of parts
    # summed over by the ops' product: one Einsum on the packed tensors.
    assert_rewrites(m, ops={"Einsum": 1})


@pytest.mark.parametrize("first", [False, True])
def test_einsum_by_a_constant_folds_the_product_table_into_it(cdtype, first):
    """A Fourier layer's `bix,iox->box` by constant weights: the table of the complex
    product is folded into the weights at rewrite time, one Einsum of two operands,
    which every target then runs as one MatMul (`targets.common.einsum`), its weights
    [x, (i, re/im), (o, re/im)] arranged at rewrite time too."""
    w = init("w", crandn(np.random.default_rng(3), [3, 4, 5], cdtype))
    equation, inputs = ("iox,bix->box", ["w", "z"]) if first else ("bix,iox->box", ["z", "w"])
    m = make_model([helper.make_node("Einsum", inputs, ["y"], equation=equation)],
                   [vi("z", cdtype, [2, 3, 5])], [vi("y", cdtype, [2, 4, 5])], [w])  # fmt: skip
    out = assert_rewrites(m, ops={"Transpose": 2, "Reshape": 2, "MatMul": 1})
    (matmul,) = [n for n in out.graph.node if n.op_type == "MatMul"]
    folded = next(t for t in out.graph.initializer if t.name in matmul.input)
    assert list(folded.dims) == [5, 3 * 2, 4 * 2]


@pytest.mark.parametrize("op", ["Conv", "ConvTranspose"])
@pytest.mark.parametrize("weight", ["constant", "runtime", "real"])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("group", [1, 2])
def test_conv(opset, cdtype, op, weight, bias, group):
    if op == "ConvTranspose" and group > 1:
        pytest.skip("the reference evaluator cannot run a grouped ConvTranspose")
    x_shape, w_shape = (1, 4, 5, 5), (6, 4 // group, 3, 3)
    if op == "ConvTranspose":
        w_shape = (4, 6 // group, 3, 3)
    n_out = 6
    names = ["a", "w"] + (["bias"] if bias else [])
    extra, inits = [], []
    if weight == "constant":
        inits.append(init("w", crandn(RNG, w_shape, cdtype)))
    elif weight == "runtime":
        extra.append(vi("w", cdtype, list(w_shape)))
    else:
        inits.append(init("w", RNG.standard_normal(w_shape).astype(_real(cdtype))))
    if bias:
        value = crandn(RNG, (n_out,), cdtype)
        inits.append(init("bias", value if weight != "real" else value.real.copy()))
    attrs = {"group": group, "pads": [1, 1, 1, 1]}
    m = single(op, cdtype, opset, shape=x_shape, inputs=names, extra=extra, inits=inits,
               attrs=attrs)  # fmt: skip
    if weight == "real":
        _check_real_weight(m, op, cdtype, names, attrs, x_shape)
        return
    if weight == "constant" and group == 1:
        # One convolution of [xr, xi] stacked on channels by [[Wr, -Wi], [Wi, Wr]].
        convs, ops = 1, Ops({op: 1}) + Ops(Split=2, Squeeze=2, Unsqueeze=2, Concat=2)
    else:
        convs, ops = 3, (1 + (weight == "runtime")) * UNPACK + _gauss(op, weight == "constant")
        ops += PACK + Ops(Add=2 * bias)
    if cdtype == np.complex128:
        # onnxruntime has no float64 convolution: each runs in float32, its runtime
        # inputs cast there and its output back.
        ops += Ops(Cast=convs * (2 + (weight == "runtime" and convs == 3)))
    assert_rewrites(m, ops=ops, atol=1e-4)


def _real_weight_ops(op, cdtype, bias: bool) -> Ops:
    """Each part convolved by the real weight; a real bias added to the real part. In
    float64, each convolution runs in float32 (its part cast there, its output back)."""
    return on_parts({op: 2, "Add": int(bias), "Cast": 4 * (cdtype == np.complex128)})


def _check_real_weight(m, op, cdtype, names, attrs, x_shape):
    """A real weight meets a complex input, which the reference refuses; its meaning
    is that of the same model with the weight (and bias) cast to complex first."""
    from onnx import TensorProto, helper

    from onnx_decomplex.validate import run_reference

    to = TensorProto.COMPLEX64 if cdtype == np.complex64 else TensorProto.COMPLEX128
    cast = [helper.make_node("Cast", [n], [f"{n}_c"], to=to) for n in names[1:]]
    conv = helper.make_node(op, ["a", *[f"{n}_c" for n in names[1:]]], ["y"], **attrs)
    casted = helper.make_model(
        helper.make_graph(cast + [conv], "g", list(m.graph.input), list(m.graph.output),
                          list(m.graph.initializer)),
        opset_imports=m.opset_import, ir_version=m.ir_version,
    )  # fmt: skip
    z = crandn(RNG, x_shape, cdtype)
    (expected,) = run_reference(casted, {"a": z})
    out = decomplex(m)[0]
    assert_ops(out, _real_weight_ops(op, cdtype, bias=len(names) > 2))
    (got,) = run_ort(out, {"a": pack(z)})
    np.testing.assert_allclose(unpack(got), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shapes", [([2, 0], [0, 3]), ([0, 2], [2, 3]), ([2, 3], [3, 0])], ids=str)
@pytest.mark.parametrize("constant", [False, True], ids=["runtime", "constant"])
def test_matmul_with_a_zero_size_dim(cdtype, shapes, constant):
    (sa, sb), inits, extra = shapes, [], []
    if constant:
        inits = [init("b", np.zeros(sb, cdtype))]
    else:
        extra = [vi("b", cdtype, sb)]
    if not constant:
        ops = 2 * UNPACK + _gauss("MatMul") + PACK
    elif sb[1] and sa[1]:
        ops = BLOCK
    else:  # a zero-size W has no block form
        ops = UNPACK + _gauss("MatMul", w_constant=True) + PACK
    model = single("MatMul", cdtype, shape=sa, inputs=["a", "b"], extra=extra, inits=inits)
    assert_rewrites(model, ops=ops)


def test_constant_weight_on_a_value_empty_at_run_time(cdtype):
    # Compress's output size is known only at run time: the block form's Reshapes take
    # their sizes from W, since -1 cannot be inferred beside a zero-size dim.
    w = (np.arange(6).reshape(3, 2) + 1j).astype(cdtype)
    model = make_model(
        [helper.make_node("Compress", ["z", "mask"], ["c"], axis=0),
         helper.make_node("MatMul", ["c", "w"], ["y"])],
        [vi("z", cdtype, [4, 3]), vi("mask", np.bool_, [4])],
        [vi("y", cdtype, None)],
        [init("w", w)],
    )  # fmt: skip
    z = (np.arange(12).reshape(4, 3) * (1 - 1j)).astype(cdtype)
    for mask in ([False] * 4, [True, False, True, False]):
        assert_rewrites(model, ops=Ops(Compress=1) + BLOCK, feeds={"z": z, "mask": np.array(mask)})
