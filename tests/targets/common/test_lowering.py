"""DFT, STFT and Compress lowered for TensorRT: exact ops, numbers against onnx.reference,
the full checker, and no complex or float64 left."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import crandn, init, make_model, op_types, run_ort, vi
from onnx import TensorProto, helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.reference import evaluator
from onnx_decomplex.targets.common import transforms
from onnx_decomplex.targets.common.lowering import LOWERINGS, lowering


def assert_lowers(model, feeds, ops=None, atol=1e-5, rtol=1e-4):
    out, report = decomplex(model, target="tensorrt")
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    # A NonZero left takes a float: the one the lowerings of Compress and NonZero write.
    left = {n.op_type for n in out.graph.node if n.op_type != "NonZero"} & set(LOWERINGS)
    assert not left, f"not lowered: {left}"
    if ops is not None:
        assert op_types(out) == sorted(ops)
    result = validate(model, out, feeds, atol=atol, rtol=rtol)
    assert result.outputs and result.passed, result.outputs
    return out, report


def test_registry():
    assert set(LOWERINGS) == {"DFT", "STFT", "Compress", "NonZero", "Einsum"}
    with pytest.raises(ValueError, match="a lowering for DFT is already registered"):
        lowering("DFT")(lambda e, node: None)


def dft_model(shape, opset, *, length=None, axis=None, inverse=0, onesided=0, dtype=np.float32):
    names, inits = ["x", "", ""], []
    if length is not None:
        names[1] = "n"
        inits.append(init("n", np.array(length, np.int64)))
    attrs = {"inverse": inverse, "onesided": onesided}
    if axis is not None and opset >= 20:
        names[2] = "axis"
        inits.append(init("axis", np.array(axis, np.int64)))
    elif axis is not None:
        attrs["axis"] = axis
    while names[-1] == "":
        names.pop()
    node = helper.make_node("DFT", names, ["y"], **attrs)
    return make_model([node], [vi("x", dtype, shape)], [vi("y", dtype, None)], inits, opset)


LENGTHS = [None, 5, 8, 13]  # the input's own 8, cut short, padded, odd


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("inverse", [0, 1])
@pytest.mark.parametrize("parts", [1, 2])
def test_dft_two_sided(opset, length, inverse, parts):
    rng = np.random.default_rng(1)
    model = dft_model((3, 8, parts), opset, length=length, axis=1, inverse=inverse)
    x = rng.standard_normal((3, 8, parts)).astype(np.float32)
    dense = (length or 8) <= transforms.DENSE_MAX_LENGTH  # 13, a prime: Bluestein's form
    assert_lowers(model, {"x": x}, ops=["MatMul", "Reshape", "Reshape"] if dense else None)


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("length", LENGTHS)
def test_dft_one_sided_forward(opset, length):
    """A real signal's half spectrum: floor(L/2) + 1 bins."""
    rng = np.random.default_rng(2)
    model = dft_model((2, 8, 1), opset, length=length, axis=1, onesided=1)
    out, _ = assert_lowers(model, {"x": rng.standard_normal((2, 8, 1)).astype(np.float32)})
    bins = (length or 8) // 2 + 1
    if (length or 8) <= transforms.DENSE_MAX_LENGTH:
        matrix = next(t for t in out.graph.initializer if "dft_matrix" in t.name)
        assert list(matrix.dims) == [8, 2 * bins]


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("length", [None, 8, 9, 12])
@pytest.mark.parametrize("parts", [1, 2])
def test_dft_one_sided_inverse(opset, length, parts):
    """An inverse one-sided transform is numpy's irfft: a real output of L samples."""
    rng = np.random.default_rng(3)
    model = dft_model((2, 5, parts), opset, length=length, axis=1, inverse=1, onesided=1)
    x = rng.standard_normal((2, 5, parts)).astype(np.float32)
    assert_lowers(model, {"x": x})


@pytest.mark.parametrize("axis", [0, 1, 2, -3])
def test_dft_other_axes_move_there_and_back(axis):
    rng = np.random.default_rng(4)
    model = dft_model((4, 6, 5, 2), 20, axis=axis)
    out, _ = assert_lowers(model, {"x": rng.standard_normal((4, 6, 5, 2)).astype(np.float32)})
    transposes = op_types(out).count("Transpose")
    assert transposes == (0 if axis % 4 == 2 else 2)


