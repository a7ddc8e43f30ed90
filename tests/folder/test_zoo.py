"""Finding models and shards, recording one model's outcome, and reading reports back."""

import hashlib
import json
import shutil

import numpy as np
import pytest

from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.folder import zoo
from onnx_decomplex.options import Options


def test_find_models_is_recursive_sorted_and_skips_the_output_folder(tmp_path):
    for rel in ["b.onnx", "a/c.onnx", "out/old.onnx", "notes.txt"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    found = zoo.find_models(tmp_path, exclude=tmp_path / "out")
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a/c.onnx", "b.onnx"]


def test_record_of_a_fixture(root, tmp_path):
    r = zoo.run_model(root / "fixtures" / "beamformer.onnx", tmp_path / "b.onnx", "b.onnx",
                      Options())  # fmt: skip
    assert r.status == "ok" and r.reference == "onnx.reference"
    assert r.complex_found["inputs"] == 1 and r.complex_found["initializers"] == 1
    assert r.ops_before["Abs"] == 1 and "ReduceL2" not in r.ops_after
    # The block weight [[Wr, Wi], [-Wi, Wr]] holds four reals per complex weight: twice the bytes.
    assert r.initializer_bytes_after >= 2 * r.initializer_bytes_before
    assert [o.name for o in r.outputs] == ["mean_power"] and r.outputs[0].passed
    # The edge values' 1e20 makes a power near 1e40: the ordinary elements tell the error.
    (o,) = r.outputs
    assert o.ordinary_max_tol is not None and o.ordinary_max_tol < 0.01


def test_saved_outputs_stand_in_for_the_reference(root, tmp_path):
    corpus = root / "fixtures" / "jax2onnx"
    src = shutil.copy(corpus / "complex_table.onnx", tmp_path / "t.onnx")
    saved = dict(np.load(corpus / "complex_table.npz"))
    (expected,) = np.load(corpus / "complex_table.expected.npz").values()
    np.savez(tmp_path / "t.npz", **saved, expected=expected)
    r = zoo.run_model(src, tmp_path / "out.onnx", "t.onnx", Options())
    assert r.status == "ok" and r.reference == "saved outputs" and r.framework == []


def test_framework_outputs_beside_a_model_are_compared(root, tmp_path):
    corpus = root / "fixtures" / "jax2onnx"
    for name in ("scale_half", "sqrt_plus"):
        r = zoo.run_model(corpus / f"{name}.onnx", tmp_path / f"{name}.onnx", name, Options())
        assert [o.name for o in r.framework] == [
            "mul_output_0" if name == "scale_half" else "add_out_0"
        ]
        if name == "scale_half":
            assert r.status == "ok" and r.framework[0].passed
        else:
            assert r.status == "validation-failed" and not r.framework[0].passed
            assert "against expected outputs sqrt_plus.expected.npz" in r.message


def test_report_round_trips_and_checks_its_version(root, tmp_path):
    records = [zoo.run_model(root / "fixtures" / "complex_relu.onnx", tmp_path / "r.onnx",
                             "r.onnx", Options())]  # fmt: skip
    data = json.loads(json.dumps(zoo.to_json(records, root, Options(), 0.1)))
    assert zoo.records_from_json(data) == records
    assert data["summary"]["by_status"]["unsupported"] == 1
    data["schema_version"] = 99
    with pytest.raises(DecomplexError, match="schema version 99"):
        zoo.records_from_json(data)


def test_a_models_shard_is_the_documented_hash_of_its_path():
    for rel in ["a.onnx", "jax2onnx/fft.onnx", "deep/er/m\u00e9.onnx"]:
        for count in (1, 2, 3, 7):
            digest = int(hashlib.sha256(rel.encode()).hexdigest(), 16)
            assert zoo.shard_of(rel, count) == digest % count + 1
    assert zoo.shard_of("complex_io.onnx", 3) == 1 and zoo.shard_of("beamformer.onnx", 3) == 3


def _shards(folder, count):
    return [zoo.find_models(folder, shard=zoo.Shard(k, count)) for k in range(1, count + 1)]


def test_the_shards_partition_the_folder_and_keep_their_models_as_models_are_added(tmp_path):
    def add(names):
        for name in names:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_bytes(b"")

    add(f"d{i % 3}/m{i}.onnx" for i in range(0, 40, 2))
    before = _shards(tmp_path, 3)
    assert sorted(p for part in before for p in part) == zoo.find_models(tmp_path)
    assert all(before)  # each shard gets some
    add(f"d{i % 3}/m{i}.onnx" for i in range(1, 40, 2))  # models sorted between the others
    after = _shards(tmp_path, 3)
    assert sorted(p for part in after for p in part) == zoo.find_models(tmp_path)
    for old, new in zip(before, after, strict=True):
        assert set(old) <= set(new)


@pytest.mark.parametrize(
    ("text", "why"),
    [("0/3", "numbered from 1"), ("4/3", "K must be 1 to N"), ("a/b", "is not K/N"),
     ("3", "is not K/N"), ("1/0", "K must be 1 to N"), ("-1/3", "is not K/N"), ("", "not K/N")],
)  # fmt: skip
def test_malformed_shards(text, why):
    with pytest.raises(ValueError, match=why):
        zoo.Shard.parse(text)


def test_shard_parses_and_prints_as_k_of_n():
    assert zoo.Shard.parse("2/5") == zoo.Shard(2, 5) and str(zoo.Shard(2, 5)) == "2/5"


def test_a_shards_report_records_the_shard(root, tmp_path):
    data = zoo.to_json([], root, Options(), 0.1, zoo.Shard(2, 3))
    assert data["shard"] == {"index": 2, "count": 3} and data["models"] == []
    assert zoo.to_json([], root, Options(), 0.1)["shard"] is None
