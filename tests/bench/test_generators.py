"""The large-graph and large-model generators, at tiny sizes: valid models that the
tool converts, and the checks the benchmarks make on what it writes.

No timing or memory is asserted here: `make bench` measures them.
"""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import large as LARGE
import numpy as np
import onnx
import onnx_graphsurgeon as gs
import onnxruntime as ort
import phases as PHASES
import pytest
import stack as STACK
from onnx.reference import ReferenceEvaluator

from onnx_decomplex import decomplex
from onnx_decomplex.check import find_complex
from onnx_decomplex.pipeline import convert_file


def test_stack_scales_by_layers_and_converts():
    one, three = STACK.make_stack(1), STACK.make_stack(3)
    assert len(three.graph.node) - len(one.graph.node) == 2 * STACK.NODES_PER_LAYER
    assert STACK.layers_for(18000) * STACK.NODES_PER_LAYER == 18000
    onnx.checker.check_model(three)
    out, report = decomplex(three)
    assert not find_complex(out) and report.rewritten > 0
    x = np.random.default_rng(0).standard_normal((2, STACK.SEQ, STACK.HIDDEN)).astype(np.float32)
    sess = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, {"x": x})
    with pytest.warns(np.exceptions.ComplexWarning):  # Cast to real takes the real part
        (want,) = ReferenceEvaluator(three).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_the_stack_takes_each_whole_graph_step_once(monkeypatch, tmp_path):
    """What keeps a large graph near one graphsurgeon round trip: one import and one
    export, no cleanup or sort of a sorted graph, graphsurgeon's map of the graph's
    tensors built once besides the export's own, and shape inference and the checker
    once on the input and once on the result."""
    steps = Counter()

    def counted(owner, attr: str) -> None:
        step = getattr(owner, attr)

        def wrapper(*args, **kwargs):
            steps[attr] += 1
            return step(*args, **kwargs)

        monkeypatch.setattr(owner, attr, wrapper)

    for owner, attr in [
        (gs, "import_onnx"),
        (gs, "export_onnx"),
        (gs.Graph, "toposort"),
        (gs.Graph, "cleanup"),
        (gs.Graph, "tensors"),
        (onnx.shape_inference, "infer_shapes"),
        (onnx.checker, "check_model"),
    ]:
        counted(owner, attr)
    onnx.save(STACK.make_stack(3), str(tmp_path / "stack.onnx"))
    assert convert_file(tmp_path / "stack.onnx", tmp_path / "out.onnx", validate=False).ok
    assert steps == {"import_onnx": 1, "export_onnx": 1, "tensors": 2, "infer_shapes": 2,
                     "check_model": 2}  # fmt: skip


def test_stack_measure_runs_both_sides(tmp_path):
    m = STACK.measure(tmp_path, 150, repeats=1, library=False)
    assert m["nodes"] == 151 and m["tool_s"] > 0 and m["base_s"] > 0


def test_large_model_is_streamed_to_disk_and_converts(tmp_path):
    path = LARGE.make_large(tmp_path, weights_mib=1, table_mib=1)
    data = tmp_path / "large.onnx.data"
    assert data.stat().st_size == 2 * 2**20
    onnx.checker.check_model(str(path))
    model = onnx.load(str(path), load_external_data=False)
    assert model.ByteSize() < 4096  # every weight is in the data file
    out = tmp_path / "out" / "tool.onnx"
    out.parent.mkdir()
    run = LARGE.run_capped([*LARGE.CLI, str(path), str(out), "--no-validate", "-q"], 4 << 30)
    assert run["rc"] == 0, run["error"]
    assert run["peak_mib"] > 0
    LARGE.check_table(path, out)


def test_a_failure_under_the_cap_is_reported(tmp_path):
    hog = "import numpy; numpy.ones(1 << 31)"
    run = LARGE.run_capped([sys.executable, "-c", hog], 1 << 30)
    assert run["rc"] != 0 and "MemoryError" in run["error"]


def test_phases_prints_each_step_and_its_call_site(tmp_path):
    onnx.save(STACK.make_stack(2), str(tmp_path / "stack.onnx"))
    script = Path(PHASES.__file__)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "stack.onnx"), "--memory"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert "gs.import_onnx" in proc.stdout and "onnx_decomplex/passes/analyze.py:" in proc.stdout
    assert "< pass rewrite rss" in proc.stdout
