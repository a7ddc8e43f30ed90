"""Inputs and saved outputs in .npz files."""

import io

import numpy as np
import pytest
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.validate import EXPECTED, load_expected, load_saved, npz_bytes


def _model(outputs=("y",)):
    """z (complex64 [2, 3]) and n (int64 [2]) in; each output is z."""
    return make_model(
        [helper.make_node("Identity", ["z"], [o]) for o in outputs],
        [vi("z", np.complex64, [2, 3]), vi("n", np.int64, [2])],
        [vi(o, np.complex64, [2, 3]) for o in outputs],
    )


def _file(tmp_path, **arrays):
    path = tmp_path / "in.npz"
    path.write_bytes(npz_bytes(arrays))
    return str(path)


Z = (np.arange(6) + 1j * np.arange(6, 12)).reshape(2, 3).astype(np.complex64)
N = np.array([1, 2], np.int64)


def test_npz_bytes_is_what_np_load_reads_any_name_included():
    arrays = {"file": np.zeros(1), "expected:y": Z, "n": N}
    with np.load(io.BytesIO(npz_bytes(arrays))) as saved:
        assert sorted(saved.files) == ["expected:y", "file", "n"]
        np.testing.assert_array_equal(saved["expected:y"], Z)
        assert saved["n"].dtype == np.int64


@pytest.mark.parametrize("given", [Z, Z.reshape(2, 3, 1).view(np.float32), Z.astype(np.complex128)])
def test_a_complex_input_is_taken_complex_or_packed(given, tmp_path):
    feeds, expected = load_saved(_file(tmp_path, z=given, n=N.astype(np.int32)), _model())
    np.testing.assert_array_equal(feeds["z"], Z)
    assert feeds["z"].dtype == np.complex64 and feeds["n"].dtype == np.int64
    assert expected is None


def test_a_real_input_given_complex_is_packed_and_an_integer_one_refused(tmp_path):
    real = make_model([helper.make_node("Identity", ["x"], ["y"])],
                      [vi("x", np.float32, [2, 3, 2])], [vi("y", np.float32, [2, 3, 2])])  # fmt: skip
    feeds, _ = load_saved(_file(tmp_path, x=Z), real)
    np.testing.assert_array_equal(feeds["x"], Z.reshape(2, 3, 1).view(np.float32))
    with pytest.raises(DecomplexError, match="gives 'n' as complex64; the input is int64"):
        load_saved(_file(tmp_path, z=Z, n=Z[0, :2]), _model())


def test_saved_outputs_by_key(tmp_path):
    (one,) = load_saved(_file(tmp_path, z=Z, n=N, **{EXPECTED: Z}), _model())[1]
    np.testing.assert_array_equal(one, Z)
    named = {"expected:q": Z * 2, "expected:y": Z}
    y, q = load_saved(_file(tmp_path, z=Z, n=N, **named), _model(("y", "q")))[1]
    np.testing.assert_array_equal(q, Z * 2)
    with pytest.raises(DecomplexError, match="saves some outputs but not q"):
        load_saved(_file(tmp_path, z=Z, n=N, **{"expected:y": Z}), _model(("y", "q")))


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"z": Z}, "the inputs file has no array 'n'"),
        (
            {"z": Z, "n": np.array(["a", "b"])},
            "cannot read inputs: array 'n' holds <U1, not numbers",
        ),
    ],
)
def test_a_missing_or_wrong_array_is_refused_by_name(arrays, message, tmp_path):
    with pytest.raises(DecomplexError, match=message) as info:
        load_saved(_file(tmp_path, **arrays), _model())
    assert info.value.file.endswith("in.npz") and info.value.tensor == "n"


def test_a_file_that_is_not_an_npz_archive_is_refused(tmp_path):
    path = tmp_path / "in.npy"
    np.save(path, Z)
    with pytest.raises(DecomplexError, match="cannot read inputs: not an .npz archive"):
        load_saved(str(path), _model())
    path.write_bytes(b"not numpy")
    with pytest.raises(DecomplexError, match="cannot read expected outputs"):
        load_expected(path, _model())


def test_expected_outputs_come_in_graph_order_or_name_what_is_missing(tmp_path):
    model = _model(("y", "q"))
    y, q = load_expected(_file(tmp_path, q=Z * 2, y=Z), model)
    np.testing.assert_array_equal(q, Z * 2)
    with pytest.raises(DecomplexError, match="no array for q; it holds w, y"):
        load_expected(_file(tmp_path, y=Z, w=Z), model)