def test_dft_of_a_complex_value():
    """The case this tool exists for: a complex signal's DFT, then lowered."""
    rng = np.random.default_rng(5)
    node = helper.make_node("DFT", ["z"], ["y"], axis=1)
    model = make_model(
        [node], [vi("z", np.complex64, [2, 16])], [vi("y", np.complex64, None)], opset=17
    )
    out, report = assert_lowers(model, {"z": crandn(rng, (2, 16))})
    assert report.lowered == {"DFT": 1}
    assert report.has_complex


def test_dft_float64_is_narrowed_and_matches_at_float32():
    rng = np.random.default_rng(6)
    model = dft_model((2, 32, 2), 20, dtype=np.float64, axis=1)
    out, report = assert_lowers(model, {"x": rng.standard_normal((2, 32, 2))})
    assert out.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert all(t.data_type != TensorProto.DOUBLE for t in out.graph.initializer)
    assert report.narrowed


def test_dft_dynamic_length_is_refused_clearly():
    model = dft_model(("batch", "n", 2), 20, axis=1)
    with pytest.raises(DecomplexError, match="no static transform length") as e:
        decomplex(model, target="tensorrt")
    assert e.value.op_type == "DFT" and e.value.tensor == "x"


def test_dft_runtime_length_is_refused_clearly():
    node = helper.make_node("DFT", ["x", "n"], ["y"], axis=1)
    model = make_model(
        [node],
        [vi("x", np.float32, [2, 8, 2]), vi("n", np.int64, [])],
        [vi("y", np.float32, None)],
        opset=17,
    )
    with pytest.raises(DecomplexError, match="dft_length is computed at run time"):
        decomplex(model, target="tensorrt")


def test_dynamic_batch_is_fine():
    """Only the transform length must be static: leading dims pass through Reshape's 0."""
    rng = np.random.default_rng(7)
    model = dft_model(("batch", 8, 2), 20, axis=1)
    assert_lowers(model, {"x": rng.standard_normal((3, 8, 2)).astype(np.float32)})


@pytest.mark.parametrize("target", ["onnx", "onnxruntime", "tensorrt"])
def test_shapes_folded_beside_a_dynamic_transform_keep_their_bounds(target):
    """A DFT of a dynamic batch has its graph's constants folded first, Shape nodes too.
    onnx-graphsurgeon folds a Shape node as its input's whole shape, reading no `start`
    or `end`; a complex value's shape, the packed tensor's less its last dim, came out
    [2] for a scalar. Shapes with bounds are slices of whole ones before the folding."""
    nodes = [helper.make_node("DFT", ["x"], ["y"], axis=1),
             helper.make_node("Shape", ["z"], ["s"]),
             helper.make_node("Shape", ["z"], ["tail"], start=-1)]  # fmt: skip
    model = make_model(
        nodes, [vi("x", np.float32, ("batch", 8, 2)), vi("z", np.complex64, [3])],
        [vi("y", np.float32, None), vi("s", np.int64, None), vi("tail", np.int64, None)], [], 20,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((2, 8, 2)).astype(np.float32), "z": crandn(rng, [3])}
    out, _ = decomplex(model, target=target)
    result = validate(model, out, feeds)
    assert result.passed, result.outputs


def stft_model(signal, step, *, window=None, runtime_window=False, frame_length=None, **attrs):
    names, inits, inputs = ["x", "step", "", ""], [init("step", np.array(step, np.int64))], []
    inputs.append(vi("x", np.float32, signal))
    if window is not None:
        names[2] = "w"
        if runtime_window:
            inputs.append(vi("w", np.float32, [len(window)]))
        else:
            inits.append(init("w", window.astype(np.float32)))
    if frame_length is not None:
        names[3] = "fl"
        inits.append(init("fl", np.array(frame_length, np.int64)))
    while names[-1] == "":
        names.pop()
    node = helper.make_node("STFT", names, ["y"], **attrs)
    return make_model([node], inputs, [vi("y", np.float32, None)], inits, 17)


@pytest.mark.parametrize(
    "signal, step, window, frame_length, attrs",
    [
        ((2, 64, 1), 8, 16, None, {}),  # one-sided by default
        ((2, 64, 1), 8, 16, 16, {"onesided": 0}),
        ((2, 64, 2), 8, 16, None, {"onesided": 0}),  # a complex signal
        ((2, 64, 1), 8, None, 16, {"onesided": 1}),  # no window: a rectangular one
        ((1, 60, 1), 7, 16, 16, {}),  # frames that do not tile the signal
        ((2, 64, 1), 4, 12, 16, {}),  # a window shorter than the frame: zero-padded
    ],
)
def test_stft(signal, step, window, frame_length, attrs):
    rng = np.random.default_rng(8)
    w = None if window is None else np.hanning(window)
    model = stft_model(signal, step, window=w, frame_length=frame_length, **attrs)
    out, _ = assert_lowers(model, {"x": rng.standard_normal(signal).astype(np.float32)})
    # The window is folded into the kernel: no Mul at run time; the frames are read in
    # place by the Conv's stride, not gathered.
    assert "Mul" not in op_types(out) and "Conv" in op_types(out) and "Gather" not in op_types(out)


