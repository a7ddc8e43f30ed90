"""Reading a model: the data files a read reports, and one parse of each file a run reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import make_model, vi
from onnx import helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

from onnx_decomplex.errors import DecomplexError, LoadError
from onnx_decomplex.files import external, load
from onnx_decomplex.files.load import STREAM_MIN_BYTES, read_model
from onnx_decomplex.pipeline import convert_file

EACH = "a file each"


def _model(folder: Path, data: str | None = "m.data", size: int = 64) -> Path:
    """z times a complex table, plus a complex bias: with `data`, their values in that
    external file (EACH: in one file each, named for the tensor)."""
    table = np.exp(1j * np.linspace(0, 3, size)).astype(np.complex64)
    model = make_model([helper.make_node("Mul", ["z", "table"], ["m"]),
                        helper.make_node("Add", ["m", "bias"], ["y"])],
                       [vi("z", np.complex64, [size])], [vi("y", np.complex64, [size])],
                       [numpy_helper.from_array(table, "table"),
                        numpy_helper.from_array(np.ones(size, np.complex64), "bias")])  # fmt: skip
    if data is not None:
        one_file = data != EACH
        convert_model_to_external_data(model, all_tensors_to_one_file=one_file,
                                       location=data if one_file else None, size_threshold=0)  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "m.onnx"
    onnx.save(model, path)
    return path


@pytest.mark.parametrize("stream", [False, True])
def test_a_read_reports_the_data_files_it_read(tmp_path, stream):
    """As the model names them, though the read loads their values."""
    model, data_files = read_model(_model(tmp_path, EACH), stream=stream)
    assert data_files == ("bias", "table")
    assert not external.holds_external(model)
    assert read_model(_model(tmp_path / "inner", data=None), stream=stream)[1] == ()


@pytest.mark.parametrize("data", [None, "m.data"])
def test_a_conversion_parses_its_input_once(tmp_path, parses, data):
    """The load reads the model, and the check of the paths that follows it takes the
    data files that read found: no second parse."""
    src = _model(tmp_path, data)
    result = convert_file(src, tmp_path / "out.onnx")
    assert result.ok and result.written == [tmp_path / "out.onnx"]
    assert parses[src.resolve()] == 1


def test_a_data_file_the_one_parse_found_is_never_written_over(tmp_path, parses):
    src = _model(tmp_path, data="out.onnx.data")
    before = (tmp_path / "out.onnx.data").read_bytes()
    with pytest.raises(DecomplexError, match="input's data file 'out.onnx.data'"):
        convert_file(src, tmp_path / "out.onnx")
    assert parses[src.resolve()] == 1
    assert (tmp_path / "out.onnx.data").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "out.onnx.data"]


def test_a_data_file_is_one_inside_the_models_folder_where_onnx_does_not_check(
    tmp_path, monkeypatch
):
    """A value left on disk is checked by onnx's checker alone, which looks at no data
    file where it is handed the model in memory (one with TensorFlow's ops): the read
    checks it itself, as folder mode counts on it (`zoo.input_files`). Here the checker
    is made to look at none."""
    size = STREAM_MIN_BYTES // 8  # complex64: the table stays on disk
    src = _model(tmp_path / "models", data="m.data", size=size)
    elsewhere = tmp_path / "elsewhere.data"
    (tmp_path / "models" / "m.data").rename(elsewhere)
    (tmp_path / "models" / "m.data").symlink_to(elsewhere)
    with pytest.raises(LoadError, match="symbolic link"):  # onnx's own check, first
        read_model(src, stream=True)
    monkeypatch.setattr(load.onnx.checker, "check_model", lambda model: None)
    with pytest.raises(LoadError, match="external data file 'm.data' is a link, or lies outside"):
        read_model(src, stream=True)


def _tensorflow_model(folder: Path) -> Path:
    """TensorFlow's raw Complex of two real weights, one past the size that stays on
    disk, in a data file: a tf2onnx export with external data."""
    n = STREAM_MIN_BYTES // 4
    weights = [numpy_helper.from_array(np.full(n, v, np.float32), name) for v, name in
               ((1.0, "re"), (2.0, "im"))]  # fmt: skip
    model = make_model([helper.make_node("Complex", ["re", "im"], ["w"], name="complex"),
                        helper.make_node("Mul", ["z", "w"], ["y"])],
                       [vi("z", np.complex64, [n])], [vi("y", np.complex64, [n])], weights)  # fmt: skip
    model.producer_name = "tf2onnx"
    convert_model_to_external_data(model, location="m.data", size_threshold=0)
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, folder / "m.onnx")
    return folder / "m.onnx"


@pytest.mark.parametrize("stream", [False, True])
def test_a_tensorflow_export_with_external_data_reads_from_any_folder(
    tmp_path, monkeypatch, stream
):
    src = _tensorflow_model(tmp_path / "model")
    monkeypatch.chdir(tmp_path)
    model, data_files = read_model(src.relative_to(tmp_path), stream=stream)
    assert data_files == ("m.data",)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = convert_file(src, tmp_path / "out.onnx", validate=False)
    assert result.ok and "complex (Complex): TensorFlow's Complex" in result.report.readings[0]


def test_an_op_onnx_does_not_define_is_named_as_tensorflows_where_tf2onnx_wrote_it(tmp_path):
    model = make_model([helper.make_node("Softsign2", ["z"], ["y"], name="raw")],
                       [vi("z", np.complex64, [3])], [vi("y", np.complex64, [3])])  # fmt: skip
    onnx.save(model, tmp_path / "other.onnx")
    with pytest.raises(LoadError, match="Softsign2 is no ONNX op") as e:
        read_model(tmp_path / "other.onnx")
    assert e.value.node == "raw" and e.value.op_type == "Softsign2"
    model.producer_name = "tf2onnx"
    onnx.save(model, tmp_path / "tf.onnx")
    with pytest.raises(LoadError, match="Softsign2 is TensorFlow's raw op, left in the graph by "
                                        "tf2onnx, which this tool does not read"):  # fmt: skip
        read_model(tmp_path / "tf.onnx")


def test_weights_that_would_not_fit_twice_in_memory_are_refused_before_validation(
    tmp_path, monkeypatch
):
    """The reference evaluator holds every weight, and onnxruntime the rewrite's: past
    the machine's memory, one line says so, where the process would be killed."""
    from onnx_decomplex.passes import validate

    big = numpy_helper.from_array(np.ones(STREAM_MIN_BYTES // 4, np.float32), "w")
    model = make_model([helper.make_node("Mul", ["z", "z"], ["y"]),
                        helper.make_node("Shape", ["w"], ["size"])],
                       [vi("z", np.complex64, [4])],
                       [vi("y", np.complex64, [4]), vi("size", np.int64, [1])], [big])  # fmt: skip
    convert_model_to_external_data(model, location="m.data", size_threshold=0)
    src = tmp_path / "m.onnx"
    onnx.save(model, src)  # a real weight the rewrite leaves on disk
    monkeypatch.setattr(validate, "memory_bytes", lambda: 2 * STREAM_MIN_BYTES - 1)
    with pytest.raises(DecomplexError, match="validation would hold 0.0 GiB of weights twice"):
        convert_file(src, tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()
    monkeypatch.setattr(validate, "memory_bytes", lambda: 1 << 40)
    assert convert_file(src, tmp_path / "out.onnx").ok
