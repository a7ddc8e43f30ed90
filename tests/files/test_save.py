"""Large models: real weights the rewrite does not read stay on disk, and are copied
file to file into the output's external data."""

import hashlib

import numpy as np
import onnx
import pytest
from helpers import make_model, vi
from onnx import helper, numpy_helper
from onnx.external_data_helper import uses_external_data

from onnx_decomplex import decomplex
from onnx_decomplex.files.load import STREAM_MIN_BYTES, read_model
from onnx_decomplex.files.save import INLINE_MAX_BYTES, save_model
from onnx_decomplex.pipeline import convert_file

SIDE = 1024  # a 1024 x 1024 float32 weight: 4 MiB, over STREAM_MIN_BYTES


def _big_model(folder, complex_reads_weight=False):
    """x @ W (real, on disk) then times a complex table; or, with
    `complex_reads_weight`, the complex value times W itself, cast to complex."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((SIDE, SIDE)).astype(np.float32) / np.float32(SIDE)
    table = np.exp(1j * rng.uniform(-3, 3, SIDE)).astype(np.complex64)
    if complex_reads_weight:
        nodes = [helper.make_node("Cast", ["x"], ["xc"], to=onnx.TensorProto.COMPLEX64),
                 helper.make_node("Mul", ["xc", "table"], ["z"]),
                 helper.make_node("Cast", ["w"], ["wc"], to=onnx.TensorProto.COMPLEX64),
                 helper.make_node("MatMul", ["z", "wc"], ["y"])]  # fmt: skip
    else:
        nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
                 helper.make_node("Cast", ["h"], ["hc"], to=onnx.TensorProto.COMPLEX64),
                 helper.make_node("Mul", ["hc", "table"], ["y"])]  # fmt: skip
    model = make_model(
        nodes,
        [vi("x", np.float32, [2, SIDE])],
        [vi("y", np.complex64, [2, SIDE])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(table, "table")],
    )
    src = folder / "big.onnx"
    onnx.save(model, str(src), save_as_external_data=True, location="big.data", size_threshold=0)
    return src


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_streamed_read_leaves_large_real_weights_on_disk(tmp_path):
    model, data_files = read_model(_big_model(tmp_path), stream=True)
    tensors = {t.name: t for t in model.graph.initializer}
    assert data_files == ("big.data",) and STREAM_MIN_BYTES < SIDE * SIDE * 4
    assert uses_external_data(tensors["w"])  # real, large: not loaded
    assert not uses_external_data(tensors["table"])  # complex: the rewrite needs it


def test_rewrite_keeps_pointing_at_weights_it_does_not_read(tmp_path):
    model, _ = read_model(_big_model(tmp_path), stream=True)
    out, _ = decomplex(model, external_dir=tmp_path)
    assert uses_external_data(next(t for t in out.graph.initializer if t.name == "w"))


@pytest.mark.parametrize("complex_reads_weight", [False, True])
def test_streamed_conversion_is_validated_and_copies_the_weights(tmp_path, complex_reads_weight):
    src_dir, out_dir = tmp_path / "in", tmp_path / "out"
    src_dir.mkdir()
    out_dir.mkdir()
    src = _big_model(src_dir, complex_reads_weight)
    before = _digest(src_dir)
    seen = []
    result = convert_file(src, out_dir / "big.onnx", progress=lambda d, t: seen.append((d, t)))
    assert result.ok and result.validation.outputs
    assert _digest(src_dir) == before  # the input is never modified
    assert sorted(p.name for p in out_dir.iterdir()) == ["big.onnx", "big.onnx.data"]
    onnx.checker.check_model(str(out_dir / "big.onnx"), full_check=True)
    assert seen and seen[-1][0] == seen[-1][1]
    if not complex_reads_weight:  # else W became part of a complex weight
        (w_out, w_in) = (
            numpy_helper.to_array(
                next(t for t in onnx.load(str(f)).graph.initializer if t.name == "w")
            )
            for f in (out_dir / "big.onnx", src)
        )
        np.testing.assert_array_equal(w_out, w_in)


def test_decomplex_without_external_dir_says_which_weight(tmp_path):
    model, _ = read_model(_big_model(tmp_path, complex_reads_weight=True), stream=True)
    with pytest.raises(Exception, match="'w'"):
        decomplex(model)


def test_a_model_pointing_at_external_data_needs_its_source(tmp_path):
    model, _ = read_model(_big_model(tmp_path), stream=True)
    with pytest.raises(Exception, match="not where it lives"):
        save_model(model, tmp_path / "copy.onnx")
    assert not (tmp_path / "copy.onnx").exists()


@pytest.mark.parametrize("kernel_copy", [True, False], ids=["copy_file_range", "read-write"])
def test_several_weights_on_disk_land_at_their_offsets(tmp_path, monkeypatch, kernel_copy):
    import os

    if not kernel_copy:
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    rng = np.random.default_rng(1)
    weights = [
        rng.standard_normal((600, 600)).astype(np.float32) / np.float32(600) for _ in range(3)
    ]
    nodes = [helper.make_node("MatMul", ["x" if i == 0 else f"h{i - 1}", f"w{i}"], [f"h{i}"])
             for i in range(3)]  # fmt: skip
    nodes += [helper.make_node("Cast", ["h2"], ["hc"], to=onnx.TensorProto.COMPLEX64),
              helper.make_node("Mul", ["hc", "t"], ["y"])]  # fmt: skip
    table = np.exp(1j * rng.uniform(-3, 3, 600)).astype(np.complex64)
    inits = [numpy_helper.from_array(w, f"w{i}") for i, w in enumerate(weights)]
    model = make_model(nodes, [vi("x", np.float32, [1, 600])], [vi("y", np.complex64, [1, 600])],
                       [*inits, numpy_helper.from_array(table, "t")])  # fmt: skip
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    src = tmp_path / "in" / "m.onnx"
    onnx.save(model, str(src), save_as_external_data=True, location="m.data", size_threshold=0)
    assert convert_file(src, tmp_path / "out" / "m.onnx").ok
    out = {t.name: t for t in onnx.load(str(tmp_path / "out" / "m.onnx")).graph.initializer}
    for i, w in enumerate(weights):
        np.testing.assert_array_equal(numpy_helper.to_array(out[f"w{i}"]), w)


def test_a_weight_with_no_length_entry_also_stays_on_disk(tmp_path):
    # `length` may be left out: the data then runs to the end of its file.
    src = _big_model(tmp_path)
    model = onnx.load(str(src), load_external_data=False)
    w = next(t for t in model.graph.initializer if t.name == "w")
    kept = [(e.key, e.value) for e in w.external_data if e.key != "length"]
    del w.external_data[:]
    for key, value in kept:
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    # The weight goes last in a file of its own, so its data ends where the file does.
    data = (tmp_path / "big.data").read_bytes()
    offset = int(dict(kept).get("offset", 0))
    (tmp_path / "w.data").write_bytes(data[offset : offset + SIDE * SIDE * 4])
    for entry in w.external_data:
        if entry.key == "location":
            entry.value = "w.data"
        if entry.key == "offset":
            entry.value = "0"
    onnx.save(model, str(src))
    loaded, _ = read_model(src, stream=True)
    assert uses_external_data(next(t for t in loaded.graph.initializer if t.name == "w"))


@pytest.mark.parametrize(
    "fixture, stored, external_data",
    [
        ("complex_io.onnx", "inline", True),  # --external-data
        ("complex_io.onnx", "external", None),  # IN keeps its data externally
        ("no_complex.onnx", "external", None),  # passed through, re-saved
    ],
)
def test_no_data_file_when_every_weight_fits_inline(tmp_path, root, fixture, stored, external_data):
    # These fixtures' weights are all under INLINE_MAX_BYTES, before and after the
    # rewrite: nothing ends up external, so no empty OUT.data, and nothing points at one.
    model = onnx.load(root / "fixtures" / fixture)
    assert all(len(t.raw_data) < INLINE_MAX_BYTES for t in model.graph.initializer)
    (tmp_path / "in").mkdir()
    src = tmp_path / "in" / fixture
    if stored == "external":
        onnx.save(model, src, save_as_external_data=True, location="in.data", size_threshold=0)
        assert (tmp_path / "in" / "in.data").stat().st_size > 0
    else:
        onnx.save(model, src)
    (tmp_path / "out").mkdir()
    dst = tmp_path / "out" / "x.onnx"
    result = convert_file(src, dst, external_data=external_data)
    assert result.ok
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["x.onnx"]
    written = onnx.load(dst, load_external_data=False)
    assert not any(uses_external_data(t) for t in written.graph.initializer)
    onnx.checker.check_model(str(dst), full_check=True)


def test_save_model_writes_a_data_file_only_for_what_moves(tmp_path):
    small = make_model(
        [helper.make_node("Add", ["x", "b"], ["y"])],
        [vi("x", np.float32, [4])],
        [vi("y", np.float32, [4])],
        [numpy_helper.from_array(np.ones(4, np.float32), "b")],
    )
    assert save_model(small, tmp_path / "small.onnx", external_data=True) == [
        tmp_path / "small.onnx"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.onnx"]
    # One weight of INLINE_MAX_BYTES moves: then the data file is written, and holds it.
    big = onnx.ModelProto()
    big.CopyFrom(small)
    big.graph.initializer.append(
        numpy_helper.from_array(np.zeros(INLINE_MAX_BYTES // 4, np.float32), "unused")
    )
    save_model(big, tmp_path / "big.onnx", external_data=True)
    assert (tmp_path / "big.onnx.data").stat().st_size == INLINE_MAX_BYTES