def test_stft_runtime_window():
    rng = np.random.default_rng(9)
    w = np.hanning(16).astype(np.float32)
    model = stft_model((2, 64, 1), 8, window=w, runtime_window=True)
    feeds = {"x": rng.standard_normal((2, 64, 1)).astype(np.float32), "w": w}
    out, _ = assert_lowers(model, feeds)
    assert "Mul" in op_types(out) and "Gather" in op_types(out)


def test_stft_window_past_the_signal_end_reads_zeros():
    """A window longer than the frame needs samples past the end: Pad supplies zeros."""
    rng = np.random.default_rng(10)
    model = stft_model((1, 40, 1), 8, window=np.hanning(20), frame_length=16)
    out, _ = assert_lowers(model, {"x": rng.standard_normal((1, 40, 1)).astype(np.float32)})
    assert "Pad" in op_types(out)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_constant_condition(axis):
    rng = np.random.default_rng(11)
    cond = np.array([True, False, True, True])
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("Compress", ["z", "c"], ["y"], **attrs)
    model = make_model(
        [node], [vi("z", np.complex64, [4, 4])], [vi("y", np.complex64, None)], [init("c", cond)]
    )
    out, report = assert_lowers(model, {"z": crandn(rng, (4, 4))})
    assert report.lowered["Compress"] >= 1 and "NonZero" not in op_types(out)


def test_compress_runtime_condition():
    rng = np.random.default_rng(12)
    node = helper.make_node("Compress", ["z", "c"], ["y"], axis=0)
    model = make_model(
        [node],
        [vi("z", np.complex64, [5, 3]), vi("c", np.bool_, [5])],
        [vi("y", np.complex64, None)],
    )
    feeds = {"z": crandn(rng, (5, 3)), "c": np.array([1, 0, 1, 1, 0], bool)}
    out, _ = assert_lowers(model, feeds)
    assert "NonZero" in op_types(out)


@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.float32])
def test_nonzero_takes_a_float(dtype):
    """TensorRT's NonZero takes floats: a mask (jax2onnx's ScatterND writes one) is cast,
    a float one is left as it is."""
    rng = np.random.default_rng(14)
    nodes = [
        helper.make_node("NonZero", ["m"], ["i"]),
        helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["f"], ["s"], keepdims=0),
        helper.make_node("Cast", ["s"], ["w"], to=TensorProto.COMPLEX64),
        helper.make_node("Mul", ["z", "w"], ["y"]),
    ]
    model = make_model(
        nodes,
        [vi("z", np.complex64, [3]), vi("m", dtype, [2, 3])],
        [vi("y", np.complex64, [3])],
    )
    feeds = {"z": crandn(rng, (3,)), "m": np.array([[1, 0, 2], [0, 0, 3]]).astype(dtype)}
    out, _ = assert_lowers(model, feeds)
    nonzero = next(n for n in out.graph.node if n.op_type == "NonZero")
    cast = [n for n in out.graph.node if n.output[0] == nonzero.input[0]]
    if dtype == np.float32:
        assert nonzero.input[0] == "m"
    else:
        assert cast[0].op_type == "Cast" and cast[0].attribute[0].i == TensorProto.FLOAT


def test_lowering_reaches_subgraphs():
    rng = np.random.default_rng(13)
    branch = helper.make_graph(
        [helper.make_node("DFT", ["x"], ["y"], axis=1)], "b", [], [vi("y", np.float32, None)]
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y2"])], "o", [], [vi("y2", np.float32, None)]
    )
    node = helper.make_node("If", ["c"], ["out"], then_branch=branch, else_branch=other)
    model = make_model(
        [node],
        [vi("x", np.float32, [2, 8, 2]), vi("c", np.bool_, [])],
        [vi("out", np.float32, None)],
        opset=17,
    )
    x = rng.standard_normal((2, 8, 2)).astype(np.float32)
    out, report = assert_lowers(model, {"x": x, "c": np.array(True)})
    assert report.lowered == {"DFT": 1}


