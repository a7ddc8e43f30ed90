"""Large complex initializers rewritten where they lie on disk: the packed form is the
input's own bytes, the parts are split into a scratch file a chunk at a time."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import crandn, make_model, vi
from onnx import TensorProto, helper, numpy_helper

from onnx_decomplex.check import find_complex
from onnx_decomplex.files import load, save, stream
from onnx_decomplex.pipeline import convert_file


@pytest.fixture(autouse=True)
def small(monkeypatch):
    """Tensors of 1 KiB count as large, so that a test's tables (of more elements than
    any reading of a graph loads) take the streamed path, and the scratch file is
    written in chunks of 1 KiB."""
    monkeypatch.setattr(load, "STREAM_MIN_BYTES", 1024)
    monkeypatch.setattr(stream, "LARGE", 1024)
    monkeypatch.setattr(stream, "CHUNK", 1024)


def _saved(model: onnx.ModelProto, folder) -> tuple:
    path = folder / "m.onnx"
    onnx.save(model, path, save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    return path, (folder / "m.onnx.data").read_bytes()


def _streamed(model, tmp_path, **kw):
    """Converts `model` (saved with external data) with validation; returns the
    result and the output, whose tables must be on disk, not in the model file."""
    src, data = _saved(model, tmp_path)
    out = tmp_path / "out" / "o.onnx"
    out.parent.mkdir()
    result = convert_file(src, out, **kw)
    assert result.ok and result.validation.passed, result.validation
    assert (tmp_path / "m.onnx.data").read_bytes() == data  # the input as it was
    written = onnx.load(str(out), load_external_data=False)
    assert not find_complex(written)
    assert sorted(p.name for p in out.parent.iterdir()) == ["o.onnx", "o.onnx.data"]
    onnx.checker.check_model(str(out), full_check=True)
    return result, written


def test_a_real_value_times_a_table_reads_the_packed_bytes_as_they_are(tmp_path):
    rng = np.random.default_rng(0)
    table = crandn(rng, [128, 64])
    model = make_model(
        [helper.make_node("Cast", ["x"], ["xc"], to=TensorProto.COMPLEX64),
         helper.make_node("Mul", ["xc", "t"], ["y"])],
        [vi("x", np.float32, [128, 64])], [vi("y", np.complex64, [128, 64])],
        [numpy_helper.from_array(table, "t")],
    )  # fmt: skip
    result, written = _streamed(model, tmp_path)
    packed = [t for t in written.graph.initializer if list(t.dims) == [128, 64, 2]]
    assert len(packed) == 1 and table.nbytes >= save.INLINE_MAX_BYTES
    values = numpy_helper.to_array(packed[0], str(tmp_path / "out"))
    np.testing.assert_array_equal(values.view(np.complex64)[..., 0], table)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_a_complex_value_times_a_table_takes_its_parts_from_the_scratch_file(tmp_path, dtype):
    rng = np.random.default_rng(1)
    table = crandn(rng, [3, 2000], dtype)
    model = make_model(
        [helper.make_node("Mul", ["z", "t"], ["y"])],
        [vi("z", dtype, [3, 2000])], [vi("y", dtype, [3, 2000])],
        [numpy_helper.from_array(table, "t")],
    )  # fmt: skip
    result, written = _streamed(model, tmp_path)
    parts = {t.name: numpy_helper.to_array(t, str(tmp_path / "out"))
             for t in written.graph.initializer if list(t.dims) == [3, 2000]}  # fmt: skip
    assert len(parts) == 2
    re, im = (next(v for k, v in parts.items() if k.endswith(s)) for s in ("_re", "_im"))
    np.testing.assert_array_equal(re + 1j * im, table)
    assert result.report.ops_after["Mul"] == 4


def test_a_table_reshaped_for_broadcasting_is_reshaped_at_run_time(tmp_path):
    """RoPE's `freqs_cis.view(1, seq, 1, d)`: a table on disk is not folded."""
    rng = np.random.default_rng(2)
    table = crandn(rng, [16, 512])
    model = make_model(
        [helper.make_node("Reshape", ["t", "shape"], ["tb"]),
         helper.make_node("Mul", ["z", "tb"], ["y"])],
        [vi("z", np.complex64, [2, 16, 3, 512])], [vi("y", np.complex64, [2, 16, 3, 512])],
        [numpy_helper.from_array(table, "t"),
         numpy_helper.from_array(np.array([1, 16, 1, 512], np.int64), "shape")],
    )  # fmt: skip
    result, _ = _streamed(model, tmp_path)
    assert result.report.ops_after["Reshape"] >= 1


def test_in_memory_the_tables_are_read(tmp_path):
    """Without a file run to write parts beside, decomplex loads what it reads."""
    from onnx_decomplex.pipeline import decomplex

    rng = np.random.default_rng(3)
    table = crandn(rng, [3, 2000])
    model = make_model([helper.make_node("Mul", ["z", "t"], ["y"])], [vi("z", np.complex64, [3, 2000])],
                       [vi("y", np.complex64, [3, 2000])], [numpy_helper.from_array(table, "t")])  # fmt: skip
    src, _ = _saved(model, tmp_path)
    read, _ = load.read_model(src, stream=True)
    out, report = decomplex(read, external_dir=tmp_path)
    assert not find_complex(out) and report.rewritten == 1


def test_a_constant_weight_on_disk_is_a_runtime_operand_of_matmul(tmp_path):
    rng = np.random.default_rng(4)
    weight = crandn(rng, [64, 96])
    model = make_model([helper.make_node("MatMul", ["z", "w"], ["y"])],
                       [vi("z", np.complex64, [5, 64])], [vi("y", np.complex64, [5, 96])],
                       [numpy_helper.from_array(weight, "w")])  # fmt: skip
    _streamed(model, tmp_path)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_a_table_on_disk_for_tensorrt_is_float32(tmp_path, dtype):
    """complex64: its parts streamed; complex128: narrowed before the rewrite (which then
    computes in float32, as TensorRT does), so read, and packed as constants."""
    rng = np.random.default_rng(5)
    table = crandn(rng, [3, 2000], dtype)
    model = make_model([helper.make_node("Mul", ["z", "t"], ["y"])],
                       [vi("z", dtype, [3, 2000])], [vi("y", dtype, [3, 2000])],
                       [numpy_helper.from_array(table, "t")])  # fmt: skip
    result, written = _streamed(model, tmp_path, target="tensorrt")
    weights = [t for t in written.graph.initializer if t.dims[:2] == [3, 2000]]
    assert {t.data_type for t in weights} == {TensorProto.FLOAT}
    assert [list(t.dims) for t in weights] == (
        [[3, 2000]] * 2 if dtype == np.complex64 else [[3, 2000, 2]] * 2
    )


def test_a_table_on_disk_read_inside_a_branch(tmp_path):
    rng = np.random.default_rng(6)
    table = crandn(rng, [3, 2000])
    branch = helper.make_graph([helper.make_node("Mul", ["z", "t"], ["b"])], "then", [],
                               [vi("b", np.complex64, [3, 2000])])  # fmt: skip
    other = helper.make_graph([helper.make_node("Identity", ["z"], ["c"])], "else", [],
                              [vi("c", np.complex64, [3, 2000])])  # fmt: skip
    model = make_model(
        [helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=other)],
        [vi("cond", np.bool_, []), vi("z", np.complex64, [3, 2000])],
        [vi("y", np.complex64, [3, 2000])],
        [numpy_helper.from_array(table, "t")],
    )  # fmt: skip
    _streamed(model, tmp_path, input_shapes=None)
