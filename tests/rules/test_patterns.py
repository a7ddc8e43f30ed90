"""Conjugation as models spell it, and a value built exactly of its parts, recognised
whole: one node, or none, instead of a dozen."""

import numpy as np
import pytest
from helpers import (
    PACK,
    PAIR_SOURCE,
    REAL_PART,
    UNPACK,
    Ops,
    assert_rewrites,
    crandn,
    init,
    make_model,
    run_ort,
    vi,
)
from onnx import TensorProto, helper

RNG = np.random.default_rng(0)


def _types(cdtype):
    if cdtype == np.complex64:
        return TensorProto.FLOAT, TensorProto.COMPLEX64
    return TensorProto.DOUBLE, TensorProto.COMPLEX128


def _re(z, out, cdtype, prefix):
    """Re z as ONNX says it on a complex value: cast to real and back."""
    real, cplx = _types(cdtype)
    return [
        helper.make_node("Cast", [z], [f"{prefix}_r"], to=real),
        helper.make_node("Cast", [f"{prefix}_r"], [out], to=cplx),
    ]


def _consts(cdtype):
    return [init(name, np.array(v, cdtype)) for name, v in (("two", 2), ("i", 1j), ("mi", -1j))]


def _twice_re_minus_z(cdtype, double_by_add=False):
    twice = (helper.make_node("Add", ["re", "re"], ["twice"]) if double_by_add
             else helper.make_node("Mul", ["two", "re"], ["twice"]))  # fmt: skip
    return [*_re("z", "re", cdtype, "a"), twice, helper.make_node("Sub", ["twice", "z"], ["y"])]


def _im(cdtype):
    return [helper.make_node("Mul", ["z", "mi"], ["miz"]), *_re("miz", "im", cdtype, "b")]


def _re_minus_i_im(cdtype):
    return [
        *_re("z", "re", cdtype, "a"),
        *_im(cdtype),
        helper.make_node("Mul", ["i", "im"], ["i_im"]),
        helper.make_node("Sub", ["re", "i_im"], ["y"]),
    ]


def _re_plus_minus_i_im(cdtype):
    return [
        *_re("z", "re", cdtype, "a"),
        *_im(cdtype),
        helper.make_node("Mul", ["im", "mi"], ["mi_im"]),
        helper.make_node("Add", ["mi_im", "re"], ["y"]),
    ]


SPELLINGS = {
    "2Re(z)-z": _twice_re_minus_z,
    "Re(z)+Re(z)-z": lambda c: _twice_re_minus_z(c, double_by_add=True),
    "Re(z)-i*Im(z)": _re_minus_i_im,
    "-i*Im(z)+Re(z)": _re_plus_minus_i_im,
}


def _model(nodes, cdtype, opset=18, post=()):
    return make_model(
        [*nodes, *post],
        [vi("z", cdtype, [2, 3])],
        [vi("out" if post else "y", cdtype, [2, 3])],
        _consts(cdtype),
        opset=opset,
    )


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_conjugation_is_one_node(spelling, opset, cdtype):
    m = _model(SPELLINGS[spelling](cdtype), cdtype, opset)
    # z is a packed input and y a packed output: conj z is one Mul by (1, -1).
    assert_rewrites(m, ops={"Mul": 1}, feeds={"z": crandn(RNG, (2, 3), cdtype)})


def test_conjugation_of_a_pair_negates_the_imaginary_part(cdtype):
    # z * z lives as a pair; its conjugate is a Neg of one part, then the pack.
    square = helper.make_node("Mul", ["x", "x"], ["z"])
    m = make_model(
        [square, *_twice_re_minus_z(cdtype)],
        [vi("x", cdtype, [2, 3])],
        [vi("y", cdtype, [2, 3])],
        _consts(cdtype),
    )
    # The square's parts, the imaginary one negated, packed: no Cast, and no Sub but
    # the square's.
    ops = PAIR_SOURCE + Ops(Neg=1) + PACK
    assert_rewrites(m, ops=ops, feeds={"x": crandn(RNG, (2, 3), cdtype)})


def test_near_misses_are_rewritten_op_by_op(cdtype):
    # 2 Re(z) - w, with w not z: not a conjugation, and the numbers still match.
    nodes = [*_re("z", "re", cdtype, "a"), helper.make_node("Mul", ["two", "re"], ["twice"]),
             helper.make_node("Sub", ["twice", "w"], ["y"])]  # fmt: skip
    m = make_model(
        nodes,
        [vi("z", cdtype, [2, 3]), vi("w", cdtype, [2, 3])],
        [vi("y", cdtype, [2, 3])],
        _consts(cdtype),
    )
    # Re z is split off z, times 2; w is unpacked: (2 Re z - wr, -wi).
    ops = UNPACK + REAL_PART + Ops(Mul=1, Sub=1, Neg=1) + PACK
    feeds = {"z": crandn(RNG, (2, 3), cdtype), "w": crandn(RNG, (2, 3), cdtype)}
    assert_rewrites(m, ops=ops, feeds=feeds)