def test_the_default_target_lowers_a_real_models_dft_and_leaves_the_input_as_it_was():
    """A DFT's output is complex values in ONNX's own packed layout: a model with no
    complex type that holds one is taken on, not passed through."""
    model = dft_model((2, 8, 2), 17, axis=1)
    before = model.SerializeToString()
    out, report = decomplex(model)
    assert report.changed and not report.has_complex and report.lowered == {"DFT": 1}
    assert "DFT" not in op_types(out) and model.SerializeToString() == before
    x = np.random.default_rng(3).standard_normal((2, 8, 2)).astype(np.float32)
    assert validate(model, out, {"x": x}).passed


@pytest.mark.parametrize("length", [64, 256])
def test_fnet_sizes_match_reference(length):
    """Longer transforms: the matrix form's float32 error stays far inside tolerance."""
    rng = np.random.default_rng(14)
    model = dft_model((4, length, 2), 20, axis=1)
    x = rng.standard_normal((4, length, 2)).astype(np.float32)
    out, _ = assert_lowers(model, {"x": x})
    expected = evaluator(model).run(None, {"x": x})[0]
    result = validate(model, out, {"x": x}, atol=0, rtol=1e-5)
    assert result.outputs[0].max_abs < 1e-4 * np.abs(expected).max()


def test_huge_matrix_is_refused(monkeypatch):
    monkeypatch.setattr(transforms, "MAX_MATRIX_BYTES", 1 << 16)
    monkeypatch.setattr(transforms, "DENSE_MAX_LENGTH", 128)
    model = dft_model((1, 128, 2), 20, axis=1)  # 256 x 256 float32: 256 KiB
    with pytest.raises(DecomplexError, match="needs a 0.2 MiB DFT matrix, over the 0.1 MiB limit"):
        decomplex(model, target="tensorrt")
    out, report = decomplex(dft_model((1, 64, 2), 20, axis=1), target="tensorrt")
    assert report.matrix_bytes == 128 * 128 * 4


@pytest.mark.parametrize("length", [16, 60, 64, 100])
@pytest.mark.parametrize("n_in", [16, 64])
@pytest.mark.parametrize("inverse, onesided, parts", [(0, 0, 2), (1, 0, 2), (0, 1, 1), (0, 0, 1)])
def test_four_step(length, n_in, inverse, onesided, parts):
    """Transforms past DENSE_MAX_LENGTH that factor L = L1 * L2: two small matrices,
    the same numbers."""
    rng = np.random.default_rng(15)
    model = dft_model((3, n_in, parts), 20, length=length, axis=1, inverse=inverse,
                      onesided=onesided)  # fmt: skip
    x = rng.standard_normal((3, n_in, parts)).astype(np.float32)
    out, report = assert_lowers(model, {"x": x})
    assert op_types(out).count("MatMul") == 2
    l1, l2 = transforms._factor(length)
    assert report.matrix_bytes == 4 * (l1 * parts * 2 * l1 + l1 * (2 * l2) ** 2)


def test_four_step_on_another_axis_and_a_prime_length():
    rng = np.random.default_rng(16)
    model = dft_model((2, 24, 3, 2), 20, axis=1)
    out, _ = assert_lowers(model, {"x": rng.standard_normal((2, 24, 3, 2)).astype(np.float32)})
    assert op_types(out).count("MatMul") == 2
    # The matrices take the signal's type themselves, not by the float64 narrowing.
    assert all(t.data_type != TensorProto.DOUBLE for t in out.graph.initializer)
    kept, report = decomplex(model, target="tensorrt", keep_double=True)
    assert not report.narrowed
    onnx.checker.check_model(kept, full_check=True)
    prime = dft_model((2, 13, 2), 20, axis=1)  # 13 does not factor: Bluestein's chirp-z
    out, _ = assert_lowers(prime, {"x": rng.standard_normal((2, 13, 2)).astype(np.float32)})
    assert op_types(out).count("MatMul") == 4
    short = dft_model((2, 11, 2), 20, axis=1)  # up to DENSE_MAX_LENGTH: the dense matrix
    out, _ = assert_lowers(short, {"x": rng.standard_normal((2, 11, 2)).astype(np.float32)})
    assert op_types(out).count("MatMul") == 1


def test_a_long_transform_factors_by_default():
    """4096 complex points: 256 MiB dense, 4 MiB in the four-step form, and no less
    accurate than onnxruntime's own float32 DFT. (At this length float32 misses the
    default per-element tolerance on the smallest bins, whatever computes it.)"""
    rng = np.random.default_rng(17)
    model = dft_model((1, 4096, 2), 20, axis=1)
    feeds = {"x": rng.standard_normal((1, 4096, 2)).astype(np.float32)}
    out, report = assert_lowers(model, feeds, atol=1e-3)
    assert report.matrix_bytes == 4 * (64 * 2 * 128 + 64 * 128 * 128)
    assert sum(t.ByteSize() for t in out.graph.initializer) < 5 * 2**20
    ours = validate(model, out, feeds).outputs[0].max_abs
    native = validate(model, model, feeds).outputs[0].max_abs  # the DFT op in onnxruntime
    assert ours <= native


