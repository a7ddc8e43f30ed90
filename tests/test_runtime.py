"""The I/O contract recorded in every output model, and `Session`, which runs it on
complex arrays: for every fixture and every exporter corpus, what it returns is what
the original model computes."""

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from helpers import make_model, vi
from onnx import helper
from onnx_decomplex.cli.main import main

from onnx_decomplex import Session, decomplex, pack, read_contract, unpack, validate
from onnx_decomplex.contract import KEY, Contract, Packed, record
from onnx_decomplex.errors import DecomplexError
from onnx_decomplex.graphs import graphs_in
from onnx_decomplex.pipeline import Files, convert_file
from onnx_decomplex.reference import evaluator

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORPORA = ["jax2onnx", "tf2onnx", "torch"]
MODELS = sorted(
    [p.relative_to(FIXTURES).as_posix() for p in FIXTURES.glob("*.onnx")]
    + [p.relative_to(FIXTURES).as_posix() for c in CORPORA for p in (FIXTURES / c).glob("*.onnx")]
)
NOT_CONVERTED = {
    "complex_relu.onnx",  # Relu of a complex value has no meaning: refused
    "jax2onnx/cumprod.onnx",  # a CumProd op, which no opset has: refused
    "jax2onnx/sqrt_plus.onnx",  # valid real graphs that compute something else than
    "jax2onnx/log_of_sum.onnx",  # their framework did: the framework's outputs fail them
    "tf2onnx/pad.onnx",
    "tf2onnx/irfft_length.onnx",
}
"""Models whose own tests show why no output is written for them."""

C64, C128 = np.complex64, np.complex128
RNG = np.random.default_rng(0)


