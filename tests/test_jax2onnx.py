"""Real jax2onnx exports (fixtures/jax2onnx, made by make_jax2onnx.py): each one
converts, runs in onnxruntime and matches JAX's own outputs, saved beside it.

Most of them cannot run as exported: typed-complex values read as packed, I/O
declared packed, pairs stacked on axis 0, or no complex type at all while the
graph computes on packed values. One is a valid real graph that computes
something else than JAX did; only JAX's outputs can show it, and they must.
"""

import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx.reference import ReferenceEvaluator
from onnx_decomplex.cli.exits import EXIT_VALIDATION
from onnx_decomplex.cli.main import main

from onnx_decomplex.check import find_complex
from onnx_decomplex.cmath import pack
from onnx_decomplex.pipeline import Files, convert_file
from onnx_decomplex.targets.common.lowering import holds
from onnx_decomplex.targets.common.transforms import TRANSFORM_OPS

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "jax2onnx"
NAMES = sorted(p.stem for p in CORPUS.glob("*.onnx"))

WRONG = {"sqrt_plus", "log_of_sum"}
"""Valid real graphs that compute something else than JAX: a real Sqrt (Log) of the
packed inputs (their sum) gives NaN where JAX takes a complex root (logarithm).
Nothing in the graph says those inputs are complex."""

REFUSED = {"cumprod": "node_CumProd_0"}
"""Exports refused in one line, by the node named: jax2onnx 0.17.1 writes a CumProd op,
which no opset has."""

AS_WRITTEN = {
    "add", "angle", "broadcast_mul", "conj", "div", "dot", "fft", "fft_and_signal",
    "fft_low_bins", "fft_phase", "fft_rolled", "fft_shifted", "ifft", "ifft_real", "imag",
    "irfft", "lax_complex", "matmul_inputs", "matmul_real_weight", "mul", "mul_conj_self",
    "real", "real_imag_stack", "rfft", "rfft_padded", "stack_parts_axis0", "sub", "vdot",
    "vdot_self", *WRONG,
}  # fmt: skip
"""Exports with no complex type whose graph reads consistently as packed real: they are
right on packed inputs, and pass through unchanged unless they hold a DFT (complex values
in ONNX's own packed layout), which the default target lowers."""

NATIVE = {"abs", "abs_squared", "argmax_magnitude", "mean_power", "softmax_of_abs", "tanh"}
"""Exports that are valid native-complex models already: rewritten as they are."""


def _files(name):
    return CORPUS / f"{name}.onnx", CORPUS / f"{name}.npz", CORPUS / f"{name}.expected.npz"


def _convert(name, tmp_path, files=None, **kw):
    files = files or {}
    src, inputs, expected = _files(name)
    out = tmp_path / f"{name}.onnx"
    return convert_file(src, out, files=Files(inputs=inputs, expected=expected, **files), **kw), out


def test_the_corpus_covers_what_users_export():
    assert len(NAMES) >= 160
    for must in ("rope_llama", "rope_polar", "beamformer", "complex_mlp", "fno", "s4d",
                 "complex_conv", "scale_half", "phasor", "packed_imag_square", "pow_complex",
                 "fori_loop", "while_norm"):  # fmt: skip
        assert must in NAMES


def _runs_as_exported(name) -> bool:
    """True when onnxruntime runs the export as written and matches JAX."""
    src, inputs, expected = _files(name)
    try:
        session = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    except Exception:
        return False
    declared = {i.name: i.type for i in session.get_inputs()}
    feeds = {k: pack(v) if np.iscomplexobj(v) and declared[k] == "tensor(float)" else v
             for k, v in np.load(inputs).items()}  # fmt: skip
    try:
        got = session.run(None, feeds)
    except Exception:
        return False
    want = [np.load(expected)[o.name] for o in session.get_outputs()]
    for g, w in zip(got, want, strict=True):
        w = pack(w) if np.iscomplexobj(w) else w
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5):
            return False
    return True


def test_most_exports_cannot_run_as_written():
    broken = [n for n in NAMES if not _runs_as_exported(n)]
    assert set(NAMES) - set(broken) == AS_WRITTEN - WRONG
    assert len(broken) >= 120