def test_lowered_nodes_are_named_after_the_node_they_replace():
    model = dft_model((3, 8, 2), 17, axis=0)  # moved to the axis before (re, im) and back
    model.graph.node[0].name = "spectrum"
    out, _ = decomplex(model, target="tensorrt")
    names = [n.name for n in out.graph.node] + [t.name for t in out.graph.initializer]
    assert "Transpose" in op_types(out)
    assert all(n.startswith("spectrum_") for n in names) and len(set(names)) == len(names)


@pytest.mark.parametrize("inverse", [0, 1])
def test_the_onnxruntime_target_takes_the_matmul_dft(inverse):
    """Faster than onnxruntime's own DFT at every length measured (see docs/performance.md)."""
    rng = np.random.default_rng(7)
    model = dft_model([3, 16, 2], 17, axis=1, inverse=inverse)
    x = rng.standard_normal((3, 16, 2)).astype(np.float32)
    out, report = decomplex(model, target="onnxruntime")
    onnx.checker.check_model(out, full_check=True)
    assert op_types(out).count("MatMul") == 2 and "DFT" not in op_types(out)
    assert report.lowered == {"DFT": 1} and report.target == "onnxruntime"
    result = validate(model, out, {"x": x})
    assert result.outputs and result.passed, result.outputs


def test_the_onnxruntime_target_keeps_a_dft_it_cannot_lower():
    """A length known only at run time: the DFT stays, and a note says why."""
    model = dft_model([3, "n", 2], 17, axis=1)
    out, report = decomplex(model, target="onnxruntime")
    assert op_types(out) == ["DFT"] and not report.lowered
    assert (
        report.lowering_notes
        and "DFT kept as it is: the signal's shape" in report.lowering_notes[0]
    )
    x = np.random.default_rng(8).standard_normal((3, 5, 2)).astype(np.float32)
    assert validate(model, out, {"x": x}).passed
    with pytest.raises(DecomplexError, match="cannot lower for TensorRT"):
        decomplex(model, target="tensorrt")


@pytest.mark.parametrize(("frame", "lowered"), [(8, True), (256, True), (512, False)])
def test_the_onnx_target_lowers_an_stft_up_to_256(frame, lowered):
    """As on the onnxruntime target: a Conv by the DFT matrix up to frames of 256, where
    it is the faster; onnxruntime's STFT past that."""
    model = stft_model((1, 2 * frame, 1), frame // 2, window=np.hanning(frame))
    out, report = decomplex(model)
    assert op_types(out) == (["Conv", "Reshape", "Reshape", "Transpose"] if lowered else ["STFT"])
    assert report.changed == lowered
    x = np.random.default_rng(frame).standard_normal((1, 2 * frame, 1)).astype(np.float32)
    assert validate(model, out, {"x": x}).passed


def test_the_onnxruntime_target_lowers_a_long_dft_for_its_accuracy():
    """onnxruntime's own float32 DFT is the faster at 512, but 4 times less accurate than
    a float32 FFT there (tests/test_transforms.py)."""
    out, report = decomplex(dft_model([2, 512, 2], 17, axis=1), target="onnxruntime")
    assert "DFT" not in op_types(out) and report.lowered == {"DFT": 1}
    assert "MatMuls of lengths 16 and 32 (four-step)" in report.lowering_notes[0]


@pytest.mark.parametrize(("frame", "lowered"), [(16, True), (512, False)])
def test_an_stft_is_its_frames_times_a_matrix_for_onnxruntime_up_to_256(frame, lowered):
    """onnxruntime's STFT takes about twice the time of the gathered frames' MatMul at
    256 (a torch log-mel front end): up to there, it is lowered as for TensorRT."""
    rng = np.random.default_rng(11)
    model = stft_model((1, 2 * frame, 1), frame // 2, window=np.hanning(frame))
    out, report = decomplex(model, target="onnxruntime")
    assert ("STFT" not in op_types(out)) == lowered
    if not lowered:
        assert any("past 256, where the op is faster" in n for n in report.lowering_notes)
    x = rng.standard_normal((1, 2 * frame, 1)).astype(np.float32)
    (want,) = evaluator(model).run(None, {"x": x})
    (got,) = run_ort(out, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
