"""TensorFlow's complex ops as tf2onnx leaves them: raw, in the default domain, with no
attributes. Each test builds such a graph by hand, converts it, and compares with numpy
computing TensorFlow's meaning. The real exports are in tests/test_tf2onnx.py; what
tf2onnx converts as if real is in test_tf2onnx_readings.py.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from exported import converted
from helpers import crandn, init, make_model, vi
from onnx import helper

from onnx_decomplex import decomplex
from onnx_decomplex.files.tensorflow import TENSORFLOW_OPS
from onnx_decomplex.normalize import NormalizeError

RNG = np.random.default_rng(7)
C64, F32 = np.complex64, np.float32
_converted = functools.partial(converted, atol=1e-5)


def _one(op, x, *extra, out_dtype, out_shape, inits=()):
    """A model of one raw TensorFlow `op` on input 'x' (and `extra` inputs)."""
    names = ["x", *(e.name for e in extra), *(t.name for t in inits)]
    node = helper.make_node(op, names, ["y"], name=op.lower())
    return make_model([node], [vi("x", x.dtype, list(x.shape)), *extra],
                      [vi("y", out_dtype, out_shape)], inits)  # fmt: skip


Z = crandn(RNG, (3, 8))
UNARY = {
    "Real": (np.real, F32),
    "Imag": (np.imag, F32),
    "Conj": (np.conj, C64),
    "ComplexAbs": (np.abs, F32),
    "Angle": (np.angle, F32),
    "FFT": (np.fft.fft, C64),
    "IFFT": (np.fft.ifft, C64),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_op_has_tensorflows_meaning(op):
    fn, dtype = UNARY[op]
    expected = fn(Z).astype(dtype)
    _, report = _converted(_one(op, Z, out_dtype=dtype, out_shape=list(Z.shape)), {"x": Z},
                           [expected])  # fmt: skip
    assert report.readings == [f"{op.lower()} ({op}): TensorFlow's {op}, left as it is by tf2onnx"]


def test_complex_broadcasts_its_parts():
    re, im = RNG.standard_normal((3, 4)).astype(F32), RNG.standard_normal(4).astype(F32)
    model = make_model([helper.make_node("Complex", ["re", "im"], ["y"])],
                       [vi("re", F32, [3, 4]), vi("im", F32, [4])], [vi("y", C64, [3, 4])])  # fmt: skip
    _converted(model, {"re": re, "im": im}, [re + 1j * im])


def test_conjugate_transpose_takes_its_perm():
    z = crandn(RNG, (2, 3, 4))
    perm = init("perm", np.array([2, 0, 1], np.int32))
    model = _one("ConjugateTranspose", z, out_dtype=C64, out_shape=[4, 2, 3], inits=[perm])
    _converted(model, {"x": z}, [np.conj(z).transpose(2, 0, 1)])


@pytest.mark.parametrize(("op", "axes"), [("FFT2D", (-2, -1)), ("IFFT2D", (-2, -1)),
                                          ("FFT3D", (-3, -2, -1)), ("IFFT3D", (-3, -2, -1))])  # fmt: skip
def test_fft_nd_transforms_the_innermost_axes(op, axes):
    z = crandn(RNG, (2, 3, 4, 8))
    fn = np.fft.ifftn if op.startswith("I") else np.fft.fftn
    model = _one(op, z, out_dtype=C64, out_shape=list(z.shape))
    _converted(model, {"x": z}, [fn(z, axes=axes)], atol=1e-4)


@pytest.mark.parametrize("length", [6, 8, 11])
def test_rfft_pads_or_crops_to_fft_length(length):
    x = RNG.standard_normal((3, 8)).astype(F32)
    n = init("n", np.array([length], np.int32))
    model = _one("RFFT", x, out_dtype=C64, out_shape=[3, length // 2 + 1], inits=[n])
    _converted(model, {"x": x}, [np.fft.rfft(x, n=length)])


def test_rfft2d_takes_two_lengths():
    x = RNG.standard_normal((2, 4, 8)).astype(F32)
    n = init("n", np.array([6, 10], np.int32))
    model = _one("RFFT2D", x, out_dtype=C64, out_shape=[2, 6, 6], inits=[n])
    _converted(model, {"x": x}, [np.fft.rfftn(x, s=(6, 10), axes=(-2, -1))], atol=1e-4)


@pytest.mark.parametrize("length", [8, 9])
def test_irfft_ignores_the_imaginary_parts_of_dc_and_nyquist(length):
    z = crandn(RNG, (3, 5))
    n = init("n", np.array([length], np.int32))
    model = _one("IRFFT", z, out_dtype=F32, out_shape=[3, length], inits=[n])
    # numpy's irfft ignores them too; an odd length has no Nyquist bin.
    _converted(model, {"x": z}, [np.fft.irfft(z, n=length)])


@pytest.mark.parametrize(("bins", "length"), [(20, 10), (5, 10), (6, 20), (4, 9)])
def test_irfft_reads_the_first_half_length_bins_padded_with_zeros(bins, length):
    """TensorFlow reads fft_length // 2 + 1 bins, where onnx's dft_length would cut or
    pad the spectrum to fft_length bins: both give numpy's irfft only at that count."""
    z = crandn(RNG, (3, bins))
    n = init("n", np.array([length], np.int32))
    model = _one("IRFFT", z, out_dtype=F32, out_shape=[3, length], inits=[n])
    half = np.zeros((3, length // 2 + 1), C64)
    kept = min(bins, length // 2 + 1)
    half[:, :kept] = z[:, :kept]
    _converted(model, {"x": z}, [np.fft.irfft(half, n=length)], atol=1e-4)


def test_irfft2d_crops_the_outer_axis_and_the_bins():
    z = crandn(RNG, (2, 20, 10))
    n = init("n", np.array([16, 10], np.int32))
    model = _one("IRFFT2D", z, out_dtype=F32, out_shape=[2, 16, 10], inits=[n])
    expected = np.fft.irfftn(z[:, :16, :6], s=(16, 10), axes=(-2, -1))
    _converted(model, {"x": z}, [expected], atol=1e-4)


def test_inv_is_the_reciprocal_and_rank_a_scalar():
    z = crandn(RNG, (2, 3, 4))
    _converted(_one("Inv", z, out_dtype=C64, out_shape=[2, 3, 4]), {"x": z}, [1 / z])
    model = _one("Rank", z, out_dtype=np.int32, out_shape=[])
    _converted(model, {"x": z}, [np.array(3, np.int32)])


@pytest.mark.parametrize("dims", [[True, False, True], [False, False, False], [False, True, False]])
def test_reverse_reverses_the_axes_its_dims_name(dims):
    z = crandn(RNG, (2, 3, 4))
    model = _one("Reverse", z, out_dtype=C64, out_shape=[2, 3, 4],
                 inits=[init("dims", np.array(dims))])  # fmt: skip
    axes = tuple(i for i, d in enumerate(dims) if d)
    _converted(model, {"x": z}, [np.flip(z, axes) if axes else z])


@pytest.mark.parametrize("ids", [[0, 0, 1, 2], [0, 2, 2, 2], [1, 1, 1, 1]])
def test_segment_sum_sums_the_rows_of_each_segment(ids):
    z = crandn(RNG, (4, 3, 2))
    model = _one("SegmentSum", z, out_dtype=C64, out_shape=[max(ids) + 1, 3, 2],
                 inits=[init("ids", np.array(ids, np.int32))])  # fmt: skip
    expected = np.zeros((max(ids) + 1, 3, 2), C64)
    np.add.at(expected, np.array(ids), z)
    _converted(model, {"x": z}, [expected])


@pytest.mark.parametrize("ids", [[0, 0, 1, 2], [0, 2, 2, 2]])
def test_segment_ids_given_at_run_time_make_max_plus_one_segments(ids):
    z = crandn(RNG, (4, 3))
    model = _one("SegmentSum", z, vi("ids", np.int32, [4]), out_dtype=C64, out_shape=None)
    expected = np.zeros((max(ids) + 1, 3), C64)
    np.add.at(expected, np.array(ids), z)
    _converted(model, {"x": z, "ids": np.array(ids, np.int32)}, [expected])


def test_segment_ids_of_another_rank_are_refused_naming_the_node():
    z = crandn(RNG, (4, 3))
    model = _one("SegmentSum", z, vi("ids", np.int32, [4, 1]), out_dtype=C64, out_shape=None)
    with pytest.raises(NormalizeError, match="segment_ids are not a list of ids") as e:
        decomplex(model)
    assert e.value.node == "segmentsum"


STRIDED = {
    "ellipsis_then_new_axis": (([0, 1, 0], [0, 3, 0], [1, 1, 1]),
                               {"ellipsis_mask": 1, "new_axis_mask": 4},
                               lambda z: z[..., 1:3, None]),
    "shrink_reverse_step": (([1, 0, 0], [2, 0, 4], [1, -1, 2]),
                            {"begin_mask": 2, "end_mask": 2, "shrink_axis_mask": 1},
                            lambda z: z[1, ::-1, 0:4:2]),
    "new_then_last_index": (([0, 0, -1], [0, 0, 0], [1, 1, 1]),
                            {"new_axis_mask": 1, "begin_mask": 2, "end_mask": 2,
                             "shrink_axis_mask": 4},
                            lambda z: z[None, :, -1]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(STRIDED))
def test_strided_slice_reads_its_masks(case):
    (begin, end, strides), masks, index = STRIDED[case]
    z = crandn(RNG, (2, 3, 4))
    inits = [init(n, np.array(v, np.int32)) for n, v in (("b", begin), ("e", end), ("s", strides))]
    node = helper.make_node("StridedSlice", ["x", "b", "e", "s"], ["y"], **masks)
    expected = index(z)
    model = make_model([node], [vi("x", C64, [2, 3, 4])], [vi("y", C64, list(expected.shape))],
                       inits)  # fmt: skip
    _converted(model, {"x": z}, [expected])


def test_irfft3d_inverts_rfft3d():
    x = RNG.standard_normal((2, 3, 4, 8)).astype(F32)
    spectrum = np.fft.rfftn(x, axes=(-3, -2, -1)).astype(C64)
    n = init("n", np.array([3, 4, 8], np.int32))
    model = _one("IRFFT3D", spectrum, out_dtype=F32, out_shape=list(x.shape), inits=[n])
    _converted(model, {"x": spectrum}, [x], atol=1e-4)


@pytest.mark.parametrize("op", ["RFFT", "RFFT2D"])
def test_the_real_bins_of_a_real_signals_spectrum_have_plus_zero_imaginary_parts(op):
    """The angle of a negative real bin is +pi, as in TensorFlow: a -0 or a rounding
    error below zero there would give -pi."""
    x = (RNG.standard_normal((3, 4, 8)) - 3).astype(F32)
    k = 2 if op == "RFFT2D" else 1
    n = init("n", np.array([4, 8][-k:], np.int32))
    nodes = [
        helper.make_node(op, ["x", "n"], ["spectrum"]),
        helper.make_node("Angle", ["spectrum"], ["y"]),
    ]
    model = make_model(nodes, [vi("x", F32, [3, 4, 8])], [vi("y", F32, [3, 4, 5])], [n])
    expected = np.angle(np.fft.rfftn(x, axes=range(-k, 0)))
    assert np.isclose(expected[..., 0, 0], np.pi).all()
    _converted(model, {"x": x}, [expected.astype(F32)], atol=1e-4)


def test_an_fft_length_that_is_no_constant_is_refused_naming_the_node():
    x = RNG.standard_normal((3, 8)).astype(F32)
    model = _one("RFFT", x, vi("n", np.int32, [1]), out_dtype=C64, out_shape=[3, 5])
    with pytest.raises(NormalizeError, match="fft_length is not a constant") as e:
        decomplex(model)
    assert e.value.node == "rfft"


def _branch(name, nodes, output, inits=()):
    return helper.make_graph(nodes, name, [], [output], list(inits))


def test_raw_ops_inside_if_branches_are_read():
    z = crandn(RNG, (3, 4))
    then = _branch(
        "then", [helper.make_node("Conj", ["z"], ["t"], name="conj")], vi("t", C64, [3, 4])
    )
    other = _branch(
        "else", [helper.make_node("FFT", ["z"], ["e"], name="fft")], vi("e", C64, [3, 4])
    )
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    model = make_model(
        [node], [vi("z", C64, [3, 4]), vi("c", np.bool_, [])], [vi("y", C64, [3, 4])]
    )
    for c, expected in ((True, np.conj(z)), (False, np.fft.fft(z))):
        _, report = _converted(model, {"z": z, "c": np.array(c)}, [expected.astype(C64)])
    assert report.readings == [
        "If_0 then_branch: conj (Conj): TensorFlow's Conj, left as it is by tf2onnx",
        "If_0 else_branch: fft (FFT): TensorFlow's FFT, left as it is by tf2onnx",
    ]


def test_raw_ops_inside_a_loop_body_are_read():
    z = crandn(RNG, (3, 8))
    body = helper.make_graph(
        [helper.make_node("FFT", ["w"], ["f"]), helper.make_node("Identity", ["cond"], ["keep"]),
         helper.make_node("Mul", ["f", "scale"], ["w_next"])],
        "body", [vi("i", np.int64, []), vi("cond", np.bool_, []), vi("w", C64, [3, 8])],
        [vi("keep", np.bool_, []), vi("w_next", C64, [3, 8])],
        [init("scale", np.array(0.25, C64))],
    )  # fmt: skip
    node = helper.make_node("Loop", ["n", "", "z"], ["y"], body=body)
    model = make_model([node], [vi("z", C64, [3, 8])], [vi("y", C64, [3, 8])],
                       [init("n", np.array(2, np.int64))])  # fmt: skip
    expected = np.fft.fft(np.fft.fft(z) * 0.25) * 0.25
    _, report = _converted(model, {"z": z}, [expected.astype(C64)], atol=1e-4)
    assert any("body: FFT_0 (FFT)" in line for line in report.readings), report.readings


def test_every_tensorflow_op_is_tested_here():
    tested = {*UNARY, "Complex", "ConjugateTranspose", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D",
              "RFFT", "RFFT2D", "IRFFT", "IRFFT2D", "IRFFT3D", "Inv", "Rank", "Reverse",
              "SegmentSum", "StridedSlice"}  # fmt: skip
    # RFFT3D: the same code as RFFT2D; the exports hold it.
    assert TENSORFLOW_OPS - tested == {"RFFT3D"}


def test_a_raw_op_given_the_wrong_kind_of_value_is_refused_naming_the_node():
    x = RNG.standard_normal((3, 4)).astype(F32)
    model = _one("Real", x, out_dtype=F32, out_shape=[3, 4])
    with pytest.raises(NormalizeError, match="Real takes a complex value, and 'x' is not one"):
        decomplex(model)


def test_complex_takes_real_parts_and_a_transpose_a_constant_permutation():
    z = crandn(RNG, (2, 3))
    model = _one("Complex", z, vi("im", F32, [2, 3]), out_dtype=C64, out_shape=[2, 3])
    with pytest.raises(NormalizeError, match="Complex takes a float32 or float64 tensor, and 'x'"):
        decomplex(model)
    perm = init("perm", np.array([0, 0], np.int32))
    model = _one("ConjugateTranspose", z, out_dtype=C64, out_shape=[2, 3], inits=[perm])
    with pytest.raises(NormalizeError, match="perm is not a constant permutation of 2 axes"):
        decomplex(model)


def test_a_transform_of_a_value_of_unknown_rank_is_refused():
    model = _one("FFT", Z, out_dtype=C64, out_shape=None)
    model.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(NormalizeError, match="FFT of a value of unknown rank") as e:
        decomplex(model)
    assert e.value.node == "fft"


def test_complex_abs_does_not_overflow_where_the_sum_of_squares_would():
    big = np.float32(3e30)
    z = np.array([[big + 1j * big, big, 1j * -big, 0, 3 + 4j, np.inf + 1j * np.nan]], C64)
    model = _one("ComplexAbs", z, out_dtype=F32, out_shape=list(z.shape))
    with np.errstate(over="ignore"):
        _converted(model, {"x": z}, [np.abs(z)])