@pytest.mark.parametrize("name", sorted(set(NAMES) - WRONG - set(REFUSED)))
def test_export_converts_and_matches_jax(name, tmp_path):
    result, out = _convert(name, tmp_path)
    assert result.ok
    assert result.framework is not None and result.framework.passed, result.framework.outputs
    assert [o.name for o in result.framework.outputs] == [
        o.name for o in onnx.load(_files(name)[0]).graph.output
    ]
    model = onnx.load(out)
    assert find_complex(model) == []
    if name in AS_WRITTEN and holds(onnx.load(_files(name)[0]), TRANSFORM_OPS):
        # Its DFTs as accurate MatMuls, the rest as written, checked against the reference.
        assert result.report.changed and result.validation.passed
        assert not holds(model, TRANSFORM_OPS)
        return
    if name in AS_WRITTEN:
        # Copied as it is, labels and all (some of jax2onnx's fail strict inference).
        assert not result.report.changed and result.validation is None
        assert out.read_bytes() == _files(name)[0].read_bytes()
        return
    onnx.checker.check_model(model, full_check=True)
    # The rewrite also matches the reference run of the native-complex model.
    assert (result.report.normalized is None) == (name in NATIVE)
    assert result.validation.passed
    # Graph inputs and outputs keep their names and their declared (packed) shapes.
    original = onnx.load(_files(name)[0])
    for before, after in ((original.graph.input, model.graph.input),
                          (original.graph.output, model.graph.output)):  # fmt: skip
        assert [v.name for v in before] == [v.name for v in after]
        for b, a in zip(before, after, strict=True):
            if b.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
                continue
            dims = [d.dim_value for d in b.type.tensor_type.shape.dim]
            if f"output '{b.name}' (declared {dims}, complex)" in result.report.packed_io:
                dims.append(2)  # declared by its logical shape: written packed
            assert [d.dim_value for d in a.type.tensor_type.shape.dim] == dims


def test_normalized_model_is_the_native_complex_model(tmp_path):
    """What --save-normalized writes: typed complex I/O, runnable by onnx.reference."""
    normalized = tmp_path / "add_real.native.onnx"
    result, _ = _convert("add_real", tmp_path, files={"normalized": normalized})
    model = onnx.load(normalized)
    (z, x), (y,) = model.graph.input, model.graph.output
    # Declared float[3, 4, 2] and added to a complex value: the packed declaration.
    assert z.type.tensor_type.elem_type == onnx.TensorProto.COMPLEX64
    assert x.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert y.type.tensor_type.elem_type == onnx.TensorProto.COMPLEX64
    for v in (z, x, y):
        assert [d.dim_value for d in v.type.tensor_type.shape.dim] == [3, 4]
    assert result.report.packed_io == ["input 'in_0'", "output 'add_out_0'"]
    assert normalized in result.written
    feeds = dict(np.load(_files("add_real")[1]))
    (got,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_allclose(got, np.load(_files("add_real")[2])["add_out_0"], rtol=1e-6)


def test_axis0_pairs_are_read_and_reported(tmp_path):
    result, _ = _convert("scale_half", tmp_path)
    assert result.report.axis0 == ["node_Concat_12"] and result.framework.passed


@pytest.mark.parametrize("name", sorted(WRONG))
def test_valid_export_that_computes_something_else_fails(name, tmp_path):
    result, _ = _convert(name, tmp_path)
    assert not result.report.changed  # nothing in the graph says it is wrong
    assert not result.ok and not result.framework.passed


def test_cli_exits_3_naming_the_output_that_differs_from_jax(tmp_path):
    src, inputs, expected = _files("sqrt_plus")
    result = CliRunner().invoke(
        main,
        [
            str(src),
            str(tmp_path / "o.onnx"),
            "--load-inputs",
            str(inputs),
            "--expected-outputs",
            str(expected),
        ],  # fmt: skip
        catch_exceptions=False,
    )
    assert result.exit_code == EXIT_VALIDATION
    assert "FAILED add_out_0" in result.output
    assert "add_out_0 (against expected outputs sqrt_plus.expected.npz)" in result.stderr
    # Beside the model, its inputs and JAX's outputs are read without being named.
    beside = CliRunner().invoke(main, [str(src), str(tmp_path / "b.onnx")])
    assert beside.exit_code == EXIT_VALIDATION
    assert "expected outputs: " in beside.stdout and "FAILED add_out_0" in beside.stdout
    # Without JAX's outputs nothing can tell: the export is valid and runs.
    alone = shutil.copy(src, tmp_path / "alone.onnx")
    plain = CliRunner().invoke(main, [str(alone), str(tmp_path / "p.onnx")])
    assert plain.exit_code == 0


def test_expected_outputs_need_their_inputs(tmp_path):
    model, _, expected = _files("scale_half")
    src = shutil.copy(model, tmp_path / "scale_half.onnx")  # no inputs beside it
    result = CliRunner().invoke(
        main, [str(src), str(tmp_path / "o.onnx"), "--expected-outputs", str(expected)]
    )
    assert result.exit_code == 1 and "--load-inputs" in result.stderr
    assert not (tmp_path / "o.onnx").exists()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_invalid_export_is_refused_in_one_line_naming_the_node(name, tmp_path):
    src, inputs, expected = _files(name)
    out = tmp_path / "o.onnx"
    result = CliRunner().invoke(
        main,
        [str(src), str(out), "--load-inputs", str(inputs), "--expected-outputs", str(expected)],
    )
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert str(src) in line and REFUSED[name] in line
    assert list(tmp_path.iterdir()) == []


def test_the_normalized_model_cannot_be_written_over_out(tmp_path):
    src = _files("scale_half")[0]
    out = tmp_path / "o.onnx"
    result = CliRunner().invoke(main, [str(src), str(out), "--save-normalized", str(out)])
    assert result.exit_code == 1 and "the normalized model is the output too" in result.stderr
    assert list(tmp_path.iterdir()) == []
