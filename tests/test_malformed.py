"""Malformed inputs, built by hand: each must end in one line that names the file,
a non-zero exit, and nothing written.

Protobuf fields are set directly where the onnx helpers refuse a bad value, and
bytes are patched where protobuf itself would refuse it.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import make_model, vi
from onnx import TensorProto, helper, numpy_helper
from onnx_decomplex.cli.main import main

from onnx_decomplex.errors import LoadError
from onnx_decomplex.files.load import read_model

C64 = np.complex64


def _table_model() -> onnx.ModelProto:
    """y = x * t, with t a complex initializer."""
    t = numpy_helper.from_array((np.arange(6) + 1j).astype(C64).reshape(2, 3), "t")
    return make_model(
        [helper.make_node("Mul", ["x", "t"], ["y"], name="mul")],
        [vi("x", C64, [2, 3])],
        [vi("y", C64, [2, 3])],
        [t],
    )


def _external(folder, model, offset=None, length=None, data=None) -> onnx.ModelProto:
    """Moves initializer t into w.bin, with the offset and length entries given."""
    t = model.graph.initializer[0]
    (folder / "w.bin").write_bytes(t.raw_data if data is None else data)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="w.bin")
    if offset is not None:
        t.external_data.add(key="offset", value=str(offset))
    if length is not None:
        t.external_data.add(key="length", value=str(length))
    return model


def _with(edit):
    def build(folder):
        model = _table_model()
        edit(model)
        return model

    return build


def _cast_to(to):
    def build(folder):
        return make_model(
            [helper.make_node("Cast", ["x"], ["y"], name="cast", to=to)],
            [vi("x", C64, [2])],
            [vi("y", np.float32, [2])],
        )

    return build


def _constant_of_shape(dims, through_constant=False):
    def build(folder):
        shape = numpy_helper.from_array(np.array(dims, np.int64), "s")
        value = helper.make_tensor("v", TensorProto.COMPLEX64, [1], [1 + 1j])
        nodes = [
            helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill", value=value),
            helper.make_node("Mul", ["x", "c"], ["y"]),
        ]
        if through_constant:
            nodes.insert(0, helper.make_node("Constant", [], ["s"], value=shape))
        return make_model(
            nodes,
            [vi("x", C64, [2, 3])],
            [vi("y", C64, [2, 3])],
            [] if through_constant else [shape],
        )

    return build


def _dim_param_not_utf8(folder):
    model = _table_model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    # The field's length-prefixed bytes: tag 0x12 (dim_param), length 1, "N".
    return model.SerializeToString().replace(b"\x12\x01N", b"\x12\x01\xff")


def _initializer_name_not_utf8(folder):
    # TensorProto.name is field 8: tag 0x42, length 1, "t".
    data = _table_model().SerializeToString()
    assert data.count(b"\x42\x01t") == 1
    return data.replace(b"\x42\x01t", b"\x42\x01\xfe")


def _if_model(then_inputs=(), else_outputs=1):
    def build(folder):
        then = helper.make_graph(
            [helper.make_node("Neg", ["x"], ["a"])],
            "then",
            [vi(n, C64, [2]) for n in then_inputs],
            [vi("a", C64, [2])],
        )
        names = [f"e{i}" for i in range(else_outputs)]
        other = helper.make_graph(
            [helper.make_node("Identity", ["x"], [n]) for n in names],
            "else",
            [],
            [vi(n, C64, [2]) for n in names],
        )
        node = helper.make_node(
            "If", ["c"], ["y"], name="branch", then_branch=then, else_branch=other
        )
        return make_model([node], [vi("c", np.bool_, []), vi("x", C64, [2])], [vi("y", C64, [2])])

    return build


def _if_duplicate_output(folder):
    then = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["a"])],
        "then",
        [],
        [vi("a", C64, [2])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e", C64, [2])]
    )
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    return make_model([node], [vi("c", np.bool_, []), vi("x", C64, [2])], [vi("y", C64, [2])])


def _loop_body_inputs(folder):
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [vi("i", np.int64, []), vi("cond_in", np.bool_, [])],
        [vi("cond_out", np.bool_, []), vi("v_out", C64, [2])],
    )
    count = numpy_helper.from_array(np.array(3, np.int64), "M")
    node = helper.make_node("Loop", ["M", "", "x"], ["y"], name="loop", body=body)
    return make_model([node], [vi("x", C64, [2])], [vi("y", C64, [2])], [count])


def _map_output(folder):
    model = make_model(
        [helper.make_node("Identity", ["x"], ["y"])], [vi("x", C64, [2])], [vi("y", C64, [2])]
    )
    value = helper.make_tensor_type_proto(TensorProto.COMPLEX64, [2])
    model.graph.output[0].type.CopyFrom(helper.make_map_type_proto(TensorProto.INT64, value))
    return model


def _constant_external_offset(folder):
    t = numpy_helper.from_array((np.arange(6) + 1j).astype(C64), "cv")
    (folder / "c.bin").write_bytes(t.raw_data)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="c.bin")
    t.external_data.add(key="offset", value="-1")
    nodes = [
        helper.make_node("Constant", [], ["c"], value=t),
        helper.make_node("Mul", ["x", "c"], ["y"]),
    ]
    return make_model(nodes, [vi("x", C64, [6])], [vi("y", C64, [6])])


def _dims(dims):
    def edit(model):
        model.graph.initializer[0].dims[:] = dims

    return edit


def _external_missing(folder):
    model = _external(folder, _table_model())
    (folder / "w.bin").unlink()
    return model


def _elem(v, elem_type):
    v.type.tensor_type.elem_type = elem_type


def _dim(v, value):
    v.type.tensor_type.shape.dim[0].dim_value = value


CASES = {
    "external offset negative": (lambda f: _external(f, _table_model(), -8, 48), "offset '-8'"),
    "external length negative": (lambda f: _external(f, _table_model(), 0, -5), "length '-5'"),
    "external offset not an integer": (lambda f: _external(f, _table_model(), "abc", 48), "'abc'"),
    "external length not an integer": (lambda f: _external(f, _table_model(), 0, "1.5"), "'1.5'"),
    "external offset empty": (lambda f: _external(f, _table_model(), "", 48), "offset ''"),
    "external offset past the end": (lambda f: _external(f, _table_model(), 1000), "too short"),
    "external length past the end": (lambda f: _external(f, _table_model(), 0, 4800), "too short"),
    "external offset huge": (lambda f: _external(f, _table_model(), 2**70, 48), "too short"),
    "external length too small": (lambda f: _external(f, _table_model(), 0, 40), "too small"),
    "external data missing": (_external_missing, "missing"),
    "external offset in a Constant": (_constant_external_offset, "'cv'"),
    "initializer of unknown type": (
        _with(lambda m: setattr(m.graph.initializer[0], "data_type", 99)),
        "99",
    ),
    "input of unknown type": (_with(lambda m: _elem(m.graph.input[0], 99)), "tensor 'x'"),
    "input of undefined type": (
        _with(lambda m: _elem(m.graph.input[0], 0)),
        "unknown element type 0",
    ),
    "output of unknown type": (_with(lambda m: _elem(m.graph.output[0], 77)), "tensor 'y'"),
    "Cast to an unknown type": (_cast_to(99), "node 'cast' (Cast)"),
    "Cast to undefined": (_cast_to(0), "attribute 'to' is 0"),
    "dims larger than the data": (_with(_dims([3, 3])), "too small"),
    "dims negative": (_with(_dims([-2, -3])), "Negative dimension"),
    "dims overflowing": (_with(_dims([2**40, 2**40])), "overflow"),
    "declared dim negative": (_with(lambda m: _dim(m.graph.input[0], -3)), "negative dim -3"),
    "dim_param not UTF-8": (_dim_param_not_utf8, "dim_param is not UTF-8"),
    "initializer name not UTF-8": (_initializer_name_not_utf8, "initializer[0].name"),
    "ConstantOfShape negative": (_constant_of_shape([-2, 3]), "node 'fill' (ConstantOfShape)"),
    "ConstantOfShape negative via Constant": (_constant_of_shape([-2, 3], True), "negative dim"),
    "ConstantOfShape overflowing": (_constant_of_shape([2**40, 2**40]), "would make a value"),
    "ConstantOfShape int64 overflow": (_constant_of_shape([2**62, 2**62]), "would make a value"),
    "If branch names a value twice": (_if_duplicate_output, "'a'"),
    "If branch with inputs": (_if_model(then_inputs=["q"]), "then_branch takes 1 inputs"),
    "If branches of different arity": (_if_model(else_outputs=2), "else_branch makes 2 outputs"),
    "Loop body missing an input": (_loop_body_inputs, "body takes 2 inputs, where 3"),
    "map output": (_map_output, "is a map"),
    "truncated": (lambda f: _table_model().SerializeToString()[:40], "truncated"),
    "empty file": (lambda f: b"", "not an ONNX model"),
}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_one_line_error(result, src, out, *needles):
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code != 0, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and str(src) in lines[0], lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not out.exists(), "an output file was written"


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_model_is_one_line(tmp_path, case):
    build, needle = CASES[case]
    folder = tmp_path / "in"
    folder.mkdir()
    model = build(folder)
    src = folder / "m.onnx"
    src.write_bytes(model if isinstance(model, bytes) else model.SerializeToString())
    out = tmp_path / "out.onnx"
    assert_one_line_error(invoke(src, out), src, out, needle)


def test_library_error_names_file_and_tensor(tmp_path):
    src = tmp_path / "m.onnx"
    src.write_bytes(_external(tmp_path, _table_model(), -8, 48).SerializeToString())
    with pytest.raises(LoadError) as info:
        read_model(src, stream=True)
    assert info.value.file == str(src) and info.value.tensor == "t"


def _constant_on_disk(folder, value: np.ndarray, cast: bool) -> onnx.ModelProto:
    """y = x * c, with c a Constant whose tensor is in c.bin beside the model."""
    t = numpy_helper.from_array(value, "cv")
    (folder / "c.bin").write_bytes(t.raw_data)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="c.bin")
    nodes = [helper.make_node("Constant", [], ["c"], value=t)]
    if cast:
        nodes.append(helper.make_node("Cast", ["c"], ["cc"], to=TensorProto.COMPLEX64))
    nodes.append(helper.make_node("Mul", ["x", "cc" if cast else "c"], ["y"]))
    n = value.shape[0]
    return make_model(nodes, [vi("x", C64, [n])], [vi("y", C64, [n])])


@pytest.mark.parametrize(
    "value, cast",
    [((np.arange(4) + 1j).astype(C64), False), (np.arange(1 << 19, dtype=np.float32), True)],
    ids=["complex", "large real"],
)
def test_constant_data_is_read_beside_the_model(tmp_path, monkeypatch, value, cast):
    folder = tmp_path / "model"
    folder.mkdir()
    src = folder / "m.onnx"
    src.write_bytes(_constant_on_disk(folder, value, cast).SerializeToString())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = invoke(src, tmp_path / "out.onnx")
    assert result.exit_code == 0, result.output
    assert "PASSED y" in result.stdout


def test_sparse_initializers_are_read_as_dense(tmp_path):
    values = numpy_helper.from_array(np.array([1 + 2j, 3j], C64), "t")
    indices = numpy_helper.from_array(np.array([0, 4], np.int64), "t_indices")
    model = make_model(
        [helper.make_node("Mul", ["x", "t"], ["y"])], [vi("x", C64, [2, 3])], [vi("y", C64, [2, 3])]
    )
    model.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [2, 3]))
    src = tmp_path / "m.onnx"
    src.write_bytes(model.SerializeToString())
    loaded, _ = read_model(src)
    assert not loaded.graph.sparse_initializer
    expected = np.zeros(6, C64)
    expected[[0, 4]] = [1 + 2j, 3j]
    dense = numpy_helper.to_array(loaded.graph.initializer[0])
    np.testing.assert_array_equal(dense, expected.reshape(2, 3))
    result = invoke(src, tmp_path / "out.onnx")
    assert result.exit_code == 0, result.output


def _complex_model(folder):
    model = make_model(
        [helper.make_node("Neg", ["z"], ["y"])], [vi("z", C64, [2, 3])], [vi("y", C64, [2, 3])]
    )
    src = folder / "m.onnx"
    src.write_bytes(model.SerializeToString())
    return src


GOOD = np.ones((2, 3), C64)
NPZ_CASES = {
    "strings": ({"z": np.full((2, 3), "a")}, "'z' holds <U1"),
    "bytes": ({"z": np.full((2, 3), b"a")}, "'z' holds |S1"),
    "objects": ({"z": np.array([None, 1], dtype=object)}, "allow_pickle"),
    "dates": ({"z": np.zeros((2, 3), "datetime64[s]")}, "not numbers"),
    "raw bytes": ({"z": np.zeros((2, 3), "V8")}, "not numbers"),
    "records": ({"z": np.zeros((2, 3), [("a", "f4"), ("b", "f4")])}, "not numbers"),
    "saved output of strings": ({"z": GOOD, "expected": np.array(["x"])}, "'expected' holds"),
    "saved output of objects": ({"z": GOOD, "expected": np.array([None], dtype=object)}, "pickle"),
}


@pytest.mark.parametrize("case", list(NPZ_CASES))
def test_an_inputs_file_of_the_wrong_kind_is_one_line(tmp_path, case):
    arrays, needle = NPZ_CASES[case]
    src = _complex_model(tmp_path)
    npz = tmp_path / "in.npz"
    np.savez(npz, **arrays)
    out = tmp_path / "out.onnx"
    result = invoke(src, out, "--load-inputs", npz)
    assert_one_line_error(result, src, out, str(npz), needle)


@pytest.mark.parametrize(
    "arrays, needle",
    [({"y": np.array(["x"])}, "'y' holds <U1"), ({"y": np.zeros(3, "datetime64[s]")}, "numbers")],
)
def test_expected_outputs_of_the_wrong_kind_are_one_line(tmp_path, arrays, needle):
    src = _complex_model(tmp_path)
    np.savez(tmp_path / "in.npz", z=GOOD)
    np.savez(tmp_path / "exp.npz", **arrays)
    out = tmp_path / "out.onnx"
    args = ["--load-inputs", tmp_path / "in.npz", "--expected-outputs", tmp_path / "exp.npz"]
    assert_one_line_error(invoke(src, out, *args), src, out, "exp.npz", needle)


def test_an_npy_file_is_not_an_inputs_file(tmp_path):
    src = _complex_model(tmp_path)
    np.save(tmp_path / "in.npy", GOOD)
    out = tmp_path / "out.onnx"
    result = invoke(src, out, "--load-inputs", tmp_path / "in.npy")
    assert_one_line_error(result, src, out, "not an .npz archive")


def test_inputs_too_large_to_make_are_one_line(tmp_path):
    model = make_model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [vi("x", C64, [2**40, 2**40])],
        [vi("y", C64, [2**40, 2**40])],
    )
    src = tmp_path / "m.onnx"
    src.write_bytes(model.SerializeToString())
    out = tmp_path / "out.onnx"
    assert_one_line_error(invoke(src, out), src, out, "tensor 'x'", "cannot make a random input")


def test_a_baseline_that_is_a_list_is_one_line(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    _complex_model(folder)
    baseline = tmp_path / "b.json"
    baseline.write_text("[]")
    out = tmp_path / "out"
    assert_one_line_error(invoke(folder, out, "--baseline", baseline), baseline, out, "a list")