def _crandn(shape, dtype=C64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


# pack and unpack


@pytest.mark.parametrize("dtype", [C64, C128])
def test_pack_takes_any_layout(dtype):
    z = _crandn((3, 4, 5), dtype)
    for view in (z, z.T, z[:, ::2], z[1], np.asfortranarray(z), z[0, 0, 0]):
        packed = pack(view)
        assert packed.shape == (*np.shape(view), 2) and packed.flags.c_contiguous
        assert packed.dtype == (np.float32 if dtype == C64 else np.float64)
        np.testing.assert_array_equal(packed[..., 0], np.real(view))
        np.testing.assert_array_equal(packed[..., 1], np.imag(view))
        np.testing.assert_array_equal(unpack(packed), view)


def test_pack_of_contiguous_complex64_is_the_float32_view():
    z = _crandn((2, 3))
    packed = pack(z)
    assert np.shares_memory(packed, z)
    np.testing.assert_array_equal(packed.reshape(2, 6), z.view(np.float32))


def test_pack_and_unpack_take_a_dtype():
    z = _crandn((4,), C128)
    narrow = pack(z, np.float32)
    assert narrow.dtype == np.float32
    back = unpack(narrow, C128)
    assert back.dtype == C128 and np.allclose(back, z, rtol=1e-6)
    np.testing.assert_array_equal(pack(np.array([1.5, -2.0])), [[1.5, 0.0], [-2.0, 0.0]])
    with pytest.raises(ValueError, match="axis of 2"):
        unpack(np.zeros((3, 4), np.float32))


# The contract in the model


def _mul_model(dtype=C64):
    """y = x * w and a real output r = |x|, x and w complex inputs."""
    return make_model(
        [helper.make_node("Mul", ["x", "w"], ["y"]), helper.make_node("Abs", ["x"], ["r"])],
        [vi("x", dtype, ["batch", 4]), vi("w", dtype, [4]), vi("t", np.float32, [2])],
        [vi("y", dtype, ["batch", 4]), vi("r", np.float32 if dtype == C64 else np.float64, None)],
    )


def test_the_contract_names_each_packed_input_and_output():
    out, report = decomplex(_mul_model())
    contract = read_contract(out)
    assert contract == report.contract and contract.target == "onnx"
    assert [p.name for p in contract.inputs] == ["x", "w"]
    assert [p.name for p in contract.outputs] == ["y"]
    x = contract.inputs[0]
    assert (x.dtype, x.shape, x.packed_dtype, x.packed_shape, x.narrowed) == (
        "complex64",
        ["batch", 4],
        "float32",
        ["batch", 4, 2],
        False,
    )
    docs = {v.name: v.doc_string for v in [*out.graph.input, *out.graph.output]}
    assert docs["x"].startswith("onnx-decomplex: complex64[batch,4] packed as float32[batch,4,2]")
    assert docs["t"] == "" and docs["r"] == ""
    rows = {(r.kind, r.name): (r.before, r.after) for r in report.io}
    assert rows[("input", "x")] == ("complex64[batch,4]", "float32[batch,4,2]")
    assert rows[("input", "t")] == ("float32[2]", "float32[2]")


def test_the_contract_is_json_with_a_version():
    out, _ = decomplex(_mul_model())
    (entry,) = [p for p in out.metadata_props if p.key == KEY]
    body = json.loads(entry.value)
    assert body["format"] == KEY and body["version"] == 1
    assert body["layout"] == "last axis of size 2: real, imaginary"
    entry.value = entry.value.replace('"version":1', '"version":7')
    with pytest.raises(DecomplexError, match="version 7"):
        read_contract(out)
    entry.value = "{not json"
    with pytest.raises(DecomplexError, match="cannot read"):
        read_contract(out)


def test_a_narrowed_model_says_so():
    out, report = decomplex(_mul_model(C128), target="tensorrt")
    x = report.contract.inputs[0]
    assert (x.dtype, x.packed_dtype, x.narrowed) == ("complex128", "float32", True)
    assert report.contract.target == "tensorrt"
    assert "narrowed from float64" in out.graph.input[0].doc_string


def test_no_complex_value_no_contract(tmp_path):
    model = make_model(
        [helper.make_node("Neg", ["a"], ["b"])],
        [vi("a", np.float32, [2])],
        [vi("b", np.float32, [2])],
    )
    out, report = decomplex(model)
    assert not report.contract and read_contract(out) is None
    assert [r.after for r in report.io] == ["float32[2]", "float32[2]"]


def test_recording_again_replaces_the_entry():
    out, report = decomplex(_mul_model())
    record(out, Contract(target="tensorrt", inputs=report.contract.inputs))
    assert [p.key for p in out.metadata_props].count(KEY) == 1
    assert read_contract(out).target == "tensorrt" and read_contract(out).outputs == []


# Session


def test_session_runs_complex_arrays_of_any_layout():
    model = _mul_model()
    out, _ = decomplex(model)
    x, w = _crandn((4, 3)).T, _crandn((8,))[::2]  # transposed and strided
    session = Session(out, providers=["CPUExecutionProvider"])
    feeds = {"x": x, "w": w, "t": np.zeros(2, np.float32)}
    y, r = session.run(None, feeds)
    expected = evaluator(model).run(None, {k: np.ascontiguousarray(v) for k, v in feeds.items()})
    assert y.dtype == C64 and r.dtype == np.float32
    np.testing.assert_allclose(y, expected[0], rtol=1e-5)
    np.testing.assert_allclose(r, expected[1], rtol=1e-5)
    (only_r,) = session.run(["r"], feeds)
    np.testing.assert_allclose(only_r, r)
    # Already packed arrays pass as they are.
    (y2,) = session.run(["y"], {"x": pack(x), "w": pack(w), "t": feeds["t"]})
    np.testing.assert_array_equal(y2, y)
    # The rest is onnxruntime's own.
    assert [i.name for i in session.get_inputs()] == ["x", "w", "t"]
    assert session.get_providers() == ["CPUExecutionProvider"]


def test_session_casts_a_narrowed_model_in_and_out():
    model = _mul_model(C128)
    out, _ = decomplex(model, target="tensorrt")
    assert out.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    feeds = {"x": _crandn((3, 4), C128), "w": _crandn((4,), C128), "t": np.zeros(2, np.float32)}
    y, _ = Session(out, providers=["CPUExecutionProvider"]).run(None, feeds)
    assert y.dtype == C128
    np.testing.assert_allclose(y, feeds["x"] * feeds["w"], rtol=1e-5)


@pytest.mark.parametrize("name", ["rfft_f64", "complex_f64"])
def test_session_casts_narrowed_real_inputs(name, root):
    """A model made for TensorRT narrowed its real float64 inputs too: Session takes the
    caller's float64 arrays for them, as it takes complex128 ones."""
    folder = root / "fixtures" / "tf2onnx"
    model = onnx.load(folder / f"{name}.onnx")
    out, _ = decomplex(model, target="tensorrt")
    feeds = dict(np.load(folder / f"{name}.npz"))
    assert any(v.dtype == np.float64 for v in feeds.values())
    got = Session(out, providers=["CPUExecutionProvider"]).run(None, feeds)
    want = np.load(folder / f"{name}.expected.npz")
    for o, g in zip(out.graph.output, got, strict=True):
        np.testing.assert_allclose(g, want[o.name], rtol=1e-4, atol=1e-5)


def test_session_of_a_model_with_no_contract_is_onnxruntime(tmp_path):
    model = make_model(
        [helper.make_node("Neg", ["a"], ["b"])],
        [vi("a", np.float32, [2])],
        [vi("b", np.float32, [2])],
    )
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    session = Session(path, providers=["CPUExecutionProvider"])
    assert session.contract is None
    a = np.array([1.0, -2.0], np.float32)
    plain = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(session.run(None, {"a": a})[0], plain.run(None, {"a": a})[0])


def test_session_passes_onnxruntime_options(tmp_path):
    out, _ = decomplex(_mul_model())
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = Session(out, providers=["CPUExecutionProvider"], sess_options=options)
    assert session.contract.inputs


def _session_runner(session: Session, contract: Contract):
    """Runs `session` on complex arrays made from validation's packed feeds, and packs
    its complex outputs back, for `validate`'s comparison."""
    packed_inputs = {p.name: p for p in contract.inputs}
    packed_outputs = {p.name for p in contract.outputs}
    names = [o.name for o in session.get_outputs()]

    def run(packed: dict) -> list[np.ndarray]:
        feeds = {}
        for name, value in packed.items():
            entry = packed_inputs.get(name)
            feeds[name] = value if entry is None else unpack(value, entry.complex_dtype)
        outputs = session.run(names, feeds)
        return [pack(v) if n in packed_outputs else v for n, v in zip(names, outputs, strict=True)]

    return run


@pytest.mark.parametrize("name", MODELS)
def test_every_model_runs_in_a_session_and_keeps_its_contract(name, tmp_path):
    src = FIXTURES / name
    inputs, expected = src.with_suffix(".npz"), src.parent / f"{src.stem}.expected.npz"
    out = tmp_path / "out.onnx"
    try:
        result = convert_file(
            src, out,
            files=Files(
                inputs=inputs if inputs.exists() else None,
                expected=expected if expected.exists() else None,
            ),
        )  # fmt: skip
    except DecomplexError:
        assert name in NOT_CONVERTED
        return
    if not result.ok:
        assert name in NOT_CONVERTED
        return
    assert name not in NOT_CONVERTED
    # The default target, onnx, brings in no op outside the standard domain.
    written = onnx.load(out, load_external_data=False)
    domains = {n.domain for g in graphs_in(written.graph) for n in g.node}
    source = onnx.load(src, load_external_data=False)
    assert domains <= {"", "ai.onnx"} | {n.domain for g in graphs_in(source.graph) for n in g.node}
    # The metadata round-trips through the written file.
    contract = read_contract(out) or Contract()
    assert contract == result.report.contract
    for kind, entries in (("input", contract.inputs), ("output", contract.outputs)):
        declared = {v.name: v for v in getattr(written.graph, kind)}
        for p in entries:
            dims = declared[p.name].type.tensor_type.shape.dim
            assert [d.dim_value or d.dim_param or None for d in dims] == p.packed_shape
            assert declared[p.name].doc_string == p.describe()
    # Session on complex arrays computes what the comparisons that passed computed.
    session = Session(out, providers=["CPUExecutionProvider"])
    native = result.report.normalized or onnx.load(src)
    atol, rtol = result.tolerances
    for v in (result.validation, result.framework):
        if v is None:
            continue
        again = validate(
            native, None, result.feeds, expected=v.expected, atol=atol, rtol=rtol,
            runner=_session_runner(session, contract),
        )  # fmt: skip
        assert again.passed, again.outputs


@pytest.mark.parametrize("target", ["onnx", "onnxruntime", "tensorrt"])
@pytest.mark.parametrize(
    "name",
    [m for m in MODELS if "/" not in m and m not in NOT_CONVERTED and m != "no_complex.onnx"],
)
def test_every_fixture_matches_the_reference_for_every_target(name, target):
    model = onnx.load(FIXTURES / name)
    out, report = decomplex(model, target=target)
    assert report.contract.target == target
    onnx.checker.check_model(out, full_check=True)
    result = validate(model, out, atol=1e-4 if target == "tensorrt" else 1e-5)
    assert result.passed, result.outputs


def test_the_models_swept_include_every_corpus():
    assert {m.split("/")[0] for m in MODELS if "/" in m} == set(CORPORA)
    assert set(MODELS) >= NOT_CONVERTED


def test_packed_entries_describe_themselves():
    p = Packed("z", "complex128", [None, 3], "float32", [None, 3, 2], narrowed=True)
    assert p.describe() == (
        "onnx-decomplex: complex128[?,3] packed as float32[?,3,2], the last axis holding "
        "(real, imaginary), narrowed from float64"
    )


# The CLI shows the contract


def test_the_cli_prints_every_input_and_output(tmp_path):
    out = tmp_path / "out.onnx"
    result = CliRunner().invoke(main, [str(FIXTURES / "rope_freqs_input.onnx"), str(out)])
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["input", "freqs_cis", "complex64[seq,16]", "->", "float32[seq,16,2]"] in rows
    assert ["input", "xq", "float32[batch,seq,4,32]", "->", "float32[batch,seq,4,32]"] in rows
    assert ["output", "xq_out", "float32[batch,seq,4,32]", "->", "float32[batch,seq,4,32]"] in rows
    assert read_contract(out).inputs[0].name == "freqs_cis"


def test_the_folder_report_lists_each_models_inputs_and_outputs(tmp_path):
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    for name in ("signal_chain_c128.onnx", "no_complex.onnx"):
        shutil.copy(FIXTURES / name, zoo / name)
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, [str(zoo), str(tmp_path / "out"), "--report", str(report)])
    assert result.exit_code == 0, result.output
    models = {m["path"]: m for m in json.loads(report.read_text())["models"]}
    assert models["signal_chain_c128.onnx"]["io"] == [
        {"kind": "input", "name": "x", "before": "complex128[batch,64]", "after": "float64[batch,64,2]"},
        {"kind": "output", "name": "y", "before": "complex128[batch,16]", "after": "float64[batch,16,2]"},
    ]  # fmt: skip
    assert models["no_complex.onnx"]["io"] == []