def test_a_narrowing_round_trip_is_not_a_real_part():
    # complex128 -> float32 -> complex128 rounds the real part: not Re z.
    nodes = [
        helper.make_node("Cast", ["z"], ["r32"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["r32"], ["re"], to=TensorProto.COMPLEX128),
        helper.make_node("Mul", ["two", "re"], ["twice"]),
        helper.make_node("Sub", ["twice", "z"], ["y"]),
    ]
    m = _model(nodes, np.complex128)
    z = crandn(RNG, (2, 3), np.complex128) * (1 + 1e-9)
    # Re z rounded to float32 and back (two Casts), times 2, minus z as in the near miss.
    ops = UNPACK + Ops(Cast=2, Mul=1, Sub=1, Neg=1) + PACK  # Re z from z's own unpacking
    assert_rewrites(m, ops=ops, feeds={"z": z}, atol=1e-12, rtol=1e-12)


# ---- view_as_real ------------------------------------------------------------------


def _view_as_real(cdtype, z="z", z_im="z", opset=18):
    """Concat(Unsqueeze(Re z, -1), Unsqueeze(Im z, -1), -1), as PyTorch exports it."""
    real, _ = _types(cdtype)
    axes = {"axes": [-1]} if opset < 13 else {}
    unsq = ["re"] if opset < 13 else ["re", "last"]
    nodes = [
        helper.make_node("Cast", [z], ["re"], to=real),
        helper.make_node("Mul", [z_im, "mi"], ["miz"]),
        helper.make_node("Cast", ["miz"], ["im"], to=real),
        helper.make_node("Unsqueeze", unsq, ["re_u"], **axes),
        helper.make_node("Unsqueeze", ["im", *unsq[1:]], ["im_u"], **axes),
        helper.make_node("Concat", ["re_u", "im_u"], ["y"], axis=-1),
    ]
    inits = [init("mi", np.array(-1j, cdtype)), init("last", np.array([-1]))]
    inputs = [vi("z", cdtype, [2, 3]), vi("w", cdtype, [2, 3])]
    out = vi("y", np.float32 if cdtype == np.complex64 else np.float64, [2, 3, 2])
    return make_model(nodes, inputs, [out], inits, opset=opset)


def test_view_as_real_of_a_packed_value_is_the_packed_tensor(opset, cdtype):
    # the input itself, under the output's name
    assert_rewrites(_view_as_real(cdtype, opset=opset), ops={"Identity": 1})


def test_view_as_real_of_two_values_is_not_folded(cdtype):
    # Re z is split off z; Im w = Re(-i w) the Squeeze of w's second half.
    ops = REAL_PART + Ops(Split=1, Squeeze=1) + PACK
    assert_rewrites(_view_as_real(cdtype, z_im="w"), ops=ops)


def test_llama_rope_below_opset_23_is_one_packed_product():
    import make_fixtures as FIXTURES

    # view_as_complex is the reshaped input itself, view_as_real the product itself:
    # z (fr, fr) + (-zi, zr) (fi, fi), the swap one Split and one Concat.
    ops = Ops(Reshape=2, Split=1, Concat=1, Mul=2, Add=1)
    assert_rewrites(FIXTURES.rope(False), ops=ops)


def _exactly_of_parts(cdtype):
    """(re, -0) + (-0, im): how TensorFlow's Complex(re, im) is read, signed zeros kept."""
    _, cplx = _types(cdtype)
    return [
        helper.make_node("Neg", ["re"], ["minus_re"]),
        helper.make_node("Cast", ["minus_re"], ["c_minus_re"], to=cplx),
        helper.make_node("Neg", ["c_minus_re"], ["left"]),
        helper.make_node("Cast", ["im"], ["c_im"], to=cplx),
        helper.make_node("Neg", ["c_im"], ["c_minus_im"]),
        helper.make_node("Mul", ["c_minus_im", "i"], ["rotated"]),
        helper.make_node("Neg", ["rotated"], ["right"]),
        helper.make_node("Add", ["left", "right"], ["y"]),
    ]


def test_a_value_built_exactly_of_its_parts_is_the_pair_itself(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    re = np.array([[0.0, -0.0, 0.0, -0.0, -1.5, -1.5, 2.0]], real)
    im = np.array([[0.0, 0.0, -0.0, -0.0, 0.0, -0.0, -3.0]], real)
    model = make_model(_exactly_of_parts(cdtype), [vi("re", real, [1, 7]), vi("im", real, [1, 7])],
                       [vi("y", cdtype, [1, 7])], [init("i", np.array(1j, cdtype))])  # fmt: skip
    out = assert_rewrites(model, ops=PACK, feeds={"re": re, "im": im})
    packed = run_ort(out, {"re": re, "im": im})[0]
    assert np.array_equal(np.signbit(packed[..., 0]), np.signbit(re))
    assert np.array_equal(np.signbit(packed[..., 1]), np.signbit(im))
